package read

import (
	"regexp"
	"sync"
)

// Pattern is a regular expression compiled on first use: the hook binary
// links the learning packages but never reads a transcript, and compiling
// every rule at start-up cost it about 9 ms per SessionEnd.
type Pattern struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

// Lazy returns the Pattern of src; it panics on first use if src does not
// compile, as regexp.MustCompile does.
func Lazy(src string) *Pattern { return &Pattern{src: src} }

func (p *Pattern) get() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.src) })
	return p.re
}

// MatchString is regexp.Regexp.MatchString.
func (p *Pattern) MatchString(s string) bool { return p.get().MatchString(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (p *Pattern) ReplaceAllString(s, repl string) string { return p.get().ReplaceAllString(s, repl) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (p *Pattern) FindStringSubmatch(s string) []string { return p.get().FindStringSubmatch(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (p *Pattern) FindStringIndex(s string) []int { return p.get().FindStringIndex(s) }

// Split is regexp.Regexp.Split.
func (p *Pattern) Split(s string, n int) []string { return p.get().Split(s, n) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (p *Pattern) FindAllStringIndex(s string, n int) [][]int {
	return p.get().FindAllStringIndex(s, n)
}

func lazy(src string) *Pattern { return Lazy(src) }
