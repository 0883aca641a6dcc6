package extract_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/store"
)

// Issue 24: `synaxi ingest --all` pruned half the candidates the hooks had
// kept. Back-fill of the same real sessions in two orders (oldest first,
// as --all reads them, and newest first) gives the same candidates: the
// same ids, texts, states and sessions.
func TestBackfillOrderGivesTheSameCandidates(t *testing.T) {
	dir := filepath.Join(filepath.Dir(extract.SharedFixtures(t)), "learning")
	files, _ := extract.Labelled(t, dir)
	for i, f := range files {
		files[i] = filepath.Join(dir, f)
	}
	require.GreaterOrEqual(t, len(files), 5)
	ingest := func(order []string) []store.Entry {
		s := store.Open(t.TempDir())
		learn := &pipeline.Pipeline{Store: s}
		for _, f := range order {
			_, err := learn.Ingest(context.Background(), f, pipeline.Options{Project: "/repo"})
			require.NoError(t, err, f)
		}
		p, err := s.Load()
		require.NoError(t, err)
		es := p.Candidates("")
		slices.SortFunc(es, func(a, b store.Entry) int { return strings.Compare(a.ID, b.ID) })
		for i := range es {
			slices.Sort(es[i].Sessions)
		}
		return es
	}
	forward := ingest(files)
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	backward := ingest(reversed)
	require.NotEmpty(t, forward)
	require.Len(t, backward, len(forward))
	for i := range forward {
		f, b := forward[i], backward[i]
		assert.Equal(t, f.ID, b.ID)
		assert.Equal(t, f.Text, b.Text)
		assert.Equal(t, f.State, b.State)
		assert.Equal(t, f.Sessions, b.Sessions, f.Text)
		assert.InDelta(t, f.Weight, b.Weight, 1e-9, f.Text)
	}
}
