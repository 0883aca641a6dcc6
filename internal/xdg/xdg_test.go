package xdg

import (
	"os"
	"path/filepath"
	"testing"

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

	// A second environment is seen without restarting the process.
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "s2"))
	assert.Equal(t, filepath.Join(root, "s2", App), Resolve().State)
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
