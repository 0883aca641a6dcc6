// Command synaxi is synaxi's user-facing CLI: it installs the plugin into
// Claude Code and removes it again, routes a Claude Code launch through the
// projection proxy, and reports what synaxi saved.
//
// Usage:
//
//	synaxi install [--route] [--claude PATH] [--no-plugin] [--repo DIR] [--from DIR]
//	synaxi uninstall [--purge] [--claude PATH]
//	synaxi wrap [--claude PATH] claude [args…]
//	synaxi unwrap
//	synaxi status
//	synaxi doctor [--claude PATH] [--proxy URL [--token-file FILE]]
//	synaxi savings [--session ID] [--json]
//	synaxi savings --replay [--sessions N] [--max-mb N] [--json]
//	synaxi report [--out FILE]
//	synaxi ingest [--all | --project DIR] [--force] [--dry-run] [FILES…]
//	synaxi profile review [--json]|accept [--global] ID [TEXT…]|reject ID
//	synaxi profile show|export [--json]|history|rollback [VERSION]|edit ID TEXT…|forget ID|exclude ID|include ID|reset
//	synaxi trim [--session ID | --transcript FILE] [--ttl 1h] [--max-chars N] [--dry-run] | --cancel
//	synaxi -version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/synaxi/synaxi/internal/cmdline"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/doctor"
	"github.com/synaxi/synaxi/installer/internal/savings"
	"github.com/synaxi/synaxi/installer/internal/setup"
	"github.com/synaxi/synaxi/installer/internal/wrap"
	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/cli"
)

var version = ""

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: synaxi <command> [flags]

commands:
  install     copy the binaries to a stable place, install the Claude Code plugin,
              compose the status line, start the proxy (--route: route all sessions)
  uninstall   undo install: stop the proxy, remove the plugin and its marketplace, restore every file
              (--purge: also synaxi's own state, data and cache: ledger, logs, what it learned)
  wrap        synaxi wrap [--scope all|worker|off] claude [args…]: run one Claude Code launch through the proxy
  unwrap      clean up after a wrap that was killed
  proxy       restart: apply a changed configuration (the proxy is replaced without dropping a request)
  status      what is installed, running and routed, and the savings so far
  doctor      every check with a fix, and the effective configuration;
              --proxy URL checks a remote synaxi-proxyd instead
  savings     the savings ledger per session and in total (--session ID, --json);
              --replay: what the projection would have saved on your recent sessions
  report      a local HTML page with charts (--out FILE)
  ingest      learn from past sessions: this repository's, --all, or FILES (progress bar on a terminal)
  profile     what synaxi learned: review (decide about candidates in a terminal; --json lists them),
              accept [--global] ID [TEXT], reject ID, show, export [--json], history,
              rollback [VERSION], edit ID TEXT, forget ID, exclude ID, include ID, reset
              (synaxi profile --help says more)
  trim        stage what this session needs (files, open error, your instructions, todos, decisions)
              for the next /clear here: --session ID, --dry-run, --cancel
  -version    print the version
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "synaxi", buildinfo.Version(version))
		return 0
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "install", "uninstall":
		return runSetup(ctx, cmd, rest, stdout, stderr)
	case "wrap":
		return runWrap(ctx, rest, stdin, stdout, stderr)
	case "unwrap":
		return runUnwrap(ctx, rest, stdout, stderr)
	case "proxy":
		return runProxy(ctx, rest, stdout, stderr)
	case "status":
		fs := cmdline.Flags("status", stderr)
		if fs.Parse(rest) != nil {
			return 2
		}
		more, err := cli.StatusLines(stdout, stderr)
		if err != nil {
			return cmdline.Fail(stderr, err)
		}
		if err := doctor.Status(ctx, stdout, doctor.Env{Getenv: os.Getenv, More: more}); err != nil {
			return cmdline.Fail(stderr, err)
		}
		return 0
	case "doctor":
		fs := cmdline.Flags("doctor", stderr)
		cl := fs.String("claude", "", "Claude Code CLI to check")
		remote := fs.String("proxy", "", "check the synaxi-proxyd at this URL (health, team token, upstream, metrics) instead of this machine")
		tokenFile := fs.String("token-file", "", "with --proxy: file holding the team token (default: x-synaxi-token in ANTHROPIC_CUSTOM_HEADERS)")
		if fs.Parse(rest) != nil {
			return 2
		}
		if *remote != "" {
			if n := doctor.Remote(ctx, stdout, doctor.RemoteEnv{URL: *remote, TokenFile: *tokenFile, Getenv: os.Getenv}); n > 0 {
				fmt.Fprintf(stdout, "\n%d check(s) failed\n", n)
				return 1
			}
			return 0
		}
		if n := doctor.Doctor(ctx, stdout, doctor.Env{Getenv: os.Getenv, Claude: *cl}); n > 0 {
			fmt.Fprintf(stdout, "\n%d check(s) failed\n", n)
			return 1
		}
		return 0
	case "savings":
		return runSavings(ctx, rest, stdout, stderr)
	case "report":
		return runReport(rest, stdout, stderr)
	case "ingest":
		return cli.RunIngest(ctx, rest, stdout, stderr)
	case "profile":
		return cli.RunProfile(ctx, rest, stdout, stderr)
	case "trim":
		return runTrim(rest, stdout, stderr)
	case "launcher": // hidden: run by plugin/bin/synaxi-run after an install
		return runLauncher(rest, stderr)
	case "visibility": // hidden: run by synaxi-noreread for a remote proxy
		return runVisibility(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "synaxi: unknown command %q\n\n%s", cmd, usage)
	return 2
}

