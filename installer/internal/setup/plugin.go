package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/hint"
)

// The plugin step registers the marketplace and installs or enables the
// plugin through Claude Code's own CLI (installPlugin); its undo runs the
// CLI's uninstall and marketplace remove (removePlugin).

// repoRoot is the checkout to register as the marketplace: --repo, else
// the checkout this synaxi was built in, else the one an earlier install
// registered; "" in a marketplace install.
func (in *installer) repoRoot() string {
	if in.RepoRoot != "" {
		return in.RepoRoot
	}
	if root := Checkout(); root != "" {
		return root
	}
	return in.j.RepoRoot
}

// installPlugin registers the marketplace and installs the plugin through
// the CLI. A missing CLI is reported with the fix and skipped.
func (in *installer) installPlugin(ctx context.Context) error {
	if installed, enabled := claude.InstalledOffline(in.cdir); installed && enabled && in.repoRoot() == "" {
		in.say("plugin: %s already installed and enabled (from its marketplace)", claude.PluginID)
		return nil
	}
	bin, err := claude.Find(in.Claude, in.Getenv)
	if err != nil {
		in.warn(hint.Wrap(fmt.Errorf("%w: the plugin was not installed", err), claude.Fix))
		return nil
	}
	in.j.Claude = bin
	root := in.repoRoot()
	if root == "" {
		return in.enableMarketplacePlugin(ctx, &claude.CLI{Bin: bin, Env: in.Env})
	}
	in.j.RepoRoot = root
	cli := &claude.CLI{Bin: bin, Env: in.Env}

	ms, err := cli.Marketplaces(ctx)
	if err != nil {
		in.warn(hint.Wrap(err, "check that `"+bin+" plugin marketplace list` works"))
		return nil
	}
	haveMarket := slices.ContainsFunc(ms, func(m claude.MarketplaceInfo) bool {
		return m.Name == claude.Marketplace && filepath.Clean(m.Path) == filepath.Clean(root)
	})
	p, err := cli.Synaxi(ctx)
	if err != nil {
		in.warn(err)
		return nil
	}
	if haveMarket && p != nil && p.Enabled {
		in.say("plugin: %s %s already installed and enabled (%s scope)", claude.PluginID, p.Version, p.Scope)
		return nil
	}
	// The CLI rewrites these files; keep their originals first.
	files, err := in.backupClaudeFiles()
	if err != nil {
		return err
	}
	// The CLI adds these objects; where they were absent, uninstall removes
	// them again once the CLI has emptied them.
	if cur, err := settings.Read(files[0].Path); err == nil {
		for _, k := range []string{"extraKnownMarketplaces", "enabledPlugins"} {
			if _, ok, err := cur.Get(k); err == nil && !ok {
				files[0].AddKey(journal.Key{Path: []string{k}, Container: true})
			}
		}
	}
	if !haveMarket {
		known := slices.ContainsFunc(ms, func(m claude.MarketplaceInfo) bool { return m.Name == claude.Marketplace })
		ok, err := in.runCLI(ctx, cli, files, &in.j.MarketplaceAdded, !known, "plugin", "marketplace", "add", root)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: marketplace %s registered from %s", claude.Marketplace, root)
	}
	switch {
	case p == nil:
		ok, err := in.runCLI(ctx, cli, files, &in.j.PluginInstalled, true, "plugin", "install", claude.PluginID)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: %s installed", claude.PluginID)
	case !p.Enabled:
		ok, err := in.runCLI(ctx, cli, files, nil, false, "plugin", "enable", claude.PluginID)
		if !ok || err != nil {
			return err
		}
		in.say("plugin: %s enabled", claude.PluginID)
	}
	return nil
}

// enableMarketplacePlugin enables the plugin a marketplace install put in
// place but left disabled; with no checkout, install never adds a
// marketplace of its own.
func (in *installer) enableMarketplacePlugin(ctx context.Context, cli *claude.CLI) error {
	p, err := cli.Synaxi(ctx)
	switch {
	case err != nil:
		in.warn(err)
		return nil
	case p == nil:
		in.warn(hint.New(claude.PluginID+" is not installed", PluginInstallHint))
		return nil
	case p.Enabled:
		in.say("plugin: %s %s already installed and enabled (%s scope)", claude.PluginID, p.Version, p.Scope)
		return nil
	}
	files, err := in.backupClaudeFiles()
	if err != nil {
		return err
	}
	ok, err := in.runCLI(ctx, cli, files, nil, false, "plugin", "enable", claude.PluginID)
	if ok && err == nil {
		in.say("plugin: %s enabled", claude.PluginID)
	}
	return err
}

