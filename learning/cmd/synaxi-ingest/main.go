// Command synaxi-ingest is synaxi's SessionEnd hook and the drain that
// learns from finished sessions.
//
//	synaxi-ingest          SessionEnd: queue the session (id, transcript
//	                       path, cwd, reason) under $XDG_STATE_HOME/synaxi/ingest,
//	                       start a detached drain and return at once
//	synaxi-ingest drain    work through the queue: read each transcript,
//	                       extract grounded observations, save a new profile
//	                       version, publish; retry failures with backoff and
//	                       give up into the dead-letter list after
//	                       ingest.max_tries
//
// The hook input is read from stdin. The hook does nothing when
// ingest.enabled is false or when SYNAXI_INGEST_CHILD is set (a session
// synaxi itself started for a model call). On any error it exits 0 with no
// output; the drain logs to $XDG_STATE_HOME/synaxi/ingest/drain.log, which
// lumberjack rotates past 1 MB, keeping one older log beside it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/hook"
	"github.com/synaxi/synaxi/learning/queue"
	"gopkg.in/natefinch/lumberjack.v2"
)

// version is set with -ldflags "-X main.version=…".
var version string

// maxLogMB is the size in megabytes past which the drain's log is rotated;
// one rotated log is kept.
const maxLogMB = 1

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := hookio.Command{Name: "synaxi-ingest", Version: buildinfo.Version(version),
		Modes: []string{"hook", "drain"}, Default: "hook"}
	mode, ok := cmd.Args(args, stdout, stderr)
	if !ok {
		return 0
	}
	if mode == "drain" { // not a hook: the hook starts it in the background
		if err := drain(ctx, getenv); err != nil {
			fmt.Fprintln(stderr, "synaxi-ingest drain:", err)
			return 1
		}
		return 0
	}
	if err := hookio.Recovered(func() error { return sessionEnd(stdin, getenv) }); err != nil {
		fmt.Fprintln(stderr, "synaxi-ingest:", err)
	}
	return 0
}

// sessionEnd is the SessionEnd hook: queue the session, start a drain.
func sessionEnd(stdin io.Reader, getenv func(string) string) error {
	if getenv(extract.ChildEnv) != "" {
		return nil
	}
	d := xdg.Resolve()
	// A broken config file must not lose the session: queue it with the
	// defaults (the drain reports the config error).
	cfg, _ := config.LoadDirs(d, getenv)
	if !cfg.Ingest.Enabled {
		return nil
	}
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	if _, err := hook.Enqueue(queue.Open(d.StatePath("ingest")), in); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	return hook.Spawn(exe)
}

func drain(ctx context.Context, getenv func(string) string) error {
	d := xdg.Resolve()
	q := queue.Open(d.StatePath("ingest"))
	if err := xdg.Ensure(q.Dir()); err != nil {
		return err
	}
	// lumberjack creates the log 0600, like every state file, and rotates
	// it on the write that would pass maxLogMB.
	logf := &lumberjack.Logger{Filename: filepath.Join(q.Dir(), "drain.log"), MaxSize: maxLogMB, MaxBackups: 1}
	defer logf.Close()
	cfg, err := config.LoadDirs(d, getenv)
	if err != nil {
		// Learning with a half-read config could send transcripts where
		// the user did not mean to: stop and say why.
		fmt.Fprintf(logf, "config: %v; fix it, then run `synaxi ingest` to drain the queue\n", err)
		return err
	}
	dr, err := hook.New(d, cfg, getenv, logf)
	if err != nil {
		fmt.Fprintf(logf, "%v\n", err)
		return err
	}
	_, err = dr.Drain(ctx)
	return err
}
