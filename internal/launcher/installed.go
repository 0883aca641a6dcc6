package launcher

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
)

// Install names a version the launcher has just moved into place.
type Install struct {
	Bin     string // DATA/bin
	Version string // the plugin version, DATA/bin/<Version>/ holds its binaries
	Root    string // the plugin root whose launcher installed it (…/plugins/cache/<market>/<plugin>/<Version> from the marketplace)
	// InUse reports whether a running process's executable lives in dir;
	// nil is RunningFrom.
	InUse func(dir string) bool
}

// Installed finishes an install: `current` names Version, then every other
// version nothing can use any more is pruned (see the package doc). It
// returns what it did, one line each, for the launcher's log.
func Installed(in Install) ([]string, error) {
	if err := renameio.Symlink(in.Version, filepath.Join(in.Bin, "current")); err != nil {
		return nil, fmt.Errorf("point %s at %s: %w", filepath.Join(in.Bin, "current"), in.Version, err)
	}
	return prune(in), nil
}

// pluginCache is the directory of Claude Code's installed copies of this
// plugin, one per version, when root is one of them, else "".
func pluginCache(root, version string) string {
	cache := filepath.Dir(root) // …/plugins/cache/<market>/<plugin>
	if filepath.Base(root) != version || filepath.Base(filepath.Dir(filepath.Dir(cache))) != "cache" ||
		filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(cache)))) != "plugins" {
		return ""
	}
	return cache
}

// versionOf is the version an entry of DATA/bin belongs to: V for V/,
// .V.part, .V.failed, .V.lock and .V.stage.*; "" for anything else.
func versionOf(name string, dir bool) string {
	if !strings.HasPrefix(name, ".") {
		if dir {
			return name
		}
		return ""
	}
	v := strings.TrimPrefix(name, ".")
	if i := strings.Index(v, ".stage."); i > 0 {
		return v[:i]
	}
	for _, suffix := range []string{".part", failedSuffix, ".lock"} {
		if s, ok := strings.CutSuffix(v, suffix); ok {
			return s
		}
	}
	return ""
}

func prune(in Install) []string {
	cache := pluginCache(in.Root, in.Version)
	if cache == "" {
		return nil // not Claude Code's plugin cache: no way to tell what is installed
	}
	inUse := in.InUse
	if inUse == nil {
		inUse = RunningFrom
	}
	entries, _ := os.ReadDir(in.Bin)
	var did []string
	for _, e := range entries {
		v := versionOf(e.Name(), e.IsDir())
		if v == "" || v == in.Version || v == "current" {
			continue
		}
		if _, err := os.Stat(filepath.Join(cache, v)); err == nil {
			continue // a plugin copy of v can still run its hooks
		}
		path := filepath.Join(in.Bin, e.Name())
		if e.IsDir() && e.Name() == v && inUse(path) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			did = append(did, fmt.Sprintf("cannot prune %s: %v", path, err))
			continue
		}
		did = append(did, "pruned "+path)
	}
	return did
}

// RunningFrom reports whether a running process's executable lives in dir:
// /proc/*/exe where there is a /proc (Linux), else ps's command paths
// (macOS prints the executable's full path).
func RunningFrom(dir string) bool {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	if procs, err := filepath.Glob("/proc/[0-9]*/exe"); err == nil && len(procs) > 0 {
		for _, p := range procs {
			if exe, err := os.Readlink(p); err == nil && strings.HasPrefix(exe, prefix) {
				return true
			}
		}
		return false
	}
	out, err := exec.Command("ps", "-axo", "comm=").Output()
	if err != nil {
		return true // cannot tell: keep it
	}
	return bytes.Contains(out, []byte(prefix))
}
