// Package wrap implements `synaxi wrap claude [args…]` and `synaxi unwrap`.
//
// A wrap routes one Claude Code launch through synaxi-proxyd by its
// environment alone (ANTHROPIC_BASE_URL, ENABLE_TOOL_SEARCH and, for -p, a
// longer background-agent wait), so nothing on disk points at the proxy. The
// one thing it may change is the proxy's lifetime: a proxy the wrap started is
// stopped again when the last wrap using it ends. A marker file per wrap
// ($XDG_STATE_HOME/synaxi/wrap/<pid>.json) records this, so a wrap killed
// with SIGKILL is cleaned up by the next wrap or by `synaxi unwrap`.
package wrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Agent is the main-thread agent a wrap launches.
const Agent = "synaxi:synaxi-chat"

// PrintWaitCeilingMS is how long `claude -p` waits for background agents
// under a wrap (Claude Code's default is 10 minutes, after which it kills
// them and still exits 0).
const PrintWaitCeilingMS = "14400000"

// Marker records one running wrap.
type Marker struct {
	PID      int       `json:"pid"`
	ChildPID int       `json:"child_pid,omitempty"`
	Started  time.Time `json:"started"`
	ProxyURL string    `json:"proxy_url"`
	Args     []string  `json:"args"`
}

// Options configure a wrap.
type Options struct {
	Claude   string   // the Claude Code CLI
	Args     []string // arguments after `claude`
	ProxyBin string
	Env      []string // base environment; nil is os.Environ()
	Scope    string   // this launch's projection scope (all, worker, off); "" reads SYNAXI_SCOPE, else proxy.scope
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// Dir is where wrap markers live.
func Dir(d xdg.Dirs) string { return d.StatePath("wrap") }

func ownerPath(d xdg.Dirs) string { return filepath.Join(Dir(d), "proxy-started-by-wrap") }

// Run launches Claude Code through the proxy and returns its exit code.
func Run(ctx context.Context, opts Options) (int, error) {
	d := xdg.Resolve()
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if n, err := Repair(ctx, d, opts.ProxyBin, opts.Env); err != nil {
		fmt.Fprintf(opts.Stderr, "synaxi: repairing a stale wrap: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(opts.Stderr, "synaxi: cleaned up %d wrap(s) that ended without restoring\n", n)
	}
	if opts.Scope == "" {
		opts.Scope = lookup(opts.Env, proxyctl.ScopeEnv)
	}
	scope, err := ParseScope(opts.Scope)
	if err != nil {
		return 2, err
	}
	if err := checkEndpoint(d, opts.Env); err != nil {
		return 1, err
	}
	url, err := startProxy(ctx, d, opts)
	if err != nil {
		return 1, err
	}
	args := Args(opts.Args)
	m := &Marker{PID: os.Getpid(), Started: time.Now().UTC(), ProxyURL: url, Args: args}
	mpath := filepath.Join(Dir(d), strconv.Itoa(m.PID)+".json")
	if err := statefile.WriteJSON(mpath, m); err != nil {
		return 1, err
	}
	defer func() { _ = finish(ctx, d, opts.ProxyBin, opts.Env, mpath) }()

	cmd := exec.Command(opts.Claude, args...)
	cmd.Env = WithScope(Environ(opts.Env, url, args), scope)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, opts.Stdout, opts.Stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded(opts.Stdin)...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("start %s: %w", opts.Claude, err)
	}
	m.ChildPID = cmd.Process.Pid
	if err := statefile.WriteJSON(mpath, m); err != nil {
		fmt.Fprintf(opts.Stderr, "synaxi: %v\n", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			return exitCode(err), nil
		}
	}
}

// forwarded lists the signals a wrap passes on. On a terminal, Ctrl-C and
// Ctrl-\ already reach Claude Code through the foreground process group, and
// a second copy would count as a second keypress, so only then are SIGINT
// and SIGQUIT left to the terminal (the wrap still catches them so it
// survives to clean up).
func forwarded(stdin io.Reader) []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
			return sigs
		}
	}
	return append(sigs, syscall.SIGINT, syscall.SIGQUIT)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// Args puts the synaxi-chat agent first unless the user chose an agent.
