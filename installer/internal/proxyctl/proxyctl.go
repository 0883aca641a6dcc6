// Package proxyctl starts, stops and inspects synaxi-proxyd from the outside:
// through its command line (`synaxi-proxyd start|stop`), the record it leaves
// in the state directory (internal/proxyinfo) and its /health endpoint.
// Start replaces a running proxy older than the binary it is given, or
// running with a configuration other than the one it would start with now
// (`synaxi-proxyd start --takeover`: the old one drains what it has in
// flight while the new one serves), and leaves any other one running.
package proxyctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Health is the part of the proxy's /health answer synaxi shows.
type Health struct {
	Version       string        `json:"version"`
	Upstream      string        `json:"upstream"`
	Config        string        `json:"config"` // fingerprint of the configuration it started with; "" from a proxy before it was reported
	Projection    string        `json:"projection"`
	Requests      int64         `json:"requests"`
	Projected     int64         `json:"projected"`
	FailOpens     int64         `json:"fail_opens"`
	UpstreamCalls UpstreamCalls `json:"upstream_calls"`
	Raw           map[string]any
}

// UpstreamCalls is how the proxy's recent calls to its upstream went
// (server.UpstreamCalls).
type UpstreamCalls struct {
	WindowSeconds  int        `json:"window_seconds"`
	RecentFailures int        `json:"recent_failures"`
	LastFailure    *time.Time `json:"last_failure"`
	LastError      string     `json:"last_error"`
	LastAnswer     *time.Time `json:"last_answer"`
}

// Failing reports whether the upstream is failing now: calls failed within
// the window, and none got an answer since the last failure.
func (u UpstreamCalls) Failing() bool {
	return u.RecentFailures > 0 && u.LastFailure != nil && (u.LastAnswer == nil || u.LastAnswer.Before(*u.LastFailure))
}

// State is what is known about the proxy right now.
type State struct {
	Info    *proxyinfo.Info // nil when no record
	Alive   bool            // the recorded pid is alive (proxyinfo.PIDAlive)
	Health  *Health         // nil when /health did not answer
	Err     error           // why Health is nil
	Running bool            // alive and healthy
	// Replaced is the record of the proxy Start replaced, and Why it did.
	Replaced *proxyinfo.Info
	Why      string
}

// URL is the base URL Claude Code uses to reach the proxy.
func (s *State) URL() string {
	if s.Info == nil {
		return ""
	}
	return "http://" + s.Info.Addr
}

// Inspect reads the proxy record and asks /health.
func Inspect(ctx context.Context, d xdg.Dirs) *State {
	st := &State{}
	info, err := proxyinfo.Read(d)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			st.Err = errors.New("not running (no record in the state dir)")
		} else {
			st.Err = err
		}
		return st
	}
	st.Info = info
	st.Alive = proxyinfo.PIDAlive(info.PID)
	st.Health, st.Err = GetHealth(ctx, info.Addr)
	st.Running = st.Health != nil
	return st
}

