// Package proxyinfo is the record a running synaxi-proxyd leaves in the state
// directory, so other binaries (the status line, the installer, hooks) can
// find it without talking to it.
package proxyinfo

import (
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
