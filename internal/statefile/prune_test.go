package statefile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".session.json8674665223082153551": true,
		".f-abc.json1234567890":            true,
		"session.json":                     false,
		".session.json":                    false,
		".session.json123":                 false,
		".12345678901":                     false, // nothing but digits after the dot
		".lock1234567890x":                 false,
		"":                                 false,
	} {
		assert.Equal(t, want, IsTemp(name), name)
	}
}

func TestPruneTemps(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "noreread", "s@main")
	require.NoError(t, os.MkdirAll(sub, 0o700))
	now := time.Now()
	old, fresh := now.Add(-2*time.Hour), now.Add(-time.Second)
	files := map[string]time.Time{
		filepath.Join(sub, ".f-1.json8674665223082153551"): old,   // removed
		filepath.Join(root, ".ledger.jsonl123456789012"):   old,   // removed
		filepath.Join(sub, ".f-2.json1111111111111111111"): fresh, // a live write: kept
		filepath.Join(sub, "f-1.json"):                     old,   // a real file: kept
		filepath.Join(sub, "f-1.json.lock"):                old,   // kept
	}
	for p, mt := range files {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
		require.NoError(t, os.Chtimes(p, mt, mt))
	}
	assert.Equal(t, 2, PruneTemps(root, time.Hour, now))
	for p, mt := range files {
		_, err := os.Stat(p)
		if mt.Equal(old) && IsTemp(filepath.Base(p)) {
			assert.True(t, os.IsNotExist(err), p)
		} else {
			assert.NoError(t, err, p)
		}
	}
	assert.Zero(t, PruneTemps(filepath.Join(root, "missing"), time.Hour, now))
}
