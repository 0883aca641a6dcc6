package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// StampFile, in the stable binary directory ($XDG_DATA_HOME/synaxi/bin,
// where `synaxi install` copies the binaries the status line and the
// installer run), holds their version; installer/internal/setup writes it
// under the same name.
const StampFile = "VERSION"

// RefreshStable replaces the stable copies with the binaries in src
// (beside the running hook: this plugin version's) when the stamp names an
// older release version than own (proxyinfo.Older), so a plugin update
// reaches the status line and the installer without running /synaxi:setup
// again. Only files already there are replaced, each atomically, and the
// stamp last; without a stamp (synaxi install never ran, or a development
// build) nothing happens. It reports whether it refreshed.
func RefreshStable(d xdg.Dirs, src, own string) (bool, error) {
	dst := d.DataPath("bin")
	b, err := os.ReadFile(filepath.Join(dst, StampFile))
	if err != nil || !proxyinfo.Older(strings.TrimSpace(string(b)), own) {
		return false, nil
	}
	ents, err := os.ReadDir(dst)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		name := e.Name()
		if name == StampFile || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			continue // not one of this version's binaries
		}
		if err := renameio.WriteFile(filepath.Join(dst, name), data, 0o755, renameio.WithTempDir(dst)); err != nil {
			return false, fmt.Errorf("refresh %s: %w", name, err)
		}
	}
	if err := renameio.WriteFile(filepath.Join(dst, StampFile), []byte(own+"\n"), 0o644, renameio.WithTempDir(dst)); err != nil {
		return false, fmt.Errorf("refresh %s: %w", StampFile, err)
	}
	return true, nil
}
