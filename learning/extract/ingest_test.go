package extract_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

// These tests run the embedded extractor inside the one pipeline
// (package pipeline), over this package's test transcripts.

func TestCandidatesWithSecretsAreDroppedWhole(t *testing.T) {
	profiles := store.Open(t.TempDir())
	counts := filepath.Join(t.TempDir(), "gate.json")
	path := extract.Session(t, "s1", "/repo",
		[2]string{"user", "never paste the key sk-ant-api03-AAAABBBBCCCCDDDDEEEE into files"},
		[2]string{"user", "always use pnpm, mein Passwort lautet Sommer2024!"},
		[2]string{"user", "never force push to main"})
	res, err := (&pipeline.Pipeline{Store: profiles, Counts: counts}).Ingest(context.Background(), path, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Kept, 1, "only the rule without a secret is kept")
	assert.Equal(t, "never force push to main", res.Kept[0].Evidence[0].Quote)
	assert.Equal(t, 2, res.Gate.SecretsDropped)
	data, err := os.ReadFile(profiles.Path())
	require.NoError(t, err)
	for _, s := range []string{"AAAABBBBCCCC", "Sommer2024", "REDACTED", "pnpm"} {
		assert.NotContains(t, string(data), s)
	}
	c, err := screen.LoadCounts(counts)
	require.NoError(t, err)
	assert.Equal(t, 2, c.SecretsDropped, "the drop is counted in the state counter")
}

func TestDryRunSavesNothing(t *testing.T) {
	store := store.Open(t.TempDir())
	res, err := (&pipeline.Pipeline{Store: store}).Ingest(context.Background(), extract.Session(t, "s1", "/repo", [2]string{"user", "never use tabs"}), pipeline.Options{DryRun: true})
	require.NoError(t, err)
	require.Len(t, res.Kept, 1)
	assert.Zero(t, res.Version)
	_, err = os.Stat(store.Path())
	assert.True(t, os.IsNotExist(err))
}

func TestIngestIsIdempotentAndRereadsGrowth(t *testing.T) {
	store := store.Open(t.TempDir())
	learn := &pipeline.Pipeline{Store: store}
	dir := t.TempDir()
	path := extract.Session(t, "s1", dir, [2]string{"user", "hello there"})
	res, err := learn.Ingest(context.Background(), path, pipeline.Options{})
	require.NoError(t, err)
	assert.Empty(t, res.Kept, "an empty extraction")
	assert.Equal(t, 1, res.Version)

	res, err = learn.Ingest(context.Background(), path, pipeline.Options{})
	require.NoError(t, err)
	assert.True(t, res.Unchanged)
	res, err = learn.Ingest(context.Background(), path, pipeline.Options{Session: "s1"})
	require.NoError(t, err)
	assert.True(t, res.Unchanged, "known by its size without reading")

	// Synapptic marked an empty extraction processed for good; here the
	// resumed session's growth is read again.
	grown := extract.Session(t, "s1", dir, [2]string{"user", "hello there"}, [2]string{"user", "never force-push to main"})
	require.NoError(t, os.Rename(grown, path))
	res, err = learn.Ingest(context.Background(), path, pipeline.Options{})
	require.NoError(t, err)
	require.Len(t, res.Kept, 1)
	p, _ := store.Load()
	require.Len(t, p.Entries, 1)
	assert.Equal(t, 1, p.Entries[0].Count)

	// Forced re-ingest of the same session does not count it twice.
	_, err = learn.Ingest(context.Background(), path, pipeline.Options{Force: true})
	require.NoError(t, err)
	p, _ = store.Load()
	assert.Equal(t, 1, p.Entries[0].Count)
	assert.Len(t, p.Entries[0].Evidence, 1)
}

// BenchmarkIngest3MB is the whole pipeline for one 3 MB session, the
// profile's locked read-modify-write and versioned save included.
func BenchmarkIngest3MB(b *testing.B) {
	p := extract.ThreeMB(b)
	learn := &pipeline.Pipeline{Store: store.Open(b.TempDir())}
	for b.Loop() {
		if _, err := learn.Ingest(context.Background(), p, pipeline.Options{Force: true}); err != nil {
			b.Fatal(err)
		}
	}
}
