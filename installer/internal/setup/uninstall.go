package setup

import (
	"context"
	"fmt"
	"slices"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
)

// Uninstall performs `synaxi uninstall`: it retracts the guidance synaxi
// published into project files, stops the proxy, removes synaxi's plugin
// and marketplace from Claude Code (whether install or a marketplace
// install added them), and puts every journaled file back. A file that
// still holds exactly what install left is restored byte for byte (or
// removed if it did not exist); one changed since keeps those changes and
// loses only synaxi's keys and lines. With Purge, synaxi's own state, data
// and cache directories go too; nothing of the user's is ever removed.
func Uninstall(ctx context.Context, opts Options) error {
	in := newInstaller(opts)
	in.retractGuidance()
	if !journal.Exists(in.jdir) {
		in.say("no install journal in %s: no file of yours to put back", in.jdir)
		if !in.NoProxy {
			in.stopProxy(ctx)
		}
		in.removeLeftOver(ctx)
		in.purge()
		if in.warns > 0 {
			return ErrWarnings
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
	in.removePlugin(ctx, in.j.PluginInstalled, in.j.MarketplaceAdded)

	var failed []string
	for _, f := range in.j.Files {
		if err := in.restore(f, untouched[f.Path]); err != nil {
			in.warn(err)
			failed = append(failed, f.Path)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not restore %v; the journal in %s is kept so `synaxi uninstall` can be run again", failed, in.jdir)
	}
	in.removeLeftOver(ctx)
	if err := journal.Remove(in.jdir); err != nil {
		return err
	}
	in.purge()
	for _, d := range in.j.RemoveDirs() {
		if in.ours(d) {
			in.say("kept %s: it holds synaxi's own data (the savings ledger, what it learned, logs); `synaxi uninstall --purge` removes it", d)
		} else {
			in.say("kept %s: it holds files that are not synaxi's", d)
		}
	}
	if in.warns > 0 {
		in.say("uninstalled, but not all of it (see the warnings above): every file synaxi touched is back as it was")
		return ErrWarnings
	}
	in.say("uninstalled: every file synaxi touched is back as it was")
	return nil
}

// restore puts one journaled file back: the undo of every step that wrote
// a file.
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
