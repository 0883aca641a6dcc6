// Command synaxi-statusline prints synaxi's status line for Claude Code:
//
//	Opus 4.7 · myrepo · ⌁ synaxi saved 12.4k tok ($0.31) · cache 87% · 3 re-reads blocked (~4.1k tok) · routed
//
// It reads the status line JSON from stdin (one value, with a deadline:
// some Claude Code versions never close stdin), reads the session's
// precomputed summaries, and prints one line. With statusline.previous_command
// set, the user's own status line runs with the same stdin and its lines are
// printed first. It always prints a line, never an error.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/statusline"
	"github.com/synaxi/synaxi/internal/buildinfo"
)

// version is set with -ldflags "-X main.version=…".
var version string

// previousTimeout bounds the user's own status line command.
const previousTimeout = time.Second

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := hookio.Command{Name: "synaxi-statusline", Version: buildinfo.Version(version)}
	if _, ok := cmd.Args(args, stdout, stderr); !ok {
		return 0
	}
	var out bytes.Buffer
	line(ctx, stdin, &out, stderr, getenv)
	_, _ = stdout.Write(out.Bytes())
	return 0
}

// line writes the composed status line to out; it cannot fail.
func line(ctx context.Context, stdin io.Reader, out, stderr io.Writer, getenv func(string) string) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(stderr, "synaxi-statusline: internal error:", r)
			fmt.Fprintln(out, "⌁ synaxi")
		}
	}()
	raw, err := hookio.ReadValue(stdin, hookio.MaxStatusInput, hookio.StatusDeadline)
	st := &hookio.Status{}
	if err == nil {
		if s, perr := hookio.ParseStatus(raw); perr == nil {
			st = s
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "synaxi-statusline:", err)
	}
	d := xdg.Resolve()
	cfg, _ := config.LoadDirs(d, getenv) // a bad file: the defaults; doctor names the error

	prev := make(chan []string, 1)
	go func() { prev <- statusline.RunPrevious(ctx, cfg.StatusLine.PreviousCommand, raw, previousTimeout) }()

	f := statusline.Facts{Model: st.Model(), Dir: st.Dir(), Color: colour(cfg.StatusLine.Color, getenv)}
	if st.SessionID != "" {
		if s, err := ledger.ReadSummary(d, st.SessionID); err == nil {
			f.Summary = s
		}
		if c, err := ledger.ReadCounters(d, st.SessionID); err == nil {
			f.Counters = c
		}
	}
	_, routed := proxyinfo.RoutedPort(d, getenv("ANTHROPIC_BASE_URL"), cfg.Proxy.Port)
	routed = routed && proxyinfo.Cloud(getenv) == "" // a cloud client never calls the base URL
	f.Proxy = statusline.ProbeProxy(d, routed, f.Summary)
	ours := statusline.Render(f)

	for _, l := range <-prev {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintln(out, ours)
}

// colour decides whether to emit ANSI colour: never, always, or (auto)
// unless NO_COLOR is set or TERM is dumb. Claude Code renders the status
// line's SGR sequences itself, so a pipe on stdout does not mean "no colour".
func colour(mode string, getenv func(string) string) bool {
	switch mode {
	case "never":
		return false
	case "always":
		return true
	}
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
