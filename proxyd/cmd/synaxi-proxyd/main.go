// Command synaxi-proxyd is synaxi's local model-traffic proxy. Claude Code
// reaches it through ANTHROPIC_BASE_URL; it forwards every request to the
// upstream byte for byte, projects the synaxi-worker's requests into a
// bounded, cache-stable context, and records what each request was billed
// against count_tokens' answer for the original.
//
// Usage:
//
//	synaxi-proxyd [serve] [flags]   run in the foreground
//	synaxi-proxyd start [flags]     run detached; prints the address once /health answers
//	                                (--takeover: replace the running instance without dropping a request)
//	synaxi-proxyd stop              stop accepting; streams in flight finish, then it exits
//	synaxi-proxyd status [--json]   show the running instance and its /health
//	synaxi-proxyd replay PATH…      replay transcripts (files or directories) through the projection
//	synaxi-proxyd -version
//
// Flags win over SYNAXI_PROXY_* environment variables, which win over
// $XDG_CONFIG_HOME/synaxi/config.toml, which wins over the defaults.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/daemon"
	"github.com/synaxi/synaxi/proxyd/internal/replay"
)

var version = "" // set with -ldflags "-X main.version=…"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return exit(stderr, serve(ctx, args, stdout, stderr))
	case "start":
		return exit(stderr, start(ctx, args, stdout, stderr))
	case "stop":
		return stopCmd(ctx, args, stdout, stderr)
	case "status":
		return status(ctx, args, stdout, stderr)
	case "replay":
		return replay.Main(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "synaxi-proxyd", buildinfo.Version(version))
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "synaxi-proxyd: unknown command %q\n%s", cmd, usage)
	return 2
}

const usage = `usage:
  synaxi-proxyd [serve] [flags]   run in the foreground
  synaxi-proxyd start [flags]     run detached; prints the address once /health answers
  synaxi-proxyd stop              stop accepting; streams in flight finish, then it exits
  synaxi-proxyd status [--json]   show the running instance and its /health
  synaxi-proxyd replay PATH…      replay transcripts (files or directories) through the projection
  synaxi-proxyd -version
run "synaxi-proxyd serve -h" for the flags
`

// start runs serve detached and prints its address once /health answers.
func start(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags("start", args, stderr)
	if err != nil {
		return err
	}
	dirs := xdg.Resolve()
	cfg, err := loadConfig(o, dirs)
	if err != nil {
		return err
	}
	acc, err := teamAccess(o.listen, &cfg.Proxy)
	if err != nil {
		return &usageError{err: err}
	}
	if acc.token != "" || acc.tls != nil {
		return &usageError{err: errors.New("start runs one user's proxy on loopback; with a team token or TLS run `synaxi-proxyd serve` under systemd or in a container (docs/deploy.md)")}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	var info *proxyinfo.Info
	started := true
	if o.takeover {
		// A replacement starts whether or not an instance runs.
		info, err = daemon.Launch(ctx, dirs, exe, append([]string{"serve"}, args...), os.Environ(), 15*time.Second)
	} else {
		info, started, err = daemon.Start(ctx, dirs, exe, append([]string{"serve"}, args...), os.Environ(), 15*time.Second)
	}
	if err != nil {
		return err
	}
	if !started {
		fmt.Fprintf(stderr, "synaxi-proxyd: already running (pid %d)\n", info.PID)
	}
	fmt.Fprintln(stdout, info.Addr)
	return nil
}

func stopCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-proxyd stop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the instance to stop accepting (its streams in flight finish after)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	info, err := daemon.Stop(ctx, xdg.Resolve(), *wait)
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		fmt.Fprintln(stdout, "not running")
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "synaxi-proxyd: stop: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped pid %d (%s); requests in flight finish before it exits\n", info.PID, info.Addr)
	return 0
}

func status(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-proxyd status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the record and /health as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	info, err := daemon.Running(xdg.Resolve())
	if err != nil {
		if *asJSON {
			fmt.Fprintln(stdout, `{"running":false}`)
		} else {
			fmt.Fprintln(stdout, "not running")
		}
		return 3
	}
	health, herr := daemon.Health(ctx, info.Addr)
	if *asJSON {
		out := map[string]any{"running": herr == nil, "info": info}
		if herr == nil {
			out["health"] = json.RawMessage(health)
		} else {
			out["error"] = herr.Error()
		}
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "running: pid %d on %s → %s (version %s, since %s)\n",
			info.PID, info.Addr, info.Upstream, info.Version, info.Started.Format(time.RFC3339))
		if herr != nil {
			fmt.Fprintf(stdout, "health: %v\n", herr)
		} else {
			fmt.Fprintf(stdout, "health: %s", health)
		}
	}
	if herr != nil {
		return 1
	}
	return 0
}
