package hookio

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Command describes a hook binary's arguments for Args: its name, its
// version, the modes a hooks.json (or settings.json) entry passes as the
// first argument, and the mode it runs with no argument. With no Modes it
// takes no argument (the status line).
type Command struct {
	Name    string
	Version string
	Modes   []string
	Default string
}

// Args applies the argument contract every synaxi hook binary keeps, so the
// same bad usage gets the same answer from each:
//
//   - -version or --version prints "NAME VERSION" on stdout;
//   - one argument naming a mode (or none, where there is a default) selects
//     it;
//   - anything else (an unknown mode, a missing one, an extra argument) is
//     bad usage: the usage line goes to stderr, nothing to stdout, and stdin
//     is not read.
//
// In the first and last case ok is false and the binary exits 0, as it does
// after any error of its own: a hook's non-zero exit would block the user's
// action (exit 2 on PreToolUse or PreCompact) or report a failure to them,
// and a hook synaxi cannot run must leave Claude Code as if synaxi were not
// installed. Errors are reported on stderr as "NAME: error".
func (c Command) Args(args []string, stdout, stderr io.Writer) (mode string, ok bool) {
	switch {
	case len(args) == 1 && (args[0] == "-version" || args[0] == "--version"):
		fmt.Fprintln(stdout, c.Name, c.Version)
		return "", false
	case len(args) == 0 && (c.Default != "" || len(c.Modes) == 0):
		return c.Default, true
	case len(args) == 1 && slices.Contains(c.Modes, args[0]):
		return args[0], true
	}
	fmt.Fprintln(stderr, c.Usage())
	return "", false
}

// Usage is the usage line: "usage: NAME a|b|c  (input on stdin)", the
// modes in brackets when one is the default.
func (c Command) Usage() string {
	modes := strings.Join(c.Modes, "|")
	if c.Default != "" {
		modes = "[" + modes + "]"
	}
	return strings.Join(strings.Fields("usage: "+c.Name+" "+modes), " ") + "  (input on stdin)"
}

// Run is a hook binary's whole run: Args, then hook with the mode chosen,
// its error (or a panic in it, see Recovered) reported on stderr as
// "NAME: error". It is always 0, for the reasons Args gives.
func (c Command) Run(args []string, stdout, stderr io.Writer, hook func(mode string) error) int {
	mode, ok := c.Args(args, stdout, stderr)
	if !ok {
		return 0
	}
	if err := Recovered(func() error { return hook(mode) }); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
	}
	return 0
}

// Recovered runs f and returns its error, or a panic in f as the error
// "internal error: VALUE": a hook's bug must not become a crash that Claude
// Code reports to the user.
func Recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return f()
}
