// Package daemon manages synaxi-proxyd's lifecycle around the server: the
// one-instance-per-user lock, the listen address and the port chosen once,
// the record other binaries read (internal/proxyinfo), and starting,
// stopping and inspecting a detached instance.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// ErrRunning reports that another instance holds the lock.
var ErrRunning = errors.New("synaxi-proxyd is already running")

// ErrNotRunning reports that no instance is running; it is
// proxyinfo.ErrNotRunning, the one answer every binary shares.
var ErrNotRunning = proxyinfo.ErrNotRunning

// Lock is the held single-instance lock.
type Lock struct{ fl *flock.Flock }

// Acquire takes the instance lock without waiting. When another instance
// holds it, the error wraps ErrRunning and names that instance.
func Acquire(d xdg.Dirs) (*Lock, error) {
	path := proxyinfo.LockPath(d)
	if err := xdg.Ensure(dirOf(path)); err != nil {
		return nil, err
	}
	fl := flock.New(path, flock.SetPermissions(statefile.FileMode))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		if info, err := proxyinfo.Read(d); err == nil {
			return nil, fmt.Errorf("%w (pid %d on %s)", ErrRunning, info.PID, info.Addr)
		}
		return nil, ErrRunning
	}
	return &Lock{fl: fl}, nil
}

// Release drops the lock.
func (l *Lock) Release() error { return l.fl.Unlock() }

// Held reports whether some process holds the instance lock.
func Held(d xdg.Dirs) bool {
	l, err := Acquire(d)
	if err != nil {
		return errors.Is(err, ErrRunning)
	}
	_ = l.Release()
	return false
}

func dirOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "."
	}
	return path[:i]
}

// Listen opens the proxy's listener. An explicit addr wins; else port (from
// config) on 127.0.0.1; port 0 reuses the port recorded in the state dir,
// or picks a free one and records it, so the address Claude Code was given
// stays valid across restarts.
func Listen(d xdg.Dirs, addr string, port int) (net.Listener, error) {
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	if port != 0 {
		return Listen(d, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 0)
	}
	path := proxyinfo.PortPath(d)
	if b, err := os.ReadFile(path); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 && p < 65536 {
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
				return ln, nil
			}
			// Taken by someone else: choose again and record the new one.
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	if err := statefile.WithLock(path, func() error {
		return statefile.WriteBytes(path, []byte(strconv.Itoa(p)+"\n"))
	}); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Publish writes the running instance's record.
func Publish(d xdg.Dirs, info *proxyinfo.Info) error {
	return statefile.WriteJSON(proxyinfo.Path(d), info)
}

// Unpublish removes the record if it still names pid.
func Unpublish(d xdg.Dirs, pid int) {
	if info, err := proxyinfo.Read(d); err == nil && info.PID == pid {
		_ = os.Remove(proxyinfo.Path(d))
	}
}

// Health fetches http://addr/health.
func Health(ctx context.Context, addr string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("health %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("health %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("health %s: status %d", addr, resp.StatusCode)
	}
	return body, nil
}

// Running returns the running instance's record, or an error wrapping
// ErrNotRunning. Beyond proxyinfo.Live (a record naming a live process) it
// requires the instance lock to be held, so a stale record whose pid was
// reused by another program is never taken for the proxy (Stop signals the
// pid it returns).
func Running(d xdg.Dirs) (*proxyinfo.Info, error) {
	if !Held(d) {
		return nil, ErrNotRunning
	}
	info, err := proxyinfo.Live(d)
	if err != nil {
		return nil, fmt.Errorf("an instance holds the lock but has not published a live record yet: %w", err)
	}
	return info, nil
}

// LogPath is where a detached instance writes its log.
func LogPath(d xdg.Dirs) string { return d.StatePath("proxyd", "proxyd.log") }

// Start launches `exe args…` detached (its own session, output to the log
// file), and returns once its /health answers. If an instance is already
// running, Start returns its record and started == false.
func Start(ctx context.Context, d xdg.Dirs, exe string, args []string, env []string, timeout time.Duration) (info *proxyinfo.Info, started bool, err error) {
	if info, err := Running(d); err == nil {
		if _, herr := Health(ctx, info.Addr); herr == nil {
			return info, false, nil
		}
	}
	info, err = Launch(ctx, d, exe, args, env, timeout)
	return info, err == nil, err
}

// Launch runs `exe args…` detached (its own session, output to the log
// file) whether or not an instance is running, and returns its record once
// it has published one and its /health answers: how a replacement started
// with `serve --takeover` is waited for.
func Launch(ctx context.Context, d xdg.Dirs, exe string, args []string, env []string, timeout time.Duration) (*proxyinfo.Info, error) {
	logPath := LogPath(d)
	if err := xdg.Ensure(dirOf(logPath)); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, statefile.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("synaxi-proxyd exited during start (%v); see %s", err, logPath)
		case <-deadline.C:
			return nil, fmt.Errorf("synaxi-proxyd did not answer /health within %s; see %s", timeout, logPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		info, err := proxyinfo.Read(d)
		if err != nil || info.PID != cmd.Process.Pid {
			continue
		}
		if _, err := Health(ctx, info.Addr); err == nil {
			return info, nil
		}
	}
}

// Stop signals the running instance (SIGTERM) and waits up to timeout for
// it to stop accepting: it closes its listener, then releases the lock and
// its record, so a replacement can start on the same port at once, while
// its requests in flight finish (up to its --drain) before it exits.
func Stop(ctx context.Context, d xdg.Dirs, timeout time.Duration) (*proxyinfo.Info, error) {
	info, err := Running(d)
	if err != nil {
		return nil, err
	}
	if err := syscall.Kill(info.PID, syscall.SIGTERM); err != nil {
		return info, fmt.Errorf("signal pid %d: %w", info.PID, err)
	}
	deadline := time.Now().Add(timeout)
	for Held(d) {
		if time.Now().After(deadline) {
			return info, fmt.Errorf("pid %d is still draining streams after %s", info.PID, timeout)
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return info, nil
}
