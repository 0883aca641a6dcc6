// Package cmdline is what the subcommands of `synaxi` share, whichever
// module implements them (the installer's commands and the learning
// commands it hands `synaxi profile` and `synaxi ingest` to): a flag set
// that reports to the command's own stderr and never exits the process,
// and the one way a failed command ends.
//
// Invariant: a failed command prints exactly one line saying what went
// wrong, prefixed "synaxi: ", then a "  hint: " line per thing the user can
// do about it (internal/hint), and its exit code is 1; bad usage is 2 and
// is the flag package's own message.
package cmdline

import (
	"flag"
	"io"

	"github.com/synaxi/synaxi/internal/hint"
)

// Flags is the flag set of the subcommand `synaxi NAME`: its errors and
// -help go to stderr, and Parse returns them instead of exiting.
func Flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("synaxi "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Fail prints err and its hints to stderr and returns 1, the exit code of
// a command that failed.
func Fail(stderr io.Writer, err error) int {
	hint.Print(stderr, "synaxi: ", "  ", err)
	return 1
}
