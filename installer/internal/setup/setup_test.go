package setup

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/fakes"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
)

type env struct {
	home, claudeDir, repo string
	opts                  Options
	out                   *bytes.Buffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("SYNAXI_CLAUDE", "")
	for k, v := range map[string]string{"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state", "XDG_CACHE_HOME": ".cache"} {
		t.Setenv(k, filepath.Join(home, v))
	}
	binDir, claudeBin := fakes.Bins(t)
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".claude-plugin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".claude-plugin", "marketplace.json"), []byte(`{"name":"synaxi"}`), 0o644))
	e := &env{home: home, claudeDir: filepath.Join(home, ".claude"), repo: repo, out: &bytes.Buffer{}}
	e.opts = Options{Claude: claudeBin, BinSource: binDir, RepoRoot: repo, Out: e.out}
	t.Cleanup(func() { _ = Uninstall(context.Background(), Options{Out: &bytes.Buffer{}, NoPlugin: true}) })
	return e
}

func (e *env) settings(t *testing.T) []byte {
	data, err := os.ReadFile(filepath.Join(e.claudeDir, "settings.json"))
	if err != nil {
		t.Fatalf("read settings: %v", err)
	}
	return data
}

// snapshot maps every file under HOME except the XDG state dir (the proxy's
// runtime record) to its bytes.
func (e *env) snapshot(t *testing.T, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.home, p)
		if rel == filepath.Join(".local", "state") {
			return filepath.SkipDir
		}
		for _, s := range skip {
			if strings.HasPrefix(rel, s) {
				return nil
			}
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		} else if d.IsDir() && rel != "." {
			out[rel+"/"] = ""
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestInstallUninstallRestoresByteExact(t *testing.T) {
	tests := []struct {
		name     string
		settings string // "" = no settings.json
		config   string // "" = no config.toml
		route    bool
		wantPrev string
		wantWarn bool
	}{
		{name: "no settings file"},
		{name: "no settings file, routed", route: true},
		{name: "odd formatting, no status line",
			settings: "{\"model\":\"opus\",\n\n      \"env\" :{ \"FOO\":\"bar\"}  }"},
		{name: "previous status line", route: true,
			settings: "{\n    \"statusLine\": {\"type\": \"command\", \"command\": \"~/.claude/mine.sh --x 'y'\", \"padding\": 1},\n    \"model\": \"opus\"\n}\n",
			wantPrev: "~/.claude/mine.sh --x 'y'"},
		{name: "previous status line and a hand-written config",
			settings: "{\"statusLine\":{\"type\":\"command\",\"command\":\"echo mine\"}}",
			config:   "# my config\n[proxy]\nport = 7777 # fixed\n\n[statusline]\ncolor = \"never\"\n",
			wantPrev: "echo mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			d := xdg.Resolve()
			if tt.settings != "" {
				require.NoError(t, os.MkdirAll(e.claudeDir, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(e.claudeDir, "settings.json"), []byte(tt.settings), 0o644))
			}
			if tt.config != "" {
				require.NoError(t, os.MkdirAll(d.Config, 0o700))
				require.NoError(t, os.WriteFile(d.ConfigFile(), []byte(tt.config), 0o600))
			}
			before := e.snapshot(t)

			e.opts.Route = tt.route
			err := Install(context.Background(), e.opts)
			if tt.wantWarn {
				require.ErrorIs(t, err, ErrWarnings, e.out.String())
			} else {
				require.NoError(t, err, e.out.String())
			}

			s := e.settings(t)
			assert.Equal(t, StatusLineCommand(d), str(t, s, "statusLine", "command"))
			assert.Equal(t, "command", str(t, s, "statusLine", "type"))
			l, err := config.Load(d.ConfigFile(), func(string) string { return "" })
			require.NoError(t, err)
			assert.Equal(t, tt.wantPrev, l.StatusLine.PreviousCommand)
			if tt.config != "" {
				cfg, _ := os.ReadFile(d.ConfigFile())
				assert.Contains(t, string(cfg), "port = 7777 # fixed", "the hand-written lines stay")
				assert.Equal(t, 7777, l.Proxy.Port)
			}
			if tt.settings != "" && strings.Contains(tt.settings, "//") {
				assert.Contains(t, string(s), "/* keep */")
			}
			if tt.route {
				assert.True(t, strings.HasPrefix(str(t, s, "env", "ANTHROPIC_BASE_URL"), "http://127.0.0.1:"))
				assert.Equal(t, "true", str(t, s, "env", "ENABLE_TOOL_SEARCH"))
			} else {
				assert.Empty(t, str(t, s, "env", "ANTHROPIC_BASE_URL"))
			}
			for _, b := range []string{"synaxi-statusline", "synaxi-proxyd"} {
				assert.FileExists(t, filepath.Join(BinDir(d), b))
			}

			// A second install changes nothing and backs nothing up again.
			afterFirst := e.snapshot(t, filepath.Join(".local", "share", "synaxi", "install", "journal.json"))
			e.out.Reset()
			err = Install(context.Background(), e.opts)
			if !tt.wantWarn {
				require.NoError(t, err, e.out.String())
			}
			assert.Equal(t, afterFirst, e.snapshot(t, filepath.Join(".local", "share", "synaxi", "install", "journal.json")))

			e.out.Reset()
			err = Uninstall(context.Background(), e.opts)
			if !tt.wantWarn {
				require.NoError(t, err, e.out.String())
			}
			after := e.snapshot(t)
			// install leaves synaxi's own (now empty) data dir behind.
			delete(after, filepath.Join(".local", "share", "synaxi")+"/")
			delete(after, filepath.Join(".local", "share")+"/")
			delete(after, ".local/")
			assert.Equal(t, before, after, e.out.String())
		})
	}
}

