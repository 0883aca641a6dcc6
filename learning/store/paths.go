package store

import (
	"os"
	"path/filepath"

	"github.com/synaxi/synaxi/internal/xdg"
)

// Dir is where synaxi keeps the profile: $XDG_DATA_HOME/synaxi/profile.
func Dir(d xdg.Dirs) string { return d.DataPath("profile") }

// ProjectRoot is the project a working directory belongs to: the nearest
// directory at or above cwd holding .git (a directory, or a file in a
// worktree), else cwd itself, cleaned. A cwd that is not an absolute path
// here is returned cleaned, never resolved against this process's own
// directory.
func ProjectRoot(cwd string) string {
	if cwd == "" {
		return ""
	}
	if !filepath.IsAbs(cwd) {
		// Not a path of this machine (a Windows cwd in a transcript read
		// on Linux, say): joining it to our own working directory would
		// invent a project.
		return filepath.Clean(cwd)
	}
	abs := filepath.Clean(cwd)
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return abs
		}
	}
}