func runSetup(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags(cmd, stderr)
	opts := setup.Options{Out: stdout, Version: buildinfo.Version(version)}
	fs.StringVar(&opts.Claude, "claude", "", "Claude Code CLI to use (default: $SYNAXI_CLAUDE, then claude on PATH)")
	if cmd == "install" {
		fs.BoolVar(&opts.Route, "route", false, "route every Claude Code session through the proxy (settings env ANTHROPIC_BASE_URL and ENABLE_TOOL_SEARCH)")
		fs.BoolVar(&opts.NoPlugin, "no-plugin", false, "do not install the Claude Code plugin")
		fs.StringVar(&opts.RepoRoot, "repo", "", "checkout to register as the plugin marketplace (default: the one this binary was built in)")
		fs.StringVar(&opts.BinSource, "from", "", "directory holding the built binaries to install (default: the one this synaxi is in)")
	} else {
		fs.BoolVar(&opts.Purge, "purge", false, "also remove synaxi's own state, data and cache directories (the savings ledger, logs, what it learned)")
	}
	if fs.Parse(args) != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "synaxi %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return 2
	}
	var err error
	if cmd == "install" {
		err = setup.Install(ctx, opts)
		if err == nil || errors.Is(err, setup.ErrWarnings) {
			offerModelExtractor(stdout)
		}
	} else {
		err = setup.Uninstall(ctx, opts)
	}
	switch {
	case errors.Is(err, setup.ErrWarnings):
		fmt.Fprintf(stderr, "synaxi %s: %v\n", cmd, err)
		return 1
	case err != nil:
		return cmdline.Fail(stderr, err)
	}
	return 0
}

func runWrap(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("wrap", stderr)
	cl := fs.String("claude", "", "Claude Code CLI to run (default: $SYNAXI_CLAUDE, then claude on PATH)")
	scope := fs.String("scope", "", "this launch's projection scope: all, worker or off (default: $SYNAXI_SCOPE, then proxy.scope)")
	if fs.Parse(args) != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 || filepath.Base(rest[0]) != "claude" {
		fmt.Fprintln(stderr, "usage: synaxi wrap [--claude PATH] [--scope all|worker|off] claude [args…]")
		return 2
	}
	bin := *cl
	if bin == "" && rest[0] != "claude" {
		bin = rest[0] // a path to claude
	}
	bin, err := claude.Find(bin, os.Getenv)
	if err != nil {
		return cmdline.Fail(stderr, hint.Wrap(err, claude.Fix))
	}
	code, err := wrap.Run(ctx, wrap.Options{
		Claude: bin, Args: rest[1:], ProxyBin: setup.ProxyBin(xdg.Resolve()), Scope: *scope,
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
	})
	if err != nil {
		hint.Print(stderr, "synaxi wrap: ", "  ", err)
	}
	return code
}

