// Command synaxi-session is synaxi's session bookkeeping hook for Claude
// Code.
//
//	synaxi-session start       SessionStart: write the session record, reset
//	                           the no-reread records after compact or clear,
//	                           refresh the stable copies synaxi install made
//	                           after a plugin update, replace a running proxy
//	                           of an older version with this version's (it
//	                           drains what is in flight), start the proxy if
//	                           this session is routed to it and it is down
//	                           (waiting at most about 1 s in all),
//	                           and give the model the guidance learned for
//	                           this project (docs/ingest.md); after /clear,
//	                           first what `synaxi trim` staged for this
//	                           project, once (docs/trim.md)
//	synaxi-session substart    SubagentStart (the synaxi-worker): give the
//	                           worker that same guidance
//	synaxi-session precompact  PreCompact: reset the no-reread records
//	synaxi-session end         SessionEnd: mark the record ended, at once
//
// The record is $XDG_STATE_HOME/synaxi/sessions/<session>/session.json. The
// hook input is read from stdin; on any error the hook exits 0 with no
// output.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/trim"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/reads"
	"github.com/synaxi/synaxi/hooks/internal/session"
	"github.com/synaxi/synaxi/internal/buildinfo"
)

// version is set with -ldflags "-X main.version=…".
var version string

// proxyBudget bounds how long SessionStart waits for a proxy it started
// or a replacement of an older one; minProxyWait is what is left at least
// for starting one after a replacement used up the budget.
const (
	proxyBudget  = 900 * time.Millisecond
	minProxyWait = 100 * time.Millisecond
)

// guidanceMargin is kept free of the output cap beside a trim block and
// the guidance (the blank line between them, and room for a count in
// characters that differs from one in bytes); below minGuidance
// characters no guidance is given (the smallest guidance.max_chars).
const (
	guidanceMargin = 200
	minGuidance    = 500
)

// pruneAge is how long an idle no-reread context or visibility export is
// kept.
const pruneAge = 7 * 24 * time.Hour

// tempAge is how old a temporary file of an interrupted write must be
// before it is removed (a live write's exists for milliseconds).
const tempAge = time.Hour

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := hookio.Command{Name: "synaxi-session", Version: buildinfo.Version(version),
		Modes: []string{"start", "substart", "precompact", "end"}}
	return cmd.Run(args, stdout, stderr, func(mode string) error { return hook(ctx, mode, stdin, stdout, getenv) })
}

func hook(ctx context.Context, mode string, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	if in.SessionID == "" {
		return fmt.Errorf("hook input has no session_id")
	}
	d := xdg.Resolve()
	now := time.Now()
	switch mode {
	case "end":
		return session.End(d, in, now)
	case "precompact":
		cfg, _ := config.LoadDirs(d, getenv) // a bad file: the defaults; the reset must happen
		return reads.New(d, cfg.NoReread).ResetSession(in.SessionID)
	case "start":
		return start(ctx, d, in, now, stdout, getenv)
	case "substart":
		return substart(d, in, stdout, getenv)
	}
	return fmt.Errorf("unknown mode %q (want start, substart, precompact or end)", mode)
}

func start(ctx context.Context, d xdg.Dirs, in *hookio.Input, now time.Time, stdout io.Writer, getenv func(string) string) error {
	cfg, _ := config.LoadDirs(d, getenv) // a bad file: the defaults; the record must be written
	err := session.Start(d, in, now)
	store := reads.New(d, cfg.NoReread)
	switch in.Source {
	case "compact", "clear":
		if rerr := store.ResetSession(in.SessionID); rerr != nil && err == nil {
			err = rerr
		}
	case "startup":
		// Housekeeping, once a session: what ended contexts and killed
		// writers left behind.
		store.Prune(pruneAge)
		visibility.Prune(d, pruneAge, now)
		trim.Prune(d, pruneAge, now)
		statefile.PruneTemps(d.StatePath(), tempAge, now)
	}
	// After /clear, what `synaxi trim` staged comes first; the guidance
	// after it gets what is left of Claude Code's output cap.
	carried, msg, terr := session.Trimmed(d, in, now)
	if terr != nil && err == nil {
		err = terr
	}
	gcfg := cfg.Guidance
	if carried != "" {
		gcfg.MaxChars = min(gcfg.MaxChars, hookio.MaxText-len(carried)-guidanceMargin)
	}
	guide := ""
	if gcfg.MaxChars >= minGuidance {
		var notice string
		var gerr error
		guide, notice, gerr = session.Guidance(d, gcfg, in, now)
		if gerr != nil && err == nil {
			err = gerr
		}
		// The notice of candidates waiting is for the user to see and the
		// model to know.
		guide = joinText(guide, notice)
		msg = joinText(msg, notice)
	}
	guide = joinText(carried, guide)
	base := getenv("ANTHROPIC_BASE_URL")
	// A proxy left running by an older plugin version gives way to this
	// version's (it drains what is in flight); a failed replacement leaves
	// it serving.
	// After a plugin update, the stable copies (status line, installer)
	// follow this version's binaries.
	t0 := time.Now()
	own := buildinfo.Version(version)
	if exe, xerr := os.Executable(); xerr == nil {
		if _, rerr := session.RefreshStable(d, filepath.Dir(exe), own); rerr != nil && err == nil {
			err = rerr
		}
	}
	_, _ = session.ReplaceOlder(ctx, d, own, proxyBudget)
	if session.EnsureProxy(ctx, d, base, cfg.Proxy.Port, max(proxyBudget-time.Since(t0), minProxyWait)) == session.Down {
		msg = joinText(msg, fmt.Sprintf("synaxi: this session is routed through the local proxy (%s) but it is not running and did not start; "+
			"run `synaxi doctor`, or `synaxi unwrap` to talk to the API directly.", base))
	}
	if guide != "" || msg != "" {
		if werr := hookio.WriteSessionContext(stdout, guide, msg); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// joinText joins two texts with a blank line, leaving out an empty one.
func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n\n" + b
}

// substart gives a starting subagent the learned guidance.
func substart(d xdg.Dirs, in *hookio.Input, stdout io.Writer, getenv func(string) string) error {
	cfg, _ := config.LoadDirs(d, getenv) // a bad file: the defaults
	guide, err := session.SubagentGuidance(d, cfg.Guidance, in)
	if err != nil || guide == "" {
		return err
	}
	return hookio.WriteSubagentContext(stdout, guide)
}
