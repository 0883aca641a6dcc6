package setup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Managed settings that set ANTHROPIC_BASE_URL win over the user's
// settings: routing through settings.json would never take effect, so
// install does not route and says who can change it.
func TestRouteRefusesManagedBaseURL(t *testing.T) {
	e := newEnv(t)
	managed := filepath.Join(t.TempDir(), "managed-settings.json")
	require.NoError(t, os.WriteFile(managed, []byte(`{"env":{"ANTHROPIC_BASE_URL":"https://managed.corp.example"}}`), 0o644))
	was := managedSettings
	managedSettings = managed
	t.Cleanup(func() { managedSettings = was })

	e.opts.Route = true
	err := Install(context.Background(), e.opts)
	assert.ErrorIs(t, err, ErrWarnings)
	assert.Contains(t, e.out.String(), "not routing: managed settings ("+managed+") set ANTHROPIC_BASE_URL=https://managed.corp.example, which wins over your settings and environment")
	data, err := os.ReadFile(filepath.Join(e.claudeDir, "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "ANTHROPIC_BASE_URL")
	_, err = os.Stat(filepath.Join(e.home, ".config", "synaxi", "config.toml"))
	assert.True(t, os.IsNotExist(err), "no proxy.upstream written")
}