// GetHealth asks http://addr/health.
func GetHealth(ctx context.Context, addr string) (*Health, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return nil, fmt.Errorf("health %s: %w", addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("health %s: %w", addr, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("health %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("health %s: status %d", addr, resp.StatusCode)
	}
	h := &Health{}
	if err := json.Unmarshal(buf.Bytes(), h); err != nil {
		return nil, fmt.Errorf("health %s: decode: %w", addr, err)
	}
	_ = json.Unmarshal(buf.Bytes(), &h.Raw)
	return h, nil
}

// Start runs `bin start` and waits until /health answers. A running proxy
// of an older version than bin (proxyinfo.Older) is replaced through `bin
// start --takeover`: it stops accepting and drains what is in flight while
// bin's serves on its address; State.Replaced is then its record.
func Start(ctx context.Context, bin string, d xdg.Dirs, env []string) (*State, error) {
	st := Inspect(ctx, d)
	if !st.Running {
		if err := run(ctx, bin, env, "start"); err != nil {
			return nil, err
		}
		return await(ctx, d, nil, "")
	}
	why := replaceReason(ctx, bin, d, env, st)
	if why == "" {
		return st, nil
	}
	if err := run(ctx, bin, env, "start", "--takeover"); err != nil {
		return st, fmt.Errorf("replace the proxy (%s): %w", why, err)
	}
	return await(ctx, d, st.Info, why)
}

// Restart replaces the running proxy with one that reads the configuration
// again, without dropping a request (`synaxi-proxyd start --takeover`), or
// starts one when none runs.
func Restart(ctx context.Context, bin string, d xdg.Dirs, env []string) (*State, error) {
	st := Inspect(ctx, d)
	if !st.Running {
		return Start(ctx, bin, d, env)
	}
	if err := run(ctx, bin, env, "start", "--takeover"); err != nil {
		return st, fmt.Errorf("restart the proxy: %w", err)
	}
	return await(ctx, d, st.Info, "restarted")
}

// replaceReason says why the running proxy should give way to one started
// from bin now, "" when it should not.
func replaceReason(ctx context.Context, bin string, d xdg.Dirs, env []string, st *State) string {
	h := st.Health
	if ours, err := Version(ctx, bin, env); err == nil && proxyinfo.Older(h.Version, ours) {
		return fmt.Sprintf("version %s is older than %s", h.Version, ours)
	}
	c, err := configured(d, env)
	if err != nil {
		return ""
	}
	if want := c.ProxyFingerprint(); h.Config != "" && h.Config != want {
		return fmt.Sprintf("it runs configuration %s, the configuration is now %s", h.Config, want)
	}
	if c.Proxy.Port != 0 && c.Proxy.Port != st.Info.Port {
		return fmt.Sprintf("it listens on port %d, proxy.port is %d", st.Info.Port, c.Proxy.Port)
	}
	return ""
}

// configured is the configuration a proxy started now with env would
// load (env nil is this process's environment), before any flag.
func configured(d xdg.Dirs, env []string) (*config.Config, error) {
	getenv := os.Getenv
	if env != nil {
		vars := map[string]string{}
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok {
				vars[k] = v
			}
		}
		getenv = func(k string) string { return vars[k] }
	}
	l, err := config.Load(d.ConfigFile(), getenv)
	if err != nil {
		return nil, err
	}
	return &l.Config, nil
}

// await waits until /health answers from a proxy other than replaced.
func await(ctx context.Context, d xdg.Dirs, replaced *proxyinfo.Info, why string) (*State, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := Inspect(ctx, d)
		if st.Running && (replaced == nil || st.Info.PID != replaced.PID) {
			st.Replaced, st.Why = replaced, why
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("proxy started but /health did not answer within 10s: %v", st.Err)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop runs `bin stop` and waits for the recorded process to exit.
func Stop(ctx context.Context, bin string, d xdg.Dirs, env []string) error {
	info, err := proxyinfo.Read(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := run(ctx, bin, env, "stop"); err != nil {
		return err
	}
	if info == nil {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for proxyinfo.PIDAlive(info.PID) {
		if time.Now().After(deadline) {
			return fmt.Errorf("proxy pid %d still running 10s after stop", info.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Version asks bin (`synaxi-proxyd version`) for its version.
func Version(ctx context.Context, bin string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "synaxi-proxyd" {
		return "", fmt.Errorf("%s version printed %q", bin, out)
	}
	return f[1], nil
}

func run(ctx context.Context, bin string, env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	verb := strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The detached proxy must not hold our stdout open.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, verb, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// ScopeHeader carries a launch's projection scope (all, worker or off) to
// the proxy, over proxy.scope for that launch's requests; `synaxi wrap`
// adds it to the launch's ANTHROPIC_CUSTOM_HEADERS.
const ScopeHeader = "X-Synaxi-Scope"

// ScopeEnv is the environment variable `synaxi wrap` reads a launch's
// scope from when --scope is not given.
const ScopeEnv = "SYNAXI_SCOPE"

// Redact is base with a password in it shown as the proxy's /health shows
// it.
func Redact(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Redacted()
}

// IsProxy reports whether base is synaxi's proxy: a loopback URL on the
// port the running proxy listens on, or keeps for its next start.
func IsProxy(d xdg.Dirs, base string) bool {
	_, ok := proxyinfo.RoutedPort(d, base, 0)
	return ok
}