func Args(user []string) []string {
	for _, a := range user {
		if a == "--agent" || strings.HasPrefix(a, "--agent=") {
			return slices.Clone(user)
		}
	}
	return append([]string{"--agent", Agent}, user...)
}

// Environ is base with the routing variables set for one launch.
func Environ(base []string, url string, args []string) []string {
	set := map[string]string{"ANTHROPIC_BASE_URL": url, "ENABLE_TOOL_SEARCH": "true", "SYNAXI_WRAPPED": "1"}
	if slices.ContainsFunc(args, func(a string) bool { return a == "-p" || a == "--print" }) && lookup(base, "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS") == "" {
		set["CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"] = PrintWaitCeilingMS
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"ANTHROPIC_BASE_URL", "ENABLE_TOOL_SEARCH", "SYNAXI_WRAPPED", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"} {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(env[i], "="); k == key {
			return v
		}
	}
	return ""
}

// startProxy makes sure the proxy runs, and remembers if a wrap started it.
func startProxy(ctx context.Context, d xdg.Dirs, opts Options) (string, error) {
	var url string
	err := statefile.WithLock(ownerPath(d), func() error {
		before := proxyctl.Inspect(ctx, d)
		st, err := proxyctl.Start(ctx, opts.ProxyBin, d, opts.Env)
		if err != nil {
			return fmt.Errorf("start the proxy: %w (run `synaxi doctor`)", err)
		}
		url = st.URL()
		if r := st.Replaced; r != nil {
			fmt.Fprintf(opts.Stderr, "synaxi: replaced the running proxy, pid %d (%s); it drains what it has in flight\n", r.PID, st.Why)
		}
		if !before.Running {
			return statefile.WriteBytes(ownerPath(d), []byte(strconv.Itoa(st.Info.PID)))
		}
		return nil
	})
	return url, err
}

// finish removes a wrap's marker and stops the proxy if a wrap started it
// and no wrap (or wrapped Claude Code) still uses it.
func finish(ctx context.Context, d xdg.Dirs, proxyBin string, env []string, mpath string) error {
	return statefile.WithLock(ownerPath(d), func() error {
		if err := os.Remove(mpath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return maybeStopProxy(ctx, d, proxyBin, env)
	})
}

func maybeStopProxy(ctx context.Context, d xdg.Dirs, proxyBin string, env []string) error {
	owner, err := os.ReadFile(ownerPath(d))
	if err != nil {
		return nil // the proxy was running before any wrap: leave it
	}
	live, _ := Markers(d)
	for _, m := range live {
		if m.InUse() {
			return nil
		}
	}
	if routed(d) {
		return os.Remove(ownerPath(d)) // install routes Claude Code through it: keep it
	}
	if info, err := proxyinfo.Read(d); err == nil && strconv.Itoa(info.PID) == strings.TrimSpace(string(owner)) {
		if err := proxyctl.Stop(ctx, proxyBin, d, env); err != nil {
			return err
		}
	}
	return os.Remove(ownerPath(d))
}

func routed(d xdg.Dirs) bool {
	j, err := journal.Load(journal.Dir(d))
	return err == nil && j.Routed
}

// InUse reports whether the wrap or the Claude Code it launched still runs.
func (m *Marker) InUse() bool {
	return proxyinfo.PIDAlive(m.PID) || proxyinfo.PIDAlive(m.ChildPID)
}

// Markers lists every wrap marker.
func Markers(d xdg.Dirs) ([]*Marker, error) {
	names, err := filepath.Glob(filepath.Join(Dir(d), "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Marker
	for _, n := range names {
		m := &Marker{}
		if statefile.ReadJSON(n, m) == nil && m.PID > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// Repair cleans up wraps that ended without restoring (killed, crashed):
// their markers go, and a proxy a wrap started stops once nothing uses it.
// A crashed wrap whose Claude Code still runs is left until that ends.
func Repair(ctx context.Context, d xdg.Dirs, proxyBin string, env []string) (int, error) {
	n := 0
	err := statefile.WithLock(ownerPath(d), func() error {
		ms, err := Markers(d)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.InUse() {
				continue
			}
			if err := os.Remove(filepath.Join(Dir(d), strconv.Itoa(m.PID)+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			n++
		}
		return maybeStopProxy(ctx, d, proxyBin, env)
	})
	return n, err
}
