// Package proxyinfo is the record a running synaxi-proxyd leaves in the state
// directory, so other binaries (the status line, the installer, hooks) can
// find it without talking to it, and the one answer to "is the proxy
// alive?" (Live) that all of them use.
package proxyinfo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Info describes the proxy instance that owns the state directory.
type Info struct {
	PID      int       `json:"pid"`
	Addr     string    `json:"addr"` // host:port it listens on
	Port     int       `json:"port"`
	Upstream string    `json:"upstream"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
}

// Path is where the running proxy's Info lives.
func Path(d xdg.Dirs) string { return d.StatePath("proxyd", "proxyd.json") }

// PortPath records the port chosen the first time, reused by later starts.
func PortPath(d xdg.Dirs) string { return d.StatePath("proxyd", "port") }

// LockPath is held for the lifetime of the one proxy instance per user.
func LockPath(d xdg.Dirs) string { return d.StatePath("proxyd", "instance.lock") }

// Read loads the record; errors.Is(err, fs.ErrNotExist) when none is running.
func Read(d xdg.Dirs) (*Info, error) {
	var i Info
	if err := statefile.ReadJSON(Path(d), &i); err != nil {
		return nil, err
	}
	return &i, nil
}

// ErrNotRunning reports that no live proxy owns the state directory: there
// is no record, or the process it names has exited.
var ErrNotRunning = errors.New("synaxi-proxyd is not running")

// Live answers "is the proxy alive?" for every binary: it returns the
// record when the process it names is alive (PIDAlive), and an error
// wrapping ErrNotRunning when there is no record or its process has exited.
// It reads one small file and signals nothing, so a status line or a hook
// can ask it on every call; whether the proxy also answers HTTP is for
// callers that can afford a request (the installer's /health check).
func Live(d xdg.Dirs) (*Info, error) {
	info, err := Read(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no record in %s)", ErrNotRunning, Path(d))
	}
	if err != nil {
		return nil, err
	}
	if !PIDAlive(info.PID) {
		return nil, fmt.Errorf("%w (pid %d in %s has exited)", ErrNotRunning, info.PID, Path(d))
	}
	return info, nil
}

// PIDAlive reports whether a process with pid exists and has not exited. A
// zombie (exited, not yet reaped by its parent, as a proxy started by a
// process that is still running becomes) is not alive; where /proc is
// missing (macOS) a zombie is taken as alive.
func PIDAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain ") ".
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// RoutedPort returns the loopback port baseURL points at if it is synaxi's
// proxy: the port in the running proxy's record, the recorded port, or the
// configured one.
func RoutedPort(d xdg.Dirs, baseURL string, configPort int) (int, bool) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Scheme != "http" {
		return 0, false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
	default:
		return 0, false
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port <= 0 {
		return 0, false
	}
	for _, p := range knownPorts(d, configPort) {
		if p == port {
			return port, true
		}
	}
	return 0, false
}

func knownPorts(d xdg.Dirs, configPort int) []int {
	var ports []int
	if configPort > 0 {
		ports = append(ports, configPort)
	}
	if info, err := Read(d); err == nil && info.Port > 0 {
		ports = append(ports, info.Port)
	}
	if b, err := os.ReadFile(PortPath(d)); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 {
			ports = append(ports, p)
		}
	}
	return ports
}
