// Package hint is the error type synaxi's commands use to say what the
// user can do about a problem. The hint is a value beside the error, never
// part of its text: Error() is the one line that says what is wrong, and
// whoever prints it (internal/cmdline.Fail for a command, install's
// warnings, a doctor check) prints each hint on a `hint:` line under it.
//
// Wrapping keeps the hints: fmt.Errorf("context: %w", err) around an
// *Error still carries them, and Hints finds every hint in the chain.
package hint

import (
	"errors"
	"fmt"
	"io"
)

// Error is an error with what to do about it.
type Error struct {
	Err   error
	Hints []string // each one thing the user can do, in the order to try them
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Wrap attaches hints to err; nil stays nil, and no hints leave err as it is.
func Wrap(err error, hints ...string) error {
	if err == nil || len(hints) == 0 {
		return err
	}
	return &Error{Err: err, Hints: hints}
}

// New is an *Error whose text is msg.
func New(msg string, hints ...string) *Error {
	return &Error{Err: errors.New(msg), Hints: hints}
}

// Errorf is an *Error whose text is fmt.Errorf(format, a...), with one hint.
func Errorf(hint, format string, a ...any) *Error {
	return &Error{Err: fmt.Errorf(format, a...), Hints: []string{hint}}
}

// Hints is every hint in err's chain, outermost first, each once.
func Hints(err error) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		for err != nil {
			if h, ok := err.(*Error); ok {
				for _, s := range h.Hints {
					if s != "" && !seen[s] {
						seen[s] = true
						out = append(out, s)
					}
				}
			}
			switch u := err.(type) {
			case interface{ Unwrap() []error }:
				for _, e := range u.Unwrap() {
					walk(e)
				}
				return
			case interface{ Unwrap() error }:
				err = u.Unwrap()
			default:
				return
			}
		}
	}
	walk(err)
	return out
}

// Print writes err's line, prefix first, then a `hint:` line per hint
// indented by indent.
func Print(w io.Writer, prefix, indent string, err error) {
	fmt.Fprintf(w, "%s%v\n", prefix, err)
	for _, h := range Hints(err) {
		fmt.Fprintf(w, "%shint: %s\n", indent, h)
	}
}
