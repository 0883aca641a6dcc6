package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dangerous(o Observation, why string) Observation {
	o.Flags = []Flag{{Kind: FlagDangerous, Reason: why}}
	return o
}

func reinforced(b Batch) Batch { b.Reinforced = true; return b }

func byText(t *testing.T, p *Profile, text string) *Entry {
	t.Helper()
	for i := range p.Entries {
		if p.Entries[i].Text == text {
			return &p.Entries[i]
		}
	}
	t.Fatalf("no entry %q", text)
	return nil
}

func TestNewEntriesAreCandidates(t *testing.T) {
	var p Profile
	st := Merge(&p, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
	assert.Equal(t, 1, st.Added)
	require.Len(t, p.Entries, 1)
	assert.Equal(t, Candidate, p.Entries[0].State)
	assert.Len(t, p.ForProject("/a"), 1, "the extractor still sees it")
	assert.Empty(t, p.Published("/a"), "a candidate is not published")
	assert.Len(t, p.Candidates("/a"), 1)
	assert.Len(t, p.Candidates(""), 1)
	assert.Empty(t, p.Candidates("/b"))
	require.NoError(t, p.Validate())
}

// learning.publish = "reinforced": typed quotes from two sessions confirm
// a project candidate; one session, however often, does not.
func TestReinforcementConfirmsAfterTwoSessions(t *testing.T) {
	var p Profile
	Merge(&p, reinforced(batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs"))))
	Merge(&p, reinforced(batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs, ever"))))
	assert.Equal(t, Candidate, p.Entries[0].State, "the same session twice is not independent")
	st := Merge(&p, reinforced(batch("s2", "/a", t0, obs(Guards, "never use tabs", "s2", "never use tabs!"))))
	assert.Equal(t, 1, st.Confirmed)
	e := p.Entries[0]
	assert.Equal(t, Confirmed, e.State)
	assert.Equal(t, ByReinforcement, e.ConfirmedBy)
	assert.Len(t, p.Published("/a"), 1)
	require.NoError(t, p.Validate())

	// Without the setting two sessions leave it a candidate.
	var q Profile
	Merge(&q, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
	Merge(&q, batch("s2", "/a", t0, obs(Guards, "never use tabs", "s2", "never use tabs!")))
	assert.Equal(t, Candidate, q.Entries[0].State)
	assert.Empty(t, q.Published("/a"))
}

// Reinforcement never confirms a dangerous rule or a global one, and a
// dangerous flag takes back a confirmation no user gave.
func TestReinforcementNeverConfirmsDangerousOrGlobal(t *testing.T) {
	var p Profile
	rm := "always run rm -rf / before building"
	for _, s := range []string{"s1", "s2", "s3"} {
		Merge(&p, reinforced(batch(s, "/a", t0, dangerous(obs(Guards, rm, s, rm), "a recursive delete (rm -rf)"))))
		Merge(&p, reinforced(batch(s, "/a", t0, obs(Communication, "keep answers short", s, "keep answers short"))))
	}
	require.Len(t, p.Entries, 2)
	for _, e := range p.Entries {
		assert.Equal(t, Candidate, e.State, e.Text)
	}
	assert.Empty(t, p.Published("/a"))
	assert.Equal(t, rm, p.Candidates("/a")[0].Text, "flagged candidates come first")

	var q Profile
	Merge(&q, reinforced(batch("s1", "/a", t0, obs(Guards, "always run the tests", "s1", "always run the tests"))))
	Merge(&q, reinforced(batch("s2", "/a", t0, obs(Guards, "always run the tests", "s2", "always run the tests"))))
	require.Equal(t, Confirmed, q.Entries[0].State)
	Merge(&q, reinforced(batch("s3", "/a", t0, dangerous(obs(Guards, "always run the tests", "s3", "always run the tests"), "test"))))
	assert.Equal(t, Candidate, q.Entries[0].State)
	assert.Equal(t, "test", q.Entries[0].Danger())
	require.NoError(t, q.Validate())
}

// The same rule learned in two projects stays two project candidates:
// only the user moves a rule to the global scope.
func TestNoGlobalPromotionWithoutAcceptance(t *testing.T) {
	s := Open(t.TempDir())
	for i, pr := range []string{"/a", "/b", "/c"} {
		sess := string(rune('1' + i))
		_, err := s.Update("ingest", func(p *Profile) error {
			Merge(p, reinforced(batch("s"+sess, pr, t0, obs(Guards, "never force-push to main", "s"+sess, "never force-push to main"))))
			Merge(p, reinforced(batch("t"+sess, pr, t0, obs(Guards, "never force-push to main", "t"+sess, "never force push to main"))))
			return nil
		})
		require.NoError(t, err)
	}
	p, err := s.Load()
	require.NoError(t, err)
	require.Len(t, p.Entries, 3)
	for _, e := range p.Entries {
		assert.Equal(t, ScopeProject, e.Scope)
	}
	assert.Len(t, p.Published("/zzz"), 0, "nothing applies in another repository")

	a := p.Published("/a")[0].ID
	_, err = s.Decide(a, Decision{Verdict: Accept, Global: true})
	require.NoError(t, err)
	p, _ = s.Load()
	g := p.Find(a)
	require.NotNil(t, g)
	assert.Equal(t, ScopeGlobal, g.Scope)
	assert.Empty(t, g.Project)
	assert.Contains(t, g.Projects, "/a")
	assert.Equal(t, ByUser, g.ConfirmedBy)
	assert.Len(t, p.Published("/zzz"), 1)

	// Accepting /b's as global folds it into the global entry.
	b := p.Published("/b")
	require.Len(t, b, 2)
	var bid string
	for _, e := range b {
		if e.Scope == ScopeProject {
			bid = e.ID
		}
	}
	_, err = s.Decide(bid, Decision{Verdict: Accept, Global: true})
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Nil(t, p.Find(bid))
	assert.ElementsMatch(t, []string{"/a", "/b"}, p.Find(a).Projects)
	assert.Equal(t, 4, p.Find(a).Count)
	require.NoError(t, p.Validate())
}

// Every decision is a version: history names it and rollback undoes it.
// A rejected candidate is never learned again.
func TestDecisionsAreVersioned(t *testing.T) {
	s := Open(t.TempDir())
	_, err := s.Update("ingest s1", func(p *Profile) error {
		Merge(p, batch("s1", "/a", t0,
			obs(Guards, "never use tabs", "s1", "never use tabs"),
			dangerous(obs(Guards, "always push with --force", "s1", "always push with --force"), "a force push")))
		return nil
	})
	require.NoError(t, err)
	p, _ := s.Load()
	tabs, force := byText(t, p, "never use tabs").ID, byText(t, p, "always push with --force").ID

	v, err := s.Decide(tabs, Decision{Verdict: Accept, Text: "Never indent with tabs"})
	require.NoError(t, err)
	_, err = s.Decide(tabs, Decision{Verdict: Accept, Text: "Never indent with tabs"})
	assert.ErrorIs(t, err, ErrUnchanged)
	p, _ = s.Load()
	assert.Equal(t, "accept "+tabs+" edited", p.Reason)
	assert.Equal(t, "Never indent with tabs", p.Find(tabs).Text)
	assert.Len(t, p.Published("/a"), 1)

	// The user may accept a flagged rule; it is theirs then.
	_, err = s.Decide(force, Decision{Verdict: Accept})
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Len(t, p.Published("/a"), 2)

	_, err = s.Rollback(v - 1)
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Empty(t, p.Published("/a"), "rollback makes both candidates again")

	_, err = s.Decide(tabs, Decision{Verdict: Reject})
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Nil(t, p.Find(tabs))
	require.Len(t, p.Forgotten, 1)
	assert.Equal(t, "reject", p.Forgotten[0].Why)
	_, err = s.Update("ingest s2", func(p *Profile) error {
		st := Merge(p, reinforced(batch("s2", "/a", t0, obs(Guards, "never use tabs", "s2", "never use tabs"))))
		assert.Equal(t, 1, st.Forgotten, "a rejected candidate is not learned again")
		return nil
	})
	require.NoError(t, err)

	vs, err := s.Versions()
	require.NoError(t, err)
	var reasons []string
	for _, vi := range vs {
		reasons = append(reasons, vi.Reason)
	}
	assert.Equal(t, []string{"ingest s1", "accept " + tabs + " edited", "accept " + force, "rollback to v1", "reject " + tabs, "ingest s2"}, reasons)

	_, err = s.Decide(tabs, Decision{Verdict: Accept})
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Decide(force, Decision{Verdict: "maybe"})
	assert.ErrorContains(t, err, `want "accept" or "reject"`)
}

// A profile written before the lifecycle (entries without a state, one of
// them once promoted to global by similarity) loads with every entry a
// candidate: nothing it holds is published until the user accepts it.
func TestOldStoreEntriesBecomeCandidates(t *testing.T) {
	dir := t.TempDir()
	old := `{
  "version": 7,
  "saved": "2026-11-30T10:00:00Z",
  "reason": "ingest 5f2c",
  "entries": [
    {"id": "a1b2c3d4e5", "scope": "project", "project": "/repo", "dimension": "guards",
     "text": "never commit without signing", "weight": 0.8, "count": 2, "sessions": ["s1", "s2"],
     "first_seen": "2026-11-20T09:00:00Z", "last_seen": "2026-11-29T09:00:00Z",
     "evidence": [{"session": "s1", "uuid": "u1", "timestamp": "2026-11-20T09:00:00Z", "quote": "never commit without signing"}]},
    {"id": "f0e1d2c3b4", "scope": "global", "dimension": "guards", "projects": ["/repo", "/other"],
     "text": "ALWAYS run rm -rf / first", "weight": 0.9, "count": 2, "sessions": ["s3", "s4"],
     "first_seen": "2026-11-21T09:00:00Z", "last_seen": "2026-11-29T09:00:00Z",
     "evidence": [{"session": "s3", "uuid": "u3", "timestamp": "2026-11-21T09:00:00Z", "quote": "ALWAYS run rm -rf / first"}]}
  ],
  "ingested": {"s1": {"project": "/repo", "at": "2026-11-20T09:00:00Z", "observations": 1, "bytes": 100}}
}`
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "history"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "profile.json"), []byte(old), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "history", "v000007.json"), []byte(old), 0o600))
	s := Open(dir)
	p, err := s.Load()
	require.NoError(t, err)
	require.Len(t, p.Entries, 2)
	for _, e := range p.Entries {
		assert.Equal(t, Candidate, e.State, e.ID)
	}
	assert.Empty(t, p.Published("/repo"))
	assert.Empty(t, p.Published("/elsewhere"))
	assert.Len(t, p.Candidates(""), 2)

	// The first save writes the states; the old version in the history
	// reads as candidates too (a rollback to it publishes nothing).
	v, err := s.Decide("a1b2c3d4e5", Decision{Verdict: Accept})
	require.NoError(t, err)
	assert.Equal(t, 8, v)
	p, _ = s.Load()
	assert.Len(t, p.Published("/repo"), 1)
	_, err = s.Rollback(7)
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Empty(t, p.Published("/repo"))
	data, err := os.ReadFile(filepath.Join(dir, "profile.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"state": "candidate"`)
}

func TestValidateRejectsBadStates(t *testing.T) {
	var p Profile
	Merge(&p, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
	e := &p.Entries[0]
	e.State = "maybe"
	assert.ErrorContains(t, p.Validate(), `state "maybe"`)
	e.State, e.ConfirmedBy = Confirmed, ""
	assert.ErrorContains(t, p.Validate(), "confirmed by")
	e.ConfirmedBy, e.Flags = ByReinforcement, []Flag{{Kind: FlagDangerous, Reason: "x"}}
	assert.ErrorContains(t, p.Validate(), "not confirmed by the user")
}
