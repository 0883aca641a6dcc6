package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/internal/hint"
)

// The binaries step copies the built executables to BinDir, stamped with
// their version. Its undo is the journal's: every copy is recorded as
// synaxi's own, so uninstall removes it (restore in uninstall.go).

// binSource is the directory install copies the binaries from: --from, else
// the directory of this executable (plugin/bin in a checkout; the plugin's
// data directory in a marketplace install, where the launcher put them).
func (in *installer) binSource() (string, error) {
	if in.BinSource != "" {
		return in.BinSource, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe), nil
}

// preflight checks what install needs before its first change: the
// binaries the status line and the proxy run, and a way to have the
// plugin (already installed, or a checkout to install it from).
func (in *installer) preflight(src string) error {
	if same, _ := sameDir(src, BinDir(in.dirs)); !same {
		for _, name := range []string{"synaxi-statusline", "synaxi-proxyd"} {
			if !isExec(filepath.Join(src, name)) {
				return hint.Errorf(RebuildHint(), "%s is missing from %s", name, src)
			}
		}
	}
	if in.NoPlugin || in.repoRoot() != "" {
		return nil
	}
	if installed, _ := claude.InstalledOffline(in.cdir); !installed {
		return hint.New("the synaxi plugin is not installed in Claude Code, and this synaxi was not built in a checkout to install it from", PluginInstallHint)
	}
	return nil
}

// copyBinaries copies the built binaries from src to the stable bin dir.
func (in *installer) copyBinaries(src string) error {
	dst := BinDir(in.dirs)
	if err := in.j.MkdirAll(dst, in.record); err != nil {
		return err
	}
	if same, _ := sameDir(src, dst); same {
		in.say("binaries: already running from %s", dst)
		return nil
	}
	copied, kept := 0, 0
	for _, name := range Binaries {
		from := filepath.Join(src, name)
		data, err := os.ReadFile(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue // preflight checked the ones install needs
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", from, err)
		}
		to := filepath.Join(dst, name)
		if cur, err := os.ReadFile(to); err == nil && bytes.Equal(cur, data) {
			kept++
			continue
		}
		if err := in.writeOwned(to, data, 0o755, "copied from "+from); err != nil {
			return err
		}
		copied++
	}
	if err := in.stamp(dst); err != nil {
		return err
	}
	in.say("binaries: %d copied, %d already current, in %s", copied, kept, dst)
	return nil
}

// stamp writes the version of the copies into dst's StampFile, journaled
// as synaxi's own, so the SessionStart hook of a newer plugin version knows
// to refresh them.
func (in *installer) stamp(dst string) error {
	if in.Version == "" {
		return nil
	}
	to := filepath.Join(dst, StampFile)
	data := []byte(in.Version + "\n")
	if cur, err := os.ReadFile(to); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	return in.writeOwned(to, data, 0o644, "the version of the copied binaries")
}

// writeOwned writes a file that is synaxi's own, journaled first so
// uninstall removes it (or puts back what was there).
func (in *installer) writeOwned(to string, data []byte, mode fs.FileMode, why string) error {
	f, err := in.j.Backup(in.jdir, to)
	if err != nil {
		return err
	}
	f.Owned = true
	f.Wrote(data, why)
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(to, data, mode)
}

func sameDir(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
