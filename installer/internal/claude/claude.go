// Package claude finds the user's Claude Code installation and drives its
// plugin commands: the CLI for changes, and its files for quick, read-only
// checks.
package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// PluginID is synaxi's plugin id in its own marketplace.
const (
	Marketplace = "synaxi"
	PluginID    = "synaxi@synaxi"
)

// ErrNoCLI reports that no Claude Code CLI could be found.
var ErrNoCLI = errors.New("no Claude Code CLI found")

// Fix is the hint shown when the CLI is missing.
const Fix = "install Claude Code (npm install -g @anthropic-ai/claude-code), or pass --claude PATH, or set SYNAXI_CLAUDE=PATH, then run `synaxi install` again"

// Find returns the CLI to use: flag, then $SYNAXI_CLAUDE, then `claude` on
// PATH.
func Find(flag string, getenv func(string) string) (string, error) {
	for _, c := range []string{flag, getenv("SYNAXI_CLAUDE")} {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			return "", fmt.Errorf("%w at %s: %v", ErrNoCLI, c, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("claude")
	if err != nil {
		return "", fmt.Errorf("%w on PATH", ErrNoCLI)
	}
	return p, nil
}

// SettingsPath is the user settings file.
func SettingsPath(dir string) string { return filepath.Join(dir, "settings.json") }

// RegistryPaths are the plugin registry files the CLI rewrites when a
// marketplace or plugin is added.
func RegistryPaths(dir string) []string {
	return []string{
		filepath.Join(dir, "plugins", "known_marketplaces.json"),
		filepath.Join(dir, "plugins", "installed_plugins.json"),
	}
}

// CachePath is where the CLI copies synaxi's plugin.
func CachePath(dir string) string { return filepath.Join(dir, "plugins", "cache", Marketplace) }

// CLI runs one Claude Code binary.
type CLI struct {
	Bin     string
	Env     []string // nil: the current environment
	Timeout time.Duration
}

// Run runs the CLI with args and returns its stdout.
func (c *CLI) Run(ctx context.Context, args ...string) (string, error) {
	t := c.Timeout
	if t == 0 {
		t = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Env = c.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String() + " " + out.String())
		return out.String(), fmt.Errorf("claude %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

// Plugin is one row of `claude plugin list --json`.
type Plugin struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	Scope   string `json:"scope"`
	Enabled bool   `json:"enabled"`
}

// MarketplaceInfo is one row of `claude plugin marketplace list --json`.
type MarketplaceInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Path   string `json:"path"`
}

// Plugins lists installed plugins.
func (c *CLI) Plugins(ctx context.Context) ([]Plugin, error) {
	var ps []Plugin
	return ps, c.runJSON(ctx, &ps, "plugin", "list", "--json")
}

// Marketplaces lists known marketplaces.
func (c *CLI) Marketplaces(ctx context.Context) ([]MarketplaceInfo, error) {
	var ms []MarketplaceInfo
	return ms, c.runJSON(ctx, &ms, "plugin", "marketplace", "list", "--json")
}

// Synaxi returns synaxi's row of the plugin list, if installed.
func (c *CLI) Synaxi(ctx context.Context) (*Plugin, error) {
	ps, err := c.Plugins(ctx)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		if ps[i].ID == PluginID {
			return &ps[i], nil
		}
	}
	return nil, nil
}

func (c *CLI) runJSON(ctx context.Context, v any, args ...string) error {
	out, err := c.Run(ctx, args...)
	if err != nil {
		return err
	}
	// The CLI may print a notice after the JSON; decode the first value.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(v); err != nil {
		return fmt.Errorf("claude %s: decode output: %w", strings.Join(args, " "), err)
	}
	return nil
}

// Version returns the CLI's version line.
func (c *CLI) Version(ctx context.Context) (string, error) {
	out, err := c.Run(ctx, "--version")
	return strings.TrimSpace(out), err
}

// InstalledOffline reports, from Claude Code's files alone (no process),
// whether synaxi@synaxi is installed and enabled for the user.
func InstalledOffline(dir string) (installed, enabled bool) {
	var reg struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if data, err := os.ReadFile(RegistryPaths(dir)[1]); err == nil && json.Unmarshal(data, &reg) == nil {
		_, installed = reg.Plugins[PluginID]
	}
	var s struct {
		Enabled map[string]bool `json:"enabledPlugins"`
	}
	if data, err := os.ReadFile(SettingsPath(dir)); err == nil && json.Unmarshal(data, &s) == nil {
		enabled = s.Enabled[PluginID]
	}
	return installed, enabled
}

// MarketplaceKnownOffline reports, from Claude Code's files alone, whether
// synaxi's marketplace is registered.
func MarketplaceKnownOffline(dir string) bool {
	var known map[string]json.RawMessage
	data, err := os.ReadFile(RegistryPaths(dir)[0])
	if err != nil || json.Unmarshal(data, &known) != nil {
		return false
	}
	_, ok := known[Marketplace]
	return ok
}
