package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/installer/internal/settings"
)

// Uninstall performs `synaxi uninstall`: it retracts the guidance synaxi
// published into project files, stops the proxy, removes the plugin and
// marketplace install added, and puts every journaled file back.
// A file that still holds exactly what install left is restored byte for
// byte (or removed if it did not exist); one changed since keeps those
// changes and loses only synaxi's keys and lines.
func Uninstall(ctx context.Context, opts Options) error {
	in := newInstaller(opts)
	in.retractGuidance()
	if !journal.Exists(in.jdir) {
		in.say("nothing to uninstall: no install journal in %s", in.jdir)
		if !in.NoProxy {
			in.stopProxy(ctx)
		}
		return nil
	}
	return in.locked(func(j *journal.Journal) error {
		if j.ClaudeDir != "" {
			in.cdir = j.ClaudeDir
		}
		return in.uninstall(ctx)
	})
}

func (in *installer) stopProxy(ctx context.Context) {
	bin := ProxyBin(in.dirs)
	if err := proxyctl.Stop(ctx, bin, in.dirs, in.Env); err != nil {
		in.warnf("stop the proxy: %v\n  fix: run `%s stop`", err, bin)
		return
	}
	in.say("proxy: stopped")
}

func (in *installer) uninstall(ctx context.Context) error {
	// Decide before the CLI rewrites anything which files still hold exactly
	// what install left.
	untouched := map[string]bool{}
	for _, f := range in.j.Files {
		untouched[f.Path] = f.Unchanged()
	}
	if !in.NoProxy {
		in.stopProxy(ctx)
	}
	in.removePlugin(ctx)

	var failed []string
	for _, f := range in.j.Files {
		if err := in.restore(f, untouched[f.Path]); err != nil {
			in.warnf("%v", err)
			failed = append(failed, f.Path)
		}
	}
	if in.j.PluginInstalled {
		if err := os.RemoveAll(claude.CachePath(in.cdir)); err != nil {
			in.warnf("remove the plugin cache: %v", err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not restore %v; the journal in %s is kept so `synaxi uninstall` can be run again", failed, in.jdir)
	}
	if err := journal.Remove(in.jdir); err != nil {
		return err
	}
	for _, d := range in.j.RemoveDirs() {
		in.say("kept %s: it holds files synaxi did not put there", d)
	}
	in.say("uninstalled: every file synaxi touched is back as it was")
	if in.warn > 0 {
		return ErrWarnings
	}
	return nil
}

// removePlugin uninstalls the plugin and marketplace, if install added them.
func (in *installer) removePlugin(ctx context.Context) {
	if !in.j.PluginInstalled && !in.j.MarketplaceAdded {
		return
	}
	bin, err := claude.Find(in.Claude, in.Getenv)
	if err != nil && in.j.Claude != "" {
		bin, err = claude.Find(in.j.Claude, in.Getenv)
	}
	if err != nil {
		in.warnf("%v: cannot uninstall the plugin\n  fix: run `claude plugin uninstall %s` and `claude plugin marketplace remove %s`", err, claude.PluginID, claude.Marketplace)
		return
	}
	cli := &claude.CLI{Bin: bin, Env: in.Env}
	if in.j.PluginInstalled {
		if _, err := cli.Run(ctx, "plugin", "uninstall", claude.PluginID); err != nil {
			in.warnf("%v", err)
		} else {
			in.say("plugin: %s uninstalled", claude.PluginID)
		}
	}
	if in.j.MarketplaceAdded {
		if _, err := cli.Run(ctx, "plugin", "marketplace", "remove", claude.Marketplace); err != nil {
			in.warnf("%v", err)
		} else {
			in.say("plugin: marketplace %s removed", claude.Marketplace)
		}
	}
}

// restore puts one journaled file back.
func (in *installer) restore(f *journal.File, untouched bool) error {
	switch {
	case untouched || f.Owned:
		if err := f.Restore(in.jdir); err != nil {
			return err
		}
		if f.Existed {
			in.say("restored %s", f.Path)
		} else {
			in.say("removed %s (it did not exist before install)", f.Path)
		}
		return nil
	case len(f.Keys) > 0:
		return in.revertKeys(f)
	case len(f.Lines) > 0:
		return in.revertLines(f)
	case slices.Contains(claude.RegistryPaths(in.cdir), f.Path) && !f.Existed:
		if emptyRegistry(f.Path) {
			return f.Restore(in.jdir)
		}
		in.say("kept %s: Claude Code manages it and it lists other plugins now", f.Path)
		return nil
	default:
		in.say("kept %s: it changed after install and synaxi made no edits of its own to it", f.Path)
		return nil
	}
}

// revertKeys undoes synaxi's settings.json keys in a file that was changed
// after install, keeping every other change.
func (in *installer) revertKeys(f *journal.File) error {
	src, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	doc, err := settings.Parse(f.Path, src)
	if err != nil {
		return err
	}
	// Undo in reverse order, so a key set inside an object install created
	// goes before the object.
	for i := len(f.Keys) - 1; i >= 0; i-- {
		k := f.Keys[i]
		if k.Container {
			if raw, ok, _ := doc.Get(k.Path...); ok && !jsonEqual(raw, []byte("{}")) {
				continue
			}
		}
		if k.Existed {
			if !json.Valid(k.Original) {
				return fmt.Errorf("journal value of %v is not JSON", k.Path)
			}
			err = doc.Set(json.RawMessage(k.Original), k.Path...)
		} else {
			err = doc.Delete(k.Path...)
		}
		if err != nil {
			return fmt.Errorf("%s: undo %v: %w", f.Path, k.Path, err)
		}
	}
	// What is left may be the original in another layout (Claude Code's CLI
	// re-encodes the file): then the original bytes go back.
	orig, err := f.OriginalBytes(in.jdir)
	if err != nil {
		return err
	}
	switch {
	case !f.Existed && jsonEqual(doc.Bytes(), []byte("{}")):
		if err := f.Restore(in.jdir); err != nil {
			return err
		}
		in.say("removed %s: without synaxi's keys it is empty, and it did not exist before install", f.Path)
		return nil
	case f.Existed && jsonEqual(doc.Bytes(), orig):
		if err := f.Restore(in.jdir); err != nil {
			return err
		}
		in.say("restored %s: without synaxi's keys it equals the original, so the original bytes are back", f.Path)
		return nil
	}
	if err := journal.WriteFile(f.Path, doc.Bytes(), modeOf(f.Path)); err != nil {
		return err
	}
	in.say("restored synaxi's keys in %s and kept the changes made there since install", f.Path)
	return nil
}

// revertLines removes the lines install added to a file changed since.
func (in *installer) revertLines(f *journal.File) error {
	src, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	for _, l := range f.Lines {
		src, _ = removeAdded(src, l)
	}
	if err := journal.WriteFile(f.Path, src, modeOf(f.Path)); err != nil {
		return err
	}
	in.say("removed synaxi's lines from %s and kept the changes made there since install", f.Path)
	return nil
}

// emptyRegistry reports whether a Claude Code registry file lists nothing
// (what the CLI leaves after the last plugin or marketplace is removed).
func emptyRegistry(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			if len(x) > 0 {
				return false
			}
		case []any:
			if len(x) > 0 {
				return false
			}
		case float64:
			if k != "version" {
				return false
			}
		default:
			return false
		}
	}
	return true
}
