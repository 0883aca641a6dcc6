// Package xdg resolves synaxi's directories under the XDG base directories.
// It is the one place any synaxi binary decides where its config, state, data
// and cache live; the plugin's shell launcher (plugin/bin/synaxi-run) follows
// the same rules for its log and downloads, and e2e's launcher test holds the
// two together.
//
// The rules: each XDG_*_HOME variable is used when it holds an absolute path
// and ignored otherwise (the XDG base directory specification); the defaults
// below HOME are the XDG ones (~/.config, ~/.local/state, ~/.local/share,
// ~/.cache), except on macOS, where config, state and data default to
// ~/Library/Application Support and the cache to ~/Library/Caches. These are
// adrg/xdg's rules; the package states them as a function of the OS name, not
// of build tags, so the macOS answer can be computed (and tested) anywhere,
// and its test checks them against adrg/xdg on the platform it runs on.
//
// Two directories that are not synaxi's are resolved here too, so no binary
// computes a home-relative path itself: the user's bin directory (BinHome)
// and Claude Code's configuration directory (ClaudeDir).
//
// Every call reads the environment afresh, so tests and wrappers that change
// it see their own directories.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// Resolve returns synaxi's directories for this process's environment. It
// does not create them; use Ensure for that.
func Resolve() Dirs { return FromEnv(os.Getenv) }

// FromEnv returns synaxi's directories on this OS for the environment getenv
// reads (a binary's test seam).
func FromEnv(getenv func(string) string) Dirs { return For(runtime.GOOS, getenv) }

// For returns synaxi's directories on the OS goos (a runtime.GOOS value) for
// the environment getenv reads.
func For(goos string, getenv func(string) string) Dirs {
	home := homeDir(getenv)
	base := func(env string, def ...string) string {
		if v := getenv(env); filepath.IsAbs(v) {
			return filepath.Join(v, App)
		}
		return filepath.Join(append(append([]string{home}, def...), App)...)
	}
	if goos == "darwin" {
		return Dirs{
			Config: base("XDG_CONFIG_HOME", "Library", "Application Support"),
			State:  base("XDG_STATE_HOME", "Library", "Application Support"),
			Data:   base("XDG_DATA_HOME", "Library", "Application Support"),
			Cache:  base("XDG_CACHE_HOME", "Library", "Caches"),
		}
	}
	return Dirs{
		Config: base("XDG_CONFIG_HOME", ".config"),
		State:  base("XDG_STATE_HOME", ".local", "state"),
		Data:   base("XDG_DATA_HOME", ".local", "share"),
		Cache:  base("XDG_CACHE_HOME", ".cache"),
	}
}

// homeDir is $HOME, or "/" when it is unset (as in adrg/xdg).
func homeDir(getenv func(string) string) string {
	if home := getenv("HOME"); home != "" {
		return home
	}
	return "/"
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