// runCLI runs one CLI command that changes Claude Code's files, journaled
// on both sides: before it runs, the journal is saved with flag set (when
// mark), so uninstall knows to undo it even if install stops right after;
// afterwards, what the CLI left in each file is recorded. A failed command
// is warned about (with the command to run by hand) and reports false, and
// its flag goes back to what it was.
func (in *installer) runCLI(ctx context.Context, cli *claude.CLI, files []*journal.File, flag *bool, mark bool, args ...string) (bool, error) {
	was := false
	if flag != nil {
		was = *flag
		*flag = was || mark
	}
	if err := in.record(); err != nil {
		return false, err
	}
	cmd := "claude " + strings.Join(args, " ")
	_, runErr := cli.Run(ctx, args...)
	change := cmd
	if runErr != nil {
		change = ""
		if flag != nil {
			*flag = was
		}
	}
	for i, f := range files {
		note := ""
		if i == 0 {
			note = change
		}
		if err := f.Note(note); err != nil {
			return false, fmt.Errorf("journal what `%s` changed: %w", cmd, err)
		}
	}
	if err := in.record(); err != nil {
		return false, err
	}
	if runErr != nil {
		in.warn(hint.Wrap(runErr, "run `"+cli.Bin+" "+strings.Join(args, " ")+"` by hand to see why"))
		return false, nil
	}
	return true, nil
}

// backupClaudeFiles journals settings.json and the plugin registry files;
// settings.json comes first.
func (in *installer) backupClaudeFiles() ([]*journal.File, error) {
	if err := in.j.MkdirAll(in.cdir, in.record); err != nil {
		return nil, err
	}
	var out []*journal.File
	for _, p := range append([]string{claude.SettingsPath(in.cdir)}, claude.RegistryPaths(in.cdir)...) {
		f, err := in.j.Backup(in.jdir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	// The CLI creates these; record them so uninstall removes what is empty.
	for _, d := range []string{"plugins/cache", "plugins/marketplaces", "plugins/data"} {
		p := filepath.Join(in.cdir, d)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			for _, q := range []string{filepath.Dir(p), p} {
				if _, err := os.Stat(q); errors.Is(err, fs.ErrNotExist) && !slices.Contains(in.j.Dirs, q) {
					in.j.Dirs = append(in.j.Dirs, q)
				}
			}
		}
	}
	return out, nil
}

// removePlugin takes synaxi's plugin and its marketplace out of Claude
// Code through its CLI: before the journal's files go back, the ones
// install added itself (journaled; the files it backed up predate them);
// afterwards (removeLeftOver), the ones a marketplace install put there, which
// no file of the journal predates. Without a CLI it names the commands.
func (in *installer) removePlugin(ctx context.Context, plugin, market bool) {
	if !plugin && !market {
		return
	}
	var cmds []string
	if plugin {
		cmds = append(cmds, "claude plugin uninstall "+claude.PluginID)
	}
	if market {
		cmds = append(cmds, "claude plugin marketplace remove "+claude.Marketplace)
	}
	bin, err := claude.Find(in.Claude, in.Getenv)
	if err != nil && in.j != nil && in.j.Claude != "" {
		bin, err = claude.Find(in.j.Claude, in.Getenv)
	}
	if err != nil {
		in.warn(hint.Wrap(fmt.Errorf("%w: cannot remove synaxi's plugin from Claude Code", err),
			"run `"+strings.Join(cmds, "` and `")+"`"))
		return
	}
	cli := &claude.CLI{Bin: bin, Env: in.Env}
	if plugin {
		args := []string{"plugin", "uninstall", claude.PluginID}
		if p, err := cli.Synaxi(ctx); err == nil && p != nil && p.Scope != "" && p.Scope != "user" {
			args = append(args, "--scope", p.Scope)
		}
		if _, err := cli.Run(ctx, args...); err != nil {
			in.warn(hint.Wrap(err, "run `claude "+strings.Join(args, " ")+"`"))
		} else {
			in.say("plugin: %s uninstalled", claude.PluginID)
			// The CLI keeps the copy a running session may still use; no
			// session of synaxi's is left to use it.
			if err := os.RemoveAll(claude.CachePath(in.cdir)); err != nil {
				in.warn(fmt.Errorf("remove the plugin cache: %w", err))
			}
		}
	}
	if market {
		if _, err := cli.Run(ctx, "plugin", "marketplace", "remove", claude.Marketplace); err != nil {
			in.warn(hint.Wrap(err, "run `claude plugin marketplace remove "+claude.Marketplace+"`"))
		} else {
			in.say("plugin: marketplace %s removed", claude.Marketplace)
		}
	}
}

// removeLeftOver removes what of synaxi is still in Claude Code's files
// once the journal's files went back: the plugin and marketplace a
// marketplace install added.
func (in *installer) removeLeftOver(ctx context.Context) {
	plugin, _ := claude.InstalledOffline(in.cdir)
	in.removePlugin(ctx, plugin, claude.MarketplaceKnownOffline(in.cdir))
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
