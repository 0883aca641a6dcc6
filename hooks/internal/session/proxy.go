package session

import (
	"context"
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
	exe, err := os.Executable()
	if err != nil {
		return Down
	}
	bin := filepath.Join(filepath.Dir(exe), "synaxi-proxyd")
	cmd := exec.Command(bin, "start", "-port", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		return Down
	}
	// Reap the starter if it finishes while we wait; otherwise it outlives us.
	go func() { _ = cmd.Wait() }()
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
