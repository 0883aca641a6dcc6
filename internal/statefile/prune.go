package statefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempDigits is the least number of trailing digits in the name of a
// temporary file WriteBytes leaves behind when its process is killed
// mid-write: "." + the target's name + a random non-negative int64.
const tempDigits = 10

// IsTemp reports whether name is one of WriteBytes' temporary files.
func IsTemp(name string) bool {
	if len(name) < 2+tempDigits || name[0] != '.' {
		return false
	}
	digits := len(name) - len(strings.TrimRight(name, "0123456789"))
	return digits >= tempDigits && digits < len(name)-1
}

// PruneTemps removes the temporary files under root that a writer killed
// mid-write left behind, once they are older than age (a live writer's
// temporary file exists for milliseconds). It returns how many it removed;
// what it cannot read or remove it leaves.
func PruneTemps(root string, age time.Duration, now time.Time) int {
	cutoff := now.Add(-age)
	n := 0
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() || !IsTemp(d.Name()) {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().Before(cutoff) && os.Remove(path) == nil {
			n++
		}
		return nil
	})
	return n
}

// PruneStale removes the entries of dir that want selects and that were
// last modified longer than age before now (a directory with everything in
// it). It returns how many it removed; what it cannot read or remove it
// leaves.
func PruneStale(dir string, age time.Duration, now time.Time, want func(fs.DirEntry) bool) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	cutoff, n := now.Add(-age), 0
	for _, e := range entries {
		if !want(e) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) && os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}
