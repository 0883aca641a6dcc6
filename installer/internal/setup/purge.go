package setup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/installer/internal/claude"
)

// purge removes, with Purge, synaxi's own state, data and cache
// directories (the ledger, logs, what it learned, the stable binaries),
// then what synaxi's plugin left in Claude Code's own directories once it
// is gone (residue). synaxi's config directory is the user's settings and
// stays.
func (in *installer) purge() {
	if !in.Purge {
		return
	}
	for _, d := range in.ownDirs() {
		in.removeAll(d)
	}
	in.residue()
}

func (in *installer) removeAll(p string) {
	if _, err := os.Lstat(p); err != nil {
		return
	}
	if err := os.RemoveAll(p); err != nil {
		in.warn(fmt.Errorf("purge %s: %w", p, err))
		return
	}
	in.say("purged %s", p)
}

// residue removes what Claude Code kept for synaxi's plugin alone: the
// logs of its MCP server (mcp-logs-plugin-synaxi-synaxi in Claude Code's
// cache), and, when the plugin was the last one, the plugin bookkeeping
// it left listing nothing (empty registries, empty plugin directories, a
// settings.json holding only the emptied plugin keys). Anything that
// still lists or holds something stays.
func (in *installer) residue() {
	if installed, _ := claude.InstalledOffline(in.cdir); installed || claude.MarketplaceKnownOffline(in.cdir) {
		return // the plugin could not be removed: its bookkeeping is still in use
	}
	logs := filepath.Join(filepath.Dir(in.dirs.Cache), "claude-cli-nodejs")
	dirs, _ := filepath.Glob(filepath.Join(logs, "*", "mcp-logs-plugin-"+strings.ReplaceAll(claude.PluginID, "@", "-")))
	for _, d := range dirs {
		in.removeAll(d)
		removeEmpty(filepath.Dir(d), logs)
	}
	removeEmpty(logs, logs)

	plugins := filepath.Join(in.cdir, "plugins")
	for _, p := range claude.RegistryPaths(in.cdir) {
		if _, err := os.Stat(p); err == nil && emptyRegistry(p) {
			in.removeAll(p)
		}
	}
	for _, d := range []string{"cache", "data", "marketplaces"} {
		removeEmpty(filepath.Join(plugins, d), plugins)
	}
	// Claude Code's sweep marker is all that is left once nothing else is.
	if ents, err := os.ReadDir(plugins); err == nil && len(ents) == 1 && ents[0].Name() == ".last_inuse_sweep" {
		in.removeAll(filepath.Join(plugins, ents[0].Name()))
	}
	removeEmpty(plugins, plugins)
	if p := claude.SettingsPath(in.cdir); onlyEmptyPluginKeys(p) {
		in.removeAll(p)
	}
}

// onlyEmptyPluginKeys reports whether the settings file at p holds nothing
// but the plugin objects the CLI empties (enabledPlugins,
// extraKnownMarketplaces), each empty: what the CLI leaves of a
// settings.json it created for a marketplace install.
func onlyEmptyPluginKeys(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	for k, v := range m {
		if !slices.Contains([]string{"enabledPlugins", "extraKnownMarketplaces"}, k) || !jsonEqual(v, []byte("{}")) {
			return false
		}
	}
	return true
}

// removeEmpty removes dir if it is empty, and so each parent up to and
// including top.
func removeEmpty(dir, top string) {
	for within(dir, top) {
		if os.Remove(dir) != nil {
			return
		}
		if dir == top {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// ownDirs are the directories that hold only what synaxi wrote.
func (in *installer) ownDirs() []string {
	return []string{in.dirs.State, in.dirs.Data, in.dirs.Cache}
}

// ours reports whether dir holds nothing but synaxi's own directories:
// one of them, inside one, or a parent whose every entry leads to one.
func (in *installer) ours(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, own := range in.ownDirs() {
		if within(dir, own) {
			return true
		}
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !slices.ContainsFunc(in.ownDirs(), func(own string) bool { return within(own, p) }) {
			return false
		}
	}
	return len(ents) > 0
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
