package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
)

// New wires what the drain and `synaxi ingest` used to wire each for
// itself: the profile under the data directory, the screen's counter in
// the ingest state directory, the configured size limit, extractor and
// publication policy.
func TestNewFromConfig(t *testing.T) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	cfg := config.Default()
	cfg.Ingest.MaxTranscriptMB = 3
	cfg.Learning.Publish = config.PublishReinforced
	p, err := New(d, cfg, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, d.DataPath("profile", "profile.json"), p.Store.Path())
	assert.Equal(t, d.StatePath("ingest", "gate.json"), p.Counts)
	assert.Equal(t, int64(3<<20), p.MaxBytes)
	assert.True(t, p.Reinforced)
	assert.Equal(t, "embedded", p.Extractor.Name())

	cfg.Learning.Publish = config.Default().Learning.Publish
	cfg.Ingest.Extractor = "no-such-extractor"
	_, err = New(d, cfg, func(string) string { return "" })
	assert.Error(t, err, "an unknown extractor is refused, not replaced")
}
