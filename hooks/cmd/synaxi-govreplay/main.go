// Command synaxi-govreplay replays the loop governor over Claude Code
// transcripts, with the hook's own bash parser, and prints in Markdown
// every fire with the tool calls around it, the fires per context, and how
// the count moves with each rule's threshold. scripts/bench.d/governor.sh
// runs it over the fixtures' panel for bench/RESULTS.md; docs/governor.md
// says how the thresholds were chosen from it.
//
//	synaxi-govreplay [-around N] FILE...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/synaxi/synaxi/internal/buildinfo"
)

// version is set with -ldflags "-X main.version=…".
var version string

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-govreplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	around := fs.Int("around", 3, "tool calls listed before each fire (one after)")
	showVersion := fs.Bool("version", false, "print the version")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, "synaxi-govreplay", buildinfo.Version(version))
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: synaxi-govreplay [-around N] FILE...")
		return 2
	}
	p, err := replayPanel(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "synaxi-govreplay:", err)
		return 1
	}
	p.write(stdout, *around)
	return 0
}