func TestUninstallKeepsLaterEdits(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, os.MkdirAll(e.claudeDir, 0o755))
	orig := "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo mine\"}\n}\n"
	p := filepath.Join(e.claudeDir, "settings.json")
	require.NoError(t, os.WriteFile(p, []byte(orig), 0o644))
	e.opts.Route = true
	require.NoError(t, Install(context.Background(), e.opts), e.out.String())

	// The user changes the model after install.
	doc, err := settings.Parse(p, e.settings(t))
	require.NoError(t, err)
	require.NoError(t, doc.Set("sonnet", "model"))
	require.NoError(t, os.WriteFile(p, doc.Bytes(), 0o644))

	require.NoError(t, Uninstall(context.Background(), e.opts), e.out.String())
	got := e.settings(t)
	assert.Equal(t, "sonnet", str(t, got, "model"), "the later edit stays")
	assert.Equal(t, "echo mine", str(t, got, "statusLine", "command"), "the user's status line is back")
	_, routed, _ := parseDoc(t, got).Get("env", "ANTHROPIC_BASE_URL")
	assert.False(t, routed)
	_, hasEnv, _ := parseDoc(t, got).Get("env")
	assert.False(t, hasEnv, "the env object install created is gone")
	for _, k := range []string{"enabledPlugins", "extraKnownMarketplaces"} {
		_, has, _ := parseDoc(t, got).Get(k)
		assert.False(t, has, "the CLI's emptied %s is gone", k)
	}
	assert.Contains(t, e.out.String(), "kept the changes made there since install")
}

func TestInstallWithoutClaudeCLI(t *testing.T) {
	e := newEnv(t)
	e.opts.Claude = ""
	t.Setenv("PATH", t.TempDir())
	err := Install(context.Background(), e.opts)
	require.ErrorIs(t, err, ErrWarnings)
	assert.Contains(t, e.out.String(), "no Claude Code CLI found on PATH")
	assert.Contains(t, e.out.String(), "--claude PATH")
	assert.Equal(t, StatusLineCommand(xdg.Resolve()), str(t, e.settings(t), "statusLine", "command"), "the rest still happens")
}

func TestInstallRefusesConflictingPreviousCommand(t *testing.T) {
	e := newEnv(t)
	d := xdg.Resolve()
	require.NoError(t, os.MkdirAll(e.claudeDir, 0o755))
	settings := "{\"statusLine\":{\"type\":\"command\",\"command\":\"echo theirs\"}}"
	require.NoError(t, os.WriteFile(filepath.Join(e.claudeDir, "settings.json"), []byte(settings), 0o644))
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	cfg := "[statusline]\nprevious_command = \"echo other\"\n"
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte(cfg), 0o600))
	e.opts.NoPlugin = true
	require.ErrorIs(t, Install(context.Background(), e.opts), ErrWarnings)
	assert.Equal(t, "echo theirs", str(t, e.settings(t), "statusLine", "command"))
	got, _ := os.ReadFile(d.ConfigFile())
	assert.Equal(t, cfg, string(got), "a hand-written file is never overwritten")
}

func TestInstallRefusesBrokenSettings(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, os.MkdirAll(e.claudeDir, 0o755))
	broken := "{\"model\": \"opus\",\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.claudeDir, "settings.json"), []byte(broken), 0o644))
	e.opts.NoPlugin = true
	err := Install(context.Background(), e.opts)
	require.ErrorContains(t, err, "settings.json:2:1: unexpected end of JSON input")
	require.ErrorContains(t, err, "nothing was changed")
	assert.Equal(t, broken, string(e.settings(t)))
	require.NoError(t, Uninstall(context.Background(), e.opts))
	assert.Equal(t, broken, string(e.settings(t)))
}

func TestJournalBacksUpOnce(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, Install(context.Background(), e.opts), e.out.String())
	j, err := journal.Load(journal.Dir(xdg.Resolve()))
	require.NoError(t, err)
	n := len(j.Files)
	require.NoError(t, Install(context.Background(), e.opts))
	j, err = journal.Load(journal.Dir(xdg.Resolve()))
	require.NoError(t, err)
	assert.Len(t, j.Files, n)
	assert.True(t, j.PluginInstalled)
	assert.True(t, j.MarketplaceAdded)
}

func TestInstallHonoursClaudeConfigDir(t *testing.T) {
	e := newEnv(t)
	cdir := filepath.Join(e.home, "elsewhere")
	t.Setenv("CLAUDE_CONFIG_DIR", cdir)
	require.NoError(t, Install(context.Background(), e.opts), e.out.String())
	data, err := os.ReadFile(filepath.Join(cdir, "settings.json"))
	require.NoError(t, err)
	assert.Equal(t, StatusLineCommand(xdg.Resolve()), str(t, data, "statusLine", "command"))
	assert.Equal(t, "true", string(mustGet(t, data, "enabledPlugins", "synaxi@synaxi")))
	assert.NoDirExists(t, e.claudeDir)
	require.NoError(t, Uninstall(context.Background(), e.opts), e.out.String())
	assert.NoFileExists(t, filepath.Join(cdir, "settings.json"))
	assert.NoDirExists(t, cdir, "install created it, uninstall removes it")
}

func mustGet(t *testing.T, src []byte, path ...string) []byte {
	t.Helper()
	raw, ok, err := parseDoc(t, src).Get(path...)
	require.NoError(t, err)
	require.True(t, ok, "%v missing", path)
	return raw
}

func parseDoc(t *testing.T, src []byte) *settings.Doc {
	t.Helper()
	d, err := settings.Parse("settings.json", src)
	require.NoError(t, err)
	return d
}

func str(t *testing.T, src []byte, keys ...string) string {
	t.Helper()
	return parseDoc(t, src).String(keys...)
}
