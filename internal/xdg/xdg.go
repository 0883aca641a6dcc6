// Package xdg resolves synaxi's directories under the XDG base directories.
//
// Every call reads the XDG_* variables afresh (through adrg/xdg), so tests and
// wrappers that change the environment see their own directories.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	adrg "github.com/adrg/xdg"
)

// App is the name of synaxi's folder inside each base directory.
const App = "synaxi"

// Dirs holds synaxi's four directories.
type Dirs struct {
	Config string // $XDG_CONFIG_HOME/synaxi: config.toml
	State  string // $XDG_STATE_HOME/synaxi: per-session state, ledger, pid files, queue, logs
	Data   string // $XDG_DATA_HOME/synaxi: observations, profiles, publication journal
	Cache  string // $XDG_CACHE_HOME/synaxi: parse cache, calibration
}

var mu sync.Mutex

// Resolve returns synaxi's directories for the current environment. It does
// not create them; use Ensure for that.
func Resolve() Dirs {
	mu.Lock()
	defer mu.Unlock()
	adrg.Reload()
	return Dirs{
		Config: filepath.Join(adrg.ConfigHome, App),
		State:  filepath.Join(adrg.StateHome, App),
		Data:   filepath.Join(adrg.DataHome, App),
		Cache:  filepath.Join(adrg.CacheHome, App),
	}
}

// ConfigFile is the path of config.toml.
func (d Dirs) ConfigFile() string { return filepath.Join(d.Config, "config.toml") }

// StatePath joins elem under the state directory.
func (d Dirs) StatePath(elem ...string) string {
	return filepath.Join(append([]string{d.State}, elem...)...)
}

// DataPath joins elem under the data directory.
func (d Dirs) DataPath(elem ...string) string {
	return filepath.Join(append([]string{d.Data}, elem...)...)
}

// CachePath joins elem under the cache directory.
func (d Dirs) CachePath(elem ...string) string {
	return filepath.Join(append([]string{d.Cache}, elem...)...)
}

// Ensure creates dir and its parents with mode 0700 and tightens an existing
// dir that is more open than that.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("chmod %s: %w", dir, err)
		}
	}
	return nil
}
