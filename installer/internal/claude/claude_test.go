package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFind(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755))
	other := filepath.Join(t.TempDir(), "claude-2")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", dir)

	got, err := Find("", env(nil))
	require.NoError(t, err)
	assert.Equal(t, onPath, got)
	got, err = Find("", env(map[string]string{"SYNAXI_CLAUDE": other}))
	require.NoError(t, err)
	assert.Equal(t, other, got, "SYNAXI_CLAUDE beats PATH")
	got, err = Find(onPath, env(map[string]string{"SYNAXI_CLAUDE": other}))
	require.NoError(t, err)
	assert.Equal(t, onPath, got, "the flag beats SYNAXI_CLAUDE")
	_, err = Find("/nonexistent/claude", env(nil))
	require.ErrorIs(t, err, ErrNoCLI)
	t.Setenv("PATH", t.TempDir())
	_, err = Find("", env(nil))
	require.ErrorIs(t, err, ErrNoCLI)
}

func TestInstalledOffline(t *testing.T) {
	dir := t.TempDir()
	inst, en := InstalledOffline(dir)
	assert.False(t, inst)
	assert.False(t, en)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "plugins"), 0o700))
	require.NoError(t, os.WriteFile(RegistryPaths(dir)[1], []byte(`{"version":2,"plugins":{"synaxi@synaxi":[{"scope":"user"}]}}`), 0o600))
	require.NoError(t, os.WriteFile(SettingsPath(dir), []byte(`{"enabledPlugins":{"synaxi@synaxi":false}}`), 0o600))
	inst, en = InstalledOffline(dir)
	assert.True(t, inst)
	assert.False(t, en)
}
