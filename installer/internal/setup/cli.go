package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
)

// The CLI step links synaxi into the user's bin dir. Its undo is the
// journal's: the link is recorded as synaxi's own, so uninstall removes it.

// linkCLI links synaxi into the user's bin dir (xdg.BinHome), so `synaxi`
// runs from any shell: a symlink to the stable copy, journaled as synaxi's
// own. A file of another kind already there is left alone with a warning.
func (in *installer) linkCLI() error {
	dir := xdg.BinHome()
	link, target := filepath.Join(dir, "synaxi"), filepath.Join(BinDir(in.dirs), "synaxi")
	if !isExec(target) {
		return nil // no CLI among the binaries (a partial --from): nothing to link
	}
	if cur, err := os.Readlink(link); err == nil && cur == target {
		in.say("cli: %s already links to %s%s", link, target, pathNote(dir, in.Getenv))
		return nil
	}
	if _, err := os.Lstat(link); err == nil {
		in.warn(hint.Errorf("remove it, or run "+target+" directly", "%s exists and is not synaxi's link; left alone", link))
		return nil
	}
	if err := in.j.MkdirAll(dir, in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, link)
	if err != nil {
		return err
	}
	f.Owned = true
	if err := f.Note("symlink to " + target); err != nil {
		return err
	}
	if err := in.record(); err != nil {
		return err
	}
	if err := os.Symlink(target, link); err != nil {
		return fmt.Errorf("link %s: %w", link, err)
	}
	in.say("cli: linked %s to %s%s", link, target, pathNote(dir, in.Getenv))
	return nil
}

// pathNote tells the user to add dir to PATH when it is not there.
func pathNote(dir string, getenv func(string) string) string {
	if slices.Contains(filepath.SplitList(getenv("PATH")), dir) {
		return ""
	}
	return " (add " + dir + " to PATH to run `synaxi` anywhere)"
}
