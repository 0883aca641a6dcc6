// Package shapes is a fixture for the outline golden test.
package shapes

import (
	"fmt"
	"io"
)

// Version is the fixture's version.
const Version = "1.0"

const (
	// Small is a size.
	Small Size = iota
	Large      // the big one
)

var registry = map[string]Shape{}

// Size says how big a shape is.
type Size int

// Shape is anything with an area.
type Shape interface {
	// Area returns the area.
	Area() float64
	fmt.Stringer
}

// Rect is a rectangle.
type Rect struct {
	W, H float64 // sides
	// Label names it.
	Label string
	io.Writer
}

// Area returns W×H.
func (r *Rect) Area() float64 {
	if r == nil {
		return 0
	}
	return r.W * r.H
}

func (r Rect) String() string { return fmt.Sprintf("%s %vx%v", r.Label, r.W, r.H) }

// Pair holds two values.
type Pair[K comparable, V any] struct {
	Key K
	Val V
}

// Get returns the value.
func (p Pair[K, V]) Get() V { return p.Val }

// Register adds a shape under a name and reports
// whether it replaced one.
func Register(name string, s Shape) (replaced bool) {
	_, replaced = registry[name]
	registry[name] = s
	return replaced
}

type (
	// Handler handles.
	Handler func(Shape) error
	Alias   = Rect
)
