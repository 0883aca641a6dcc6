package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testEntry(text string) Entry {
	ts := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	return Entry{
		ID: NewID(ScopeProject, "/repo", Workflow, text), Scope: ScopeProject, Project: "/repo",
		Dimension: Workflow, Text: text, Weight: 0.5, Count: 1, Sessions: []string{"s1"},
		FirstSeen: ts, LastSeen: ts,
		Evidence: []Evidence{{Session: "s1", UUID: "u1", Timestamp: ts, Quote: text}},
	}
}

func addEntry(t *testing.T, s *Store, text string) int {
	t.Helper()
	v, err := s.Update("add "+text, func(p *Profile) error {
		p.Entries = append(p.Entries, testEntry(text))
		return nil
	})
	require.NoError(t, err)
	return v
}

func TestEmptyStore(t *testing.T) {
	s := Open(t.TempDir())
	p, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, 0, p.Version)
	assert.Empty(t, p.Entries)
	vs, err := s.Versions()
	require.NoError(t, err)
	assert.Empty(t, vs)
}

func TestUpdateVersionsEverySave(t *testing.T) {
	s := Open(t.TempDir())
	assert.Equal(t, 1, addEntry(t, s, "run the tests before committing"))
	assert.Equal(t, 2, addEntry(t, s, "sign every commit"))

	v, err := s.Update("noop", func(*Profile) error { return ErrUnchanged })
	assert.ErrorIs(t, err, ErrUnchanged)
	assert.Zero(t, v)

	vs, err := s.Versions()
	require.NoError(t, err)
	require.Len(t, vs, 2)
	assert.Equal(t, "add sign every commit", vs[1].Reason)
	assert.True(t, vs[1].Current)
	assert.Equal(t, 2, vs[1].Entries)

	p, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, 2, p.Version)
	old, err := s.LoadVersion(1)
	require.NoError(t, err)
	assert.Len(t, old.Entries, 1)
}

