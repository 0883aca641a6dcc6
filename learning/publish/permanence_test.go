package publish_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// Issue 24: one ordinary session 8.5 months after the others emptied a
// profile with 3 accepted rules, and SessionStart served nothing. An
// accepted rule must survive a session months later and a thousand
// sessions after it, and still be served at SessionStart.
func TestAcceptedRuleOutlivesMonthsAndAThousandSessions(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	cfg := config.Default().Guidance
	s := store.Open(store.Dir(d))

	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	merge := func(session string, at time.Time, text string) {
		t.Helper()
		_, err := s.Update("ingest "+session, func(p *store.Profile) error {
			store.Merge(p, store.Batch{Session: session, Project: project, At: at, Observations: []store.Observation{{
				Dimension: store.Guards, Text: text, Confidence: 0.6,
				Evidence: []store.Evidence{{Session: session, UUID: session + "-u", Timestamp: at, Quote: text}}}}})
			return nil
		})
		require.NoError(t, err)
	}
	merge("first", t0, "never edit the generated protobuf files")
	p, err := s.Load()
	require.NoError(t, err)
	id := p.Entries[0].ID
	_, err = s.Decide(id, store.Decision{Verdict: store.Accept})
	require.NoError(t, err)

	merge("months-later", t0.AddDate(0, 8, 15), "always run the linter before a commit")
	_, err = s.Update("a thousand sessions", func(p *store.Profile) error {
		for i := range 1000 {
			at := t0.AddDate(0, 9, 0).Add(time.Duration(i) * time.Hour)
			store.Merge(p, store.Batch{Session: fmt.Sprint("later-", i), Project: project, At: at})
		}
		return nil
	})
	require.NoError(t, err)
	_, err = publish.Publish(context.Background(), d, cfg, func(string) string { return "" })
	require.NoError(t, err)

	p, err = s.Load()
	require.NoError(t, err)
	require.NotNil(t, p.Find(id), "the accepted rule is kept")
	assert.Equal(t, store.Confirmed, p.Find(id).State)
	assert.Len(t, p.Entries, 2, "the unseen candidate is kept too")
	assert.Empty(t, p.Pruned)
	text, err := publish.ForSession(d, cfg, project)
	require.NoError(t, err)
	assert.Contains(t, text, "protobuf", "SessionStart still serves the accepted rule")
}
