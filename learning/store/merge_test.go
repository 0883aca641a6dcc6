package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func obs(dim, text, session, quote string, when ...time.Time) Observation {
	at := t0
	if len(when) > 0 {
		at = when[0]
	}
	return Observation{Dimension: dim, Text: text, Confidence: 0.6,
		Evidence: []Evidence{{Session: session, UUID: session + "-" + quote, Timestamp: at, Quote: quote}}}
}

func batch(session, project string, at time.Time, os ...Observation) Batch {
	return Batch{Session: session, Project: project, At: at, Observations: os}
}

func TestSimilarity(t *testing.T) {
	assert.GreaterOrEqual(t, Similarity("never commit without signing", "Never commit without signing!"), MatchAt)
	assert.GreaterOrEqual(t, Similarity("use pnpm instead of npm", "please use pnpm instead of npm"), MatchAt)
	assert.Less(t, Similarity("prefer tabs", "prefer spaces"), MatchAt)
	assert.Zero(t, Similarity("use tabs", "never use tabs"), "negation differs")
}

// Synapptic counted a session twice when two of its observations matched
// one entry, or when a session was merged again.
func TestReinforcementCountsEachSessionOnce(t *testing.T) {
	var p Profile
	st := Merge(&p, batch("s1", "/a", t0,
		obs(Workflow, "use pnpm instead of npm", "s1", "use pnpm instead of npm"),
		obs(Workflow, "please use pnpm instead of npm", "s1", "please use pnpm instead of npm")))
	assert.Equal(t, 1, st.Added)
	assert.Equal(t, 1, st.Repeated)
	require.Len(t, p.Entries, 1)
	e := p.Entries[0]
	assert.Equal(t, 1, e.Count)
	assert.Len(t, e.Evidence, 2, "both quotes are kept as evidence")
	w := e.Weight

	// The same batch again: nothing new.
	Merge(&p, batch("s1", "/a", t0, obs(Workflow, "use pnpm instead of npm", "s1", "use pnpm instead of npm")))
	assert.Equal(t, 1, p.Entries[0].Count)
	assert.Equal(t, w, p.Entries[0].Weight)
	assert.Len(t, p.Entries[0].Evidence, 2)

	// Another session reinforces.
	Merge(&p, batch("s2", "/a", t0, obs(Workflow, "use pnpm instead of npm", "s2", "use pnpm instead of npm")))
	assert.Equal(t, 2, p.Entries[0].Count)
	assert.Greater(t, p.Entries[0].Weight, w)
	assert.Equal(t, []string{"s1", "s2"}, p.Entries[0].Sessions)
	require.NoError(t, p.Validate())
}

// Synapptic's profile entries dropped the evidence its observations had.
func TestEvidenceIsKept(t *testing.T) {
	var p Profile
	for i := range MaxEvidence + 3 {
		s := fmt.Sprint("s", i)
		Merge(&p, batch(s, "/a", t0.Add(time.Duration(i)*time.Hour), obs(Guards, "never force-push to main", s, "never force-push to main", t0.Add(time.Duration(i)*time.Hour))))
	}
	require.Len(t, p.Entries, 1)
	e := p.Entries[0]
	assert.Equal(t, MaxEvidence+3, e.Count, "the session list is not capped")
	require.Len(t, e.Evidence, MaxEvidence)
	assert.Equal(t, fmt.Sprint("s", MaxEvidence+2), e.Evidence[MaxEvidence-1].Session, "newest kept")
	assert.Equal(t, "never force-push to main", e.Evidence[0].Quote)
}

func TestPersonalDimensionsAreGlobal(t *testing.T) {
	var p Profile
	Merge(&p, batch("s1", "/a", t0, obs(Communication, "keep answers short", "s1", "keep answers short")))
	assert.Equal(t, ScopeGlobal, p.Entries[0].Scope)
	Merge(&p, batch("s2", "", t0, obs(Workflow, "run the linter", "s2", "run the linter")))
	assert.Equal(t, ScopeGlobal, p.Entries[1].Scope, "no project known")
	assert.Empty(t, p.ForProject("/a")[0].Project)
}

func TestForgottenIsNotRelearned(t *testing.T) {
	s := Open(t.TempDir())
	_, err := s.Update("ingest", func(p *Profile) error {
		Merge(p, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
		return nil
	})
	require.NoError(t, err)
	p, _ := s.Load()
	_, err = s.Forget(p.Entries[0].ID)
	require.NoError(t, err)
	_, err = s.Update("ingest", func(p *Profile) error {
		st := Merge(p, batch("s2", "/a", t0, obs(Guards, "never use tabs!", "s2", "never use tabs!")))
		assert.Equal(t, 1, st.Forgotten)
		return nil
	})
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Empty(t, p.Entries)
}

func TestExcludedEntryKeepsLearning(t *testing.T) {
	var p Profile
	Merge(&p, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
	p.Entries[0].Excluded = true
	Merge(&p, batch("s2", "/a", t0, obs(Guards, "never use tabs", "s2", "never use tabs")))
	require.Len(t, p.Entries, 1)
	assert.True(t, p.Entries[0].Excluded)
	assert.Equal(t, 2, p.Entries[0].Count)
	assert.Empty(t, p.ForProject("/a"))
}