func TestUpdateRefusesInvalid(t *testing.T) {
	s := Open(t.TempDir())
	cases := map[string]func(*Entry){
		"no evidence":   func(e *Entry) { e.Evidence = nil },
		"bad dimension": func(e *Entry) { e.Dimension = "vibes" },
		"bad scope":     func(e *Entry) { e.Scope = "team" },
		"double count":  func(e *Entry) { e.Count = 2 },
		"no project":    func(e *Entry) { e.Project = "" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Update("bad", func(p *Profile) error {
				e := testEntry("x")
				mutate(&e)
				p.Entries = append(p.Entries, e)
				return nil
			})
			require.Error(t, err)
			_, err = os.Stat(s.Path())
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
}

func TestCallbackErrorWritesNothing(t *testing.T) {
	s := Open(t.TempDir())
	addEntry(t, s, "a")
	boom := errors.New("boom")
	_, err := s.Update("x", func(p *Profile) error {
		p.Entries = nil
		return boom
	})
	assert.ErrorIs(t, err, boom)
	p, err := s.Load()
	require.NoError(t, err)
	assert.Len(t, p.Entries, 1)
}

func TestRollbackForgetExcludeReset(t *testing.T) {
	s := Open(t.TempDir())
	addEntry(t, s, "a")
	addEntry(t, s, "b")

	v, err := s.Rollback(0)
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	p, _ := s.Load()
	require.Len(t, p.Entries, 1)
	assert.Equal(t, "rollback to v1", p.Reason)

	// The rollback is itself a version that can be undone.
	v, err = s.Rollback(2)
	require.NoError(t, err)
	assert.Equal(t, 4, v)
	p, _ = s.Load()
	require.Len(t, p.Entries, 2)

	_, err = s.Rollback(9)
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Rollback(4)
	assert.ErrorIs(t, err, ErrUnchanged)

	id := p.Entries[0].ID
	_, err = s.Exclude(id)
	require.NoError(t, err)
	_, err = s.Exclude(id)
	assert.ErrorIs(t, err, ErrUnchanged)
	p, _ = s.Load()
	assert.True(t, p.Find(id).Excluded)
	assert.Len(t, p.ForProject("/repo"), 1, "excluded entries are not published")
	_, err = s.Include(id)
	require.NoError(t, err)

	_, err = s.Edit(id, "  always run make check before pushing ")
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Equal(t, "always run make check before pushing", p.Find(id).Text)
	assert.Len(t, p.Find(id).Evidence, 1, "evidence stays")
	_, err = s.Edit(id, "always run make check before pushing")
	assert.ErrorIs(t, err, ErrUnchanged)
	_, err = s.Edit(id, " ")
	assert.ErrorContains(t, err, "empty")
	_, err = s.Edit("nope", "x")
	assert.ErrorIs(t, err, ErrNotFound)

	_, err = s.Forget("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Forget(id)
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Nil(t, p.Find(id))
	require.Len(t, p.Forgotten, 1)
	assert.Equal(t, "always run make check before pushing", p.Forgotten[0].Text, "the tombstone holds the text as edited")

	v, err = s.Reset()
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Empty(t, p.Entries)
	assert.Equal(t, v, p.Version)
	_, err = s.Reset()
	assert.ErrorIs(t, err, ErrUnchanged)
	// Reset is undoable.
	_, err = s.Rollback(0)
	require.NoError(t, err)
	p, _ = s.Load()
	assert.Len(t, p.Entries, 1)
}

func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	s := Open(t.TempDir())
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.Update("add", func(p *Profile) error {
				p.Entries = append(p.Entries, testEntry(fmt.Sprint("entry ", i)))
				return nil
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	p, err := s.Load()
	require.NoError(t, err)
	assert.Len(t, p.Entries, n)
	assert.Equal(t, n, p.Version)
}

func TestOrphanHistoryFromCrashIsOverwritten(t *testing.T) {
	s := Open(t.TempDir())
	addEntry(t, s, "a")
	// A save killed between the history write and the current write.
	require.NoError(t, os.WriteFile(s.versionPath(2), []byte(`{"version":2,"entries":[]}`), 0o600))
	vs, err := s.Versions()
	require.NoError(t, err)
	assert.Len(t, vs, 1, "the orphan is not listed")
	v := addEntry(t, s, "b")
	assert.Equal(t, 2, v)
	p, err := s.LoadVersion(2)
	require.NoError(t, err)
	assert.Len(t, p.Entries, 2)
}

func TestCorruptCurrentIsNotOverwritten(t *testing.T) {
	s := Open(t.TempDir())
	addEntry(t, s, "a")
	require.NoError(t, os.WriteFile(s.Path(), []byte("{torn"), 0o600))
	_, err := s.Update("x", func(*Profile) error { return nil })
	require.Error(t, err)
	data, _ := os.ReadFile(s.Path())
	assert.Equal(t, "{torn", string(data))
}

func TestHistoryIsPruned(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	for range HistoryKeep + 3 {
		_, err := s.Update("touch", func(p *Profile) error { return nil })
		require.NoError(t, err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "history"))
	require.NoError(t, err)
	assert.Len(t, ents, HistoryKeep)
}

func TestEvidenceCapKeepsNewest(t *testing.T) {
	e := testEntry("x")
	base := e.Evidence[0].Timestamp
	for i := range MaxEvidence + 4 {
		e.AddEvidence(Evidence{Session: "s", UUID: fmt.Sprint(i), Timestamp: base.Add(time.Duration(i+1) * time.Hour), Quote: "q"})
	}
	e.AddEvidence(Evidence{Session: "s", UUID: "3", Timestamp: base.Add(4 * time.Hour), Quote: "q"}) // duplicate
	require.Len(t, e.Evidence, MaxEvidence)
	assert.Equal(t, fmt.Sprint(MaxEvidence+3), e.Evidence[MaxEvidence-1].UUID)
	assert.Equal(t, "4", e.Evidence[0].UUID)
}

func TestExportJSONFieldNames(t *testing.T) {
	data, err := json.Marshal(testEntry("x"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	for _, k := range []string{"id", "scope", "dimension", "text", "weight", "count", "evidence", "sessions", "first_seen", "last_seen"} {
		assert.Contains(t, m, k)
	}
	ev := m["evidence"].([]any)[0].(map[string]any)
	for _, k := range []string{"session", "uuid", "quote", "timestamp"} {
		assert.Contains(t, ev, k)
	}
}

// Issue 24: with a damaged profile.json, history and rollback failed with
// the same decode error and only copying a history file by hand restored
// it. History lists the versions, rollback restores the last good one and
// keeps the damaged file, reset starts afresh.
func TestDamagedCurrentIsRepairedByRollbackOrReset(t *testing.T) {
	s := Open(t.TempDir())
	addEntry(t, s, "a")
	addEntry(t, s, "b")
	require.NoError(t, os.WriteFile(s.Path(), []byte("{torn"), 0o600))
	_, err := s.Load()
	require.ErrorIs(t, err, ErrDamaged)

	vs, err := s.Versions()
	require.NoError(t, err)
	require.Len(t, vs, 2)
	assert.False(t, vs[1].Current, "a damaged file is no version")
	good, err := s.LastGood()
	require.NoError(t, err)
	assert.Equal(t, 2, good)

	v, err := s.Rollback(0)
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	p, err := s.Load()
	require.NoError(t, err)
	assert.Len(t, p.Entries, 2, "the last good version is current again")
	assert.Contains(t, p.Reason, "rollback to v2 (profile.json was damaged; set aside as profile.json.damaged-")
	aside, _ := filepath.Glob(s.Path() + ".damaged-*")
	require.Len(t, aside, 1)
	data, _ := os.ReadFile(aside[0])
	assert.Equal(t, "{torn", string(data), "the damaged file is kept")

	require.NoError(t, os.WriteFile(s.Path(), []byte("{torn again"), 0o600))
	v, err = s.Reset()
	require.NoError(t, err)
	assert.Equal(t, 4, v)
	p, err = s.Load()
	require.NoError(t, err)
	assert.Empty(t, p.Entries)
}
