package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The trial that filed issue 24: one ordinary session 8.5 months after the
// others took a profile from 11 entries (3 accepted) to 0.
func TestAcceptedEntriesNeverDecay(t *testing.T) {
	var p Profile
	Merge(&p, batch("s0", "/a", t0, obs(Guards, "never force-push to main", "s0", "never force-push to main")))
	p.Entries[0].State, p.Entries[0].ConfirmedBy = Confirmed, ByUser
	w := p.Entries[0].Weight
	later := t0.Add(255 * 24 * time.Hour)
	for i := range 1000 {
		s := fmt.Sprint("later-", i)
		Merge(&p, batch(s, "/a", later.Add(time.Duration(i)*time.Hour), obs(Workflow, fmt.Sprint("task ", i), s, "task")))
	}
	e := p.Find(p.Published("/a")[0].ID)
	require.NotNil(t, e, "the accepted rule is still there")
	assert.Equal(t, "never force-push to main", e.Text)
	assert.Equal(t, w, e.Weight, "a confirmed entry does not decay")
	assert.Len(t, p.Candidates("/a"), 1000, "no candidate is pruned before the user saw it")
	assert.Empty(t, p.Pruned)
}

func TestCandidatesDecayBySessionsOfTheirProject(t *testing.T) {
	var p Profile
	Merge(&p, batch("s0", "/a", t0, obs(Workflow, "run the linter", "s0", "run the linter")))
	w := p.Entries[0].Weight
	// A year in calendar time, no session of /a: nothing decays.
	Merge(&p, batch("b0", "/b", t0.Add(365*24*time.Hour)))
	assert.Equal(t, w, p.Entries[0].Weight)
	// DecaySessions sessions of /a halve it.
	for i := range DecaySessions {
		Merge(&p, batch(fmt.Sprint("a", i), "/a", t0.Add(time.Duration(i+1)*time.Hour)))
	}
	assert.InDelta(t, w/2, p.Entries[0].Weight, 1e-9)
}

func TestFadedCandidatesArePrunedOnlyAfterTheUserSawThem(t *testing.T) {
	var p Profile
	Merge(&p, batch("s0", "/a", t0, obs(Workflow, "run the linter", "s0", "run the linter")))
	fade := func(from, n int) MergeStats {
		var st MergeStats
		for i := range n {
			b := batch(fmt.Sprint("a", from+i), "/a", t0.Add(time.Duration(from+i+1)*time.Hour))
			b.Now = t0
			st = Merge(&p, b)
		}
		return st
	}
	fade(0, 5*DecaySessions)
	require.Len(t, p.Entries, 1, "unseen: kept however faded")
	assert.Less(t, p.Entries[0].Weight, MinWeight)

	p.Entries[0].ShownAt = t0
	st := fade(5*DecaySessions, 1)
	assert.Equal(t, 1, st.Pruned)
	assert.Empty(t, p.Entries)
	require.Len(t, p.Pruned, 1, "every prune is recorded")
	assert.Equal(t, Pruned{ID: NewID(ScopeProject, "/a", Workflow, "run the linter"), Dimension: Workflow,
		Text: "run the linter", Project: "/a", At: t0, Why: "faded"}, p.Pruned[0])
}

func TestContradictionOfAnAcceptedRuleNamesIt(t *testing.T) {
	var p Profile
	Merge(&p, batch("s0", "/a", t0, obs(CodeStyle, "use tabs for indentation", "s0", "use tabs for indentation")))
	acc := &p.Entries[0]
	acc.State, acc.ConfirmedBy = Confirmed, ByUser
	Merge(&p, batch("s1", "/a", t0.Add(time.Hour), obs(Guards, "never use tabs for indentation", "s1", "never use tabs for indentation")))
	require.Len(t, p.Entries, 2)
	c := p.Candidates("/a")
	require.Len(t, c, 1)
	assert.Equal(t, p.Published("/a")[0].ID, c[0].Conflicts)
	assert.Equal(t, Confirmed, p.Find(c[0].Conflicts).State, "the accepted rule stays until the user decides")
}

// Back-fill reads sessions in whatever order: the hook read some as they
// ended, `ingest --all` the rest. The profile must not depend on it.
func TestMergeOrderDoesNotMatter(t *testing.T) {
	var batches []Batch
	for i := range 60 {
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		s := fmt.Sprint("s", i)
		os := []Observation{obs(Workflow, fmt.Sprint("one-off ", i), s, "one-off", at)}
		if i%7 == 0 {
			o := obs(Guards, "never push to main without review", s, "never push to main without review", at)
			o.Confidence = 0.3 + float64(i)/100
			os = append(os, o)
		}
		if i%11 == 3 {
			os = append(os, obs(Guards, fmt.Sprint("please never push to main without a review (", i, ")"), s, "never push", at))
		}
		batches = append(batches, batch(s, "/a", at, os...))
	}
	merge := func(order []int) Profile {
		var p Profile
		for _, i := range order {
			Merge(&p, batches[i])
		}
		SortEntries(p.Entries)
		return p
	}
	forward := make([]int, len(batches))
	for i := range forward {
		forward[i] = i
	}
	want := merge(forward)
	for seed := range uint64(5) {
		order := rand.New(rand.NewPCG(seed, 1)).Perm(len(batches))
		got := merge(order)
		require.Len(t, got.Entries, len(want.Entries))
		for i := range want.Entries {
			w, g := want.Entries[i], got.Entries[i]
			assert.Equal(t, w.ID, g.ID)
			assert.Equal(t, w.Text, g.Text)
			assert.Equal(t, w.Weight, g.Weight, w.Text)
			assert.Equal(t, w.FirstSeen, g.FirstSeen)
			assert.Equal(t, w.LastSeen, g.LastSeen)
			assert.ElementsMatch(t, w.Sessions, g.Sessions)
		}
	}
}

// Marking candidates shown is bookkeeping: the current version is
// rewritten in place, no version is added.
func TestMarkShownAddsNoVersion(t *testing.T) {
	s := Open(t.TempDir())
	_, err := s.Update("ingest s1", func(p *Profile) error {
		Merge(p, batch("s1", "/a", t0, obs(Guards, "never use tabs", "s1", "never use tabs")))
		return nil
	})
	require.NoError(t, err)
	p, err := s.Load()
	require.NoError(t, err)
	require.NoError(t, s.MarkShown([]string{p.Entries[0].ID, "nope"}))
	after, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, p.Version, after.Version)
	assert.False(t, after.Entries[0].ShownAt.IsZero())
	hist, err := s.LoadVersion(p.Version)
	require.NoError(t, err)
	assert.Equal(t, after.Entries[0].ShownAt, hist.Entries[0].ShownAt, "the history file of the version agrees")
	vs, err := s.Versions()
	require.NoError(t, err)
	assert.Len(t, vs, 1)
	require.NoError(t, Open(t.TempDir()).MarkShown([]string{"x"}), "a store never written is left alone")
}