func runUnwrap(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("unwrap", stderr)
	if fs.Parse(args) != nil {
		return 2
	}
	d := xdg.Resolve()
	n, err := wrap.Repair(ctx, d, setup.ProxyBin(d), nil)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	ms, _ := wrap.Markers(d)
	fmt.Fprintf(stdout, "cleaned up %d stale wrap(s); %d still running\n", n, len(ms))
	return 0
}

func runSavings(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("savings", stderr)
	session := fs.String("session", "", "show only this session")
	asJSON := fs.Bool("json", false, "print JSON")
	replay := fs.Bool("replay", false, "replay your recent Claude Code sessions through the projection (nothing is sent anywhere)")
	sessions := fs.Int("sessions", 10, "with --replay: how many of the newest sessions (each with its subagents)")
	maxMB := fs.Int("max-mb", 32, "with --replay: leave out transcripts larger than this many MB (0: none)")
	if fs.Parse(args) != nil {
		return 2
	}
	if *replay {
		return runReplay(ctx, *sessions, int64(*maxMB)<<20, *asJSON, stdout, stderr)
	}
	rows, skipped, err := savings.Load(xdg.Resolve())
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	rep := savings.Build(rows, *session)
	rep.Skipped = skipped
	rep.Route = doctor.Route(ctx, doctor.Env{Getenv: os.Getenv})
	if *session != "" && len(rep.Sessions) == 0 {
		fmt.Fprintf(stderr, "synaxi savings: no ledger rows for session %q (see `synaxi savings` for the sessions)\n", *session)
		return 1
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	return 0
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := cmdline.Flags("report", stderr)
	out := fs.String("out", "", "file to write (default: synaxi-report.html in the state dir)")
	if fs.Parse(args) != nil {
		return 2
	}
	d := xdg.Resolve()
	rows, skipped, err := savings.Load(d)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	rep := savings.Build(rows, "")
	rep.Skipped = skipped
	path := *out
	if path == "" {
		path = d.StatePath("synaxi-report.html")
		if err := xdg.Ensure(d.State); err != nil {
			return cmdline.Fail(stderr, err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if err := rep.WriteHTML(f, time.Now()); err != nil {
		f.Close()
		return cmdline.Fail(stderr, err)
	}
	if err := f.Close(); err != nil {
		return cmdline.Fail(stderr, err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d ledger rows)\n", path, len(rep.Rows))
	return 0
}

// runReplay is `synaxi savings --replay`: the replay engine of the
// synaxi-proxyd beside this synaxi (or the stable one) over the user's own
// recent transcripts, with a progress bar on a terminal.
func runReplay(ctx context.Context, sessions int, maxBytes int64, asJSON bool, stdout, stderr io.Writer) int {
	if sessions < 1 {
		fmt.Fprintln(stderr, "synaxi savings: --sessions must be at least 1")
		return 2
	}
	o := savings.ReplayOptions{
		Projects: xdg.ClaudeProjects(os.Getenv),
		Sessions: sessions,
		MaxBytes: maxBytes,
		Proxyd:   setup.ProxyBin(xdg.Resolve()),
		Scope:    effectiveScope(),
	}
	if isTerminal(stderr) {
		o.Progress = stderr
	}
	rep, err := savings.Replay(ctx, o)
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return cmdline.Fail(stderr, err)
	}
	if rep.Verdict == savings.Unreplayed && len(rep.Failed) > 0 {
		fmt.Fprintf(stderr, "synaxi savings: no conversation could be replayed (see above); check `%s replay --help` runs\n", o.Proxyd)
		return 1
	}
	return 0
}

// isTerminal reports whether w is a terminal (a progress bar is drawn).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
