package extract

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/store"
)

// Issue 24: `synaxi ingest --all` pruned half the candidates the hooks had
// kept. Back-fill of the same real sessions in two orders (oldest first,
// as --all reads them, and newest first) gives the same candidates: the
// same ids, texts, states and sessions.
func TestBackfillOrderGivesTheSameCandidates(t *testing.T) {
	dir := filepath.Join(filepath.Dir(sharedFixtures(t)), "learning")
	var files []string
	for _, r := range readLabelled(t, dir) {
		if f := filepath.Join(dir, r.file); !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	require.GreaterOrEqual(t, len(files), 5)
	ingest := func(order []string) []store.Entry {
		s := store.Open(t.TempDir())
		for _, f := range order {
			_, err := Ingest(context.Background(), s, f, Options{Project: "/repo"})
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
