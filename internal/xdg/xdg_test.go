package xdg

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	adrg "github.com/adrg/xdg"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveHonoursEnvironment(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "c"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "s"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "d"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "k"))

	d := Resolve()
	assert.Equal(t, filepath.Join(root, "c", App), d.Config)
	assert.Equal(t, filepath.Join(root, "s", App), d.State)
	assert.Equal(t, filepath.Join(root, "d", App), d.Data)
	assert.Equal(t, filepath.Join(root, "k", App), d.Cache)
	assert.Equal(t, filepath.Join(root, "c", App, "config.toml"), d.ConfigFile())
	assert.Equal(t, filepath.Join(root, "s", App, "a", "b"), d.StatePath("a", "b"))
	assert.Equal(t, filepath.Join(root, "k", App, "mapgen"), d.CachePath("mapgen"))

	// A second environment is seen without restarting the process.
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "s2"))
	assert.Equal(t, filepath.Join(root, "s2", App), Resolve().State)
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestForDefaults pins the defaults on both platforms synaxi ships for, and
// that a relative XDG variable is ignored, not joined to the working dir.
func TestForDefaults(t *testing.T) {
	home := map[string]string{"HOME": "/home/u"}
	assert.Equal(t, Dirs{
		Config: "/home/u/.config/synaxi",
		State:  "/home/u/.local/state/synaxi",
		Data:   "/home/u/.local/share/synaxi",
		Cache:  "/home/u/.cache/synaxi",
	}, For("linux", env(home)))
	assert.Equal(t, Dirs{
		Config: "/home/u/Library/Application Support/synaxi",
		State:  "/home/u/Library/Application Support/synaxi",
		Data:   "/home/u/Library/Application Support/synaxi",
		Cache:  "/home/u/Library/Caches/synaxi",
	}, For("darwin", env(home)))

	set := map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s",
		"XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "rel/k"}
	for _, goos := range []string{"linux", "darwin"} {
		d := For(goos, env(set))
		assert.Equal(t, "/c/synaxi", d.Config, goos)
		assert.Equal(t, "/s/synaxi", d.State, goos)
		assert.Equal(t, "/d/synaxi", d.Data, goos)
		assert.Equal(t, For(goos, env(home)).Cache, d.Cache, "%s: a relative XDG_CACHE_HOME is ignored", goos)
	}
	assert.Equal(t, "/.cache/synaxi", For("linux", env(nil)).Cache, "no HOME: /, as adrg/xdg")
}

// TestForAgreesWithAdrg holds For to adrg/xdg's answer on the platform the
// test runs on (linux in CI, darwin on a Mac), for the environments that
// matter: unset, absolute, relative.
func TestForAgreesWithAdrg(t *testing.T) {
	root := t.TempDir()
	cases := map[string]map[string]string{
		"defaults": {},
		"absolute": {"XDG_CONFIG_HOME": filepath.Join(root, "c"), "XDG_STATE_HOME": filepath.Join(root, "s"),
			"XDG_DATA_HOME": filepath.Join(root, "d"), "XDG_CACHE_HOME": filepath.Join(root, "k"),
			"XDG_BIN_HOME": filepath.Join(root, "b")},
		"relative": {"XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "s", "XDG_DATA_HOME": "d", "XDG_CACHE_HOME": "k",
			"XDG_BIN_HOME": "b"},
	}
	for name, vars := range cases {
		t.Run(name, func(t *testing.T) {
			all := map[string]string{"HOME": filepath.Join(root, "home")}
			for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_BIN_HOME"} {
				all[k] = vars[k]
			}
			for k, v := range all {
				t.Setenv(k, v)
			}
			adrg.Reload()
			t.Cleanup(adrg.Reload)
			assert.Equal(t, Dirs{
				Config: filepath.Join(adrg.ConfigHome, App),
				State:  filepath.Join(adrg.StateHome, App),
				Data:   filepath.Join(adrg.DataHome, App),
				Cache:  filepath.Join(adrg.CacheHome, App),
			}, For(runtime.GOOS, env(all)))
			assert.Equal(t, adrg.BinHome, binHome(env(all)))
		})
	}
}

func TestEnsureCreatesPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	require.NoError(t, Ensure(dir))
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, Ensure(dir))
	fi, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

func TestClaudeDir(t *testing.T) {
	assert.Equal(t, "/h/.claude", ClaudeDir(env(map[string]string{"HOME": "/h"})))
	assert.Equal(t, "/c", ClaudeDir(env(map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"})))
	assert.Equal(t, "/c/projects", ClaudeProjects(env(map[string]string{"CLAUDE_CONFIG_DIR": "/c"})))
}
