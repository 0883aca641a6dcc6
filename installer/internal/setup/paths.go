// Package setup implements `synaxi install` and `synaxi uninstall`: copying
// the binaries to a stable place, installing the plugin through Claude
// Code's own CLI, composing the status line, optional routing through the
// proxy, and undoing all of it from the journal.
package setup

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/internal/xdg"
)

// Binaries are the executables `make build` puts in plugin/bin and install
// copies to the stable bin directory.
var Binaries = []string{
	"synaxi", "synaxi-proxyd", "synaxi-noreread", "synaxi-statusline",
	"synaxi-session", "synaxi-mcp", "synaxi-mapgen",
}

// StampFile, in BinDir, holds the version of the binaries there; the
// SessionStart hook of a newer plugin version replaces the copies with its
// own (hooks/internal/session.RefreshStable) and rewrites it.
const StampFile = "VERSION"

// BinDir is the stable binary directory, $XDG_DATA_HOME/synaxi/bin: the
// status line points here because the plugin's own directory changes with
// every plugin version.
func BinDir(d xdg.Dirs) string { return d.DataPath("bin") }

// StatusLineCommand is the settings.json statusLine.command install writes.
func StatusLineCommand(d xdg.Dirs) string {
	return shellQuote(filepath.Join(BinDir(d), "synaxi-statusline"))
}

// ProxyBin is the proxy binary to run: the stable copy, else the one beside
// this executable, else synaxi-proxyd on PATH.
func ProxyBin(d xdg.Dirs) string {
	stable := filepath.Join(BinDir(d), "synaxi-proxyd")
	if isExec(stable) {
		return stable
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "synaxi-proxyd"); isExec(p) {
			return p
		}
	}
	return "synaxi-proxyd"
}

// RepoRootFrom finds the checkout that holds .claude-plugin/marketplace.json
// at or above dir.
func RepoRootFrom(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".claude-plugin", "marketplace.json")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Checkout is the synaxi checkout this executable was built in (it runs
// from its plugin/bin), "" when it runs from a marketplace install.
func Checkout() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return RepoRootFrom(filepath.Dir(exe))
}

// PluginHint says how to get the plugin installed: `synaxi install` from a
// checkout, the marketplace otherwise.
func PluginHint() string {
	if Checkout() != "" {
		return "synaxi install"
	}
	return PluginInstallHint
}

// PluginInstallHint says how a user without a checkout gets the plugin.
const PluginInstallHint = "in Claude Code, run `/plugin marketplace add synaxi/synaxi` and `/plugin install synaxi@synaxi`, start a new session, then run `/synaxi:setup`"

// RebuildHint says how to get a complete, current set of binaries: from a
// checkout, build and install; from a marketplace install, the plugin's
// own update (its launcher fetches the binaries) and /synaxi:setup.
func RebuildHint() string {
	if Checkout() != "" {
		return "run `make build && plugin/bin/synaxi install` in the checkout"
	}
	return "run `claude plugin update synaxi@synaxi`, start a Claude Code session (the plugin fetches its binaries), then run `/synaxi:setup` again"
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// shellQuote quotes p for the shell that runs statusLine.command, only when
// it needs it.
func shellQuote(p string) string {
	if !strings.ContainsAny(p, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
