package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// ProxyState is what EnsureProxy found and did.
type ProxyState int

const (
	// NotRouted: this session does not talk to synaxi's proxy.
	NotRouted ProxyState = iota
	// Up: the proxy was already listening.
	Up
	// Started: the proxy was down and is listening now.
	Started
	// Down: the proxy is down and did not come up in time.
	Down
)

// live reports whether the proxy that owns the state directory is alive
// and listens on port (proxyinfo.Live: its record names a live process).
func live(d xdg.Dirs, port int) bool {
	info, err := proxyinfo.Live(d)
	return err == nil && info.Port == port
}

// EnsureProxy starts synaxi-proxyd (found beside the running binary) when
// this session is routed to it and it is down, waiting at most budget for
// it to publish its record (it does once it listens). It never waits for the starter process itself.
func EnsureProxy(ctx context.Context, d xdg.Dirs, baseURL string, configPort int, budget time.Duration) ProxyState {
	port, ok := proxyinfo.RoutedPort(d, baseURL, configPort)
	if !ok {
		return NotRouted
	}
	deadline := time.Now().Add(budget)
	if live(d, port) {
		return Up
	}
	if spawnProxyd("start", "-port", strconv.Itoa(port)) != nil {
		return Down
	}
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return Down
		case <-time.After(50 * time.Millisecond):
		}
		if live(d, port) {
			return Started
		}
	}
	return Down
}

// spawnProxyd starts the synaxi-proxyd beside the running binary (of this
// binary's version) detached, in a session of its own, and does not wait
// for it.
func spawnProxyd(args ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(exe), "synaxi-proxyd"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		return err
	}
	// Reap the starter if it finishes while we wait; otherwise it outlives us.
	go func() { _ = cmd.Wait() }()
	return nil
}

// ErrReplacing reports that a replacement was started but had not taken
// over within the budget; it carries on in the background.
var ErrReplacing = errors.New("the replacement proxy had not taken over yet")

// ReplaceOlder replaces a running proxy of an older version than own
// (proxyinfo.Older: release versions only) with the synaxi-proxyd beside
// the running binary, through `synaxi-proxyd start --takeover`: the old
// instance stops accepting and drains what is in flight while the new one
// serves on its address, so no request in flight is dropped. It waits at
// most budget for the new record; replaced is false when there was nothing
// to replace.
func ReplaceOlder(ctx context.Context, d xdg.Dirs, own string, budget time.Duration) (replaced bool, err error) {
	old, err := proxyinfo.Live(d)
	if err != nil || !proxyinfo.Older(old.Version, own) {
		return false, nil
	}
	deadline := time.Now().Add(budget)
	if err := spawnProxyd("start", "--takeover"); err != nil {
		return false, err
	}
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if info, err := proxyinfo.Live(d); err == nil && info.PID != old.PID && info.Version == own {
			return true, nil
		}
	}
	return false, ErrReplacing
}
