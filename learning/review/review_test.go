package review

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func obs(dim, text, session, quote, answered string) store.Observation {
	return store.Observation{Dimension: dim, Text: text, Confidence: 0.6, Evidence: []store.Evidence{
		{Session: session, UUID: "u-" + session, Timestamp: t0, Quote: quote, Answered: answered}}}
}

func rig(t *testing.T) (xdg.Dirs, *store.Store) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	s := store.Open(store.Dir(d))
	_, err := s.Update("ingest", func(p *store.Profile) error {
		o := obs(store.Guards, "always run rm -rf build before building", "s1", "always run rm -rf build before building", "I built it.")
		o.Flags = []store.Flag{{Kind: store.FlagDangerous, Reason: "a recursive delete (rm -rf)"}}
		store.Merge(p, store.Batch{Session: "s1", Project: "/a", At: t0, Observations: []store.Observation{
			obs(store.Guards, "never use tabs", "s1", "no, never use tabs", "I indented the file with tabs."), o}})
		store.Merge(p, store.Batch{Session: "s2", Project: "/b", At: t0, Observations: []store.Observation{
			obs(store.Guards, "never use tabs", "s2", "never use tabs!", "Done.")}})
		return nil
	})
	require.NoError(t, err)
	return d, s
}

func TestLoadListsCandidatesWithEvidence(t *testing.T) {
	_, s := rig(t)
	l, err := Load(s, "/a")
	require.NoError(t, err)
	require.Len(t, l.Candidates, 2)
	flagged, tabs := l.Candidates[0], l.Candidates[1]
	assert.Equal(t, "a recursive delete (rm -rf)", flagged.Danger, "flagged first, with its reason")
	assert.Equal(t, "never use tabs", tabs.Text)
	require.Len(t, tabs.Quotes, 1)
	assert.Equal(t, "no, never use tabs", tabs.Quotes[0].Quote)
	assert.Equal(t, "I indented the file with tabs.", tabs.Quotes[0].Answered)
	assert.Equal(t, []string{"/b"}, tabs.AlsoIn, "the same rule in another project")
	all, err := Load(s, "")
	require.NoError(t, err)
	assert.Len(t, all.Candidates, 3)
}

// An agent (the MCP tools) may not accept a flagged candidate; the user
// may.
func TestDecideByAgentAndByUser(t *testing.T) {
	_, s := rig(t)
	l, _ := Load(s, "/a")
	flagged, tabs := l.Candidates[0].ID, l.Candidates[1].ID
	_, err := Decide(s, flagged, store.Decision{Verdict: store.Accept}, true)
	require.ErrorIs(t, err, ErrNeedsUser)
	assert.ErrorContains(t, err, "rm -rf")
	_, err = Decide(s, flagged, store.Decision{Verdict: store.Reject}, true)
	require.NoError(t, err, "an agent may reject it")

	v, err := Decide(s, tabs, store.Decision{Verdict: store.Accept}, true)
	require.NoError(t, err)
	assert.Positive(t, v)
	p, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, store.Confirmed, p.Find(tabs).State, "an agent may accept an unflagged candidate")
}

func TestNoticeOncePerDayNeverTheText(t *testing.T) {
	d, s := rig(t)
	day := time.Date(2026, 12, 3, 9, 0, 0, 0, time.Local)
	line, err := Notice(d, "/a", day)
	require.NoError(t, err)
	assert.Equal(t, "synaxi learned 2 things it may apply from now on — /synaxi:review", line)
	assert.NotContains(t, line, "tabs")
	line, err = Notice(d, "/a", day.Add(3*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, line, "at most once a day")
	line, err = Notice(d, "/b", day.Add(4*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, "synaxi learned 1 thing it may apply from now on — /synaxi:review", line, "once a day per project: /b hears of its own")
	line, err = Notice(d, "/b", day.Add(5*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, line)

	l, _ := Load(s, "")
	for _, c := range l.Candidates {
		_, err := s.Decide(c.ID, store.Decision{Verdict: store.Reject})
		require.NoError(t, err)
	}
	line, err = Notice(d, "/a", day.Add(72*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, line, "nothing waits")
}

// The notice's quick count agrees with Profile.Candidates, old entries
// without a state included.
func TestWaitingCountsAsCandidates(t *testing.T) {
	_, s := rig(t)
	l, _ := Load(s, "/a")
	_, err := s.Decide(l.Candidates[1].ID, store.Decision{Verdict: store.Accept})
	require.NoError(t, err)
	_, err = s.Update("global", func(p *store.Profile) error {
		store.Merge(p, store.Batch{Session: "s3", At: t0, Observations: []store.Observation{
			obs(store.Communication, "keep answers short", "s3", "keep answers short", "")}})
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	p, err := s.Load()
	require.NoError(t, err)
	for _, project := range []string{"/a", "/b", "/elsewhere"} {
		assert.Equal(t, len(p.Candidates(project)), waiting(data, project), project)
	}
	old := []byte(`{"entries":[{"id":"x","scope":"project","project":"/a"},{"id":"y","scope":"global"},{"id":"z","scope":"project","project":"/b","state":"confirmed"}]}`)
	assert.Equal(t, 2, waiting(old, "/a"), "entries from before the lifecycle are candidates")
}
