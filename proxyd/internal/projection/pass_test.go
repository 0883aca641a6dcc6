package projection

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// passModule is the path of module i of a reading session.
func passModule(i int) string { return fmt.Sprintf("/w/mods/m%02d.go", i) }

// passReads is a session that reads modules 1..n one after another, each
// about 2,000 tokens, never coming back to one.
func passReads(n int) []obj {
	msgs := []obj{user(text("survey every module"))}
	for i := 1; i <= n; i++ {
		msgs = append(msgs, readPair(fmt.Sprintf("toolu_r%02d", i), passModule(i), fileLines(fmt.Sprintf("module %02d", i), 220))...)
	}
	return msgs
}

// isStub reports whether a served result is a folded pass-through read.
func isStub(s string) bool { return strings.HasPrefix(s, "[synaxi: the result of Read ") }

// TestPassThroughReadIsFoldedAfterItsNextTurn: in a session that reads
// files and never comes back to them, a read is served in full as the
// current turn (after the breakpoint: billed once, not written) and, from
// the request after the next one, by a note naming it; its world entry is
// dropped, so no rebuild writes it again. The served bytes are a pure
// function of the messages (projectSeq checks a fresh engine).
func TestPassThroughReadIsFoldedAfterItsNextTurn(t *testing.T) {
	msgs := passReads(40)
	res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
	require.True(t, res.Engaged)
	last := fmt.Sprintf("toolu_r%02d", 40)
	assert.False(t, isStub(servedResult(t, res.Body, last)), "the current turn is served in full")
	assert.True(t, isStub(servedResult(t, res.Body, "toolu_r39")), "the previous read, not named by the call after it, is folded")
	assert.Contains(t, servedResult(t, res.Body, "toolu_r39"), "Read "+passModule(39))
	f := foldOf(t, Config{AlwaysEngage: true}, msgs)
	_, inWorld := f.world.entries[passModule(39)]
	assert.False(t, inWorld, "a folded read leaves the world")
	assert.Contains(t, f.world.evicted, passModule(39))
	// The breakpoint before the current turn: its tool_result carries none.
	ms := gjson.GetBytes(res.Body, "messages").Array()
	assert.False(t, ms[len(ms)-1].Get(`content.#(cache_control)`).Exists(), "the current turn is not written to the cache")
	assert.True(t, ms[len(ms)-2].Get(`content.#(cache_control)`).Exists(), "the call it answers is")
}

// TestPassThroughNotFolded: the cases where a read stays as it was sent.
func TestPassThroughNotFolded(t *testing.T) {
	t.Run("the next call edits the file", func(t *testing.T) {
		msgs := passReads(40)
		msgs = append(msgs, assistant(toolUse("toolu_e", "Edit", obj{"file_path": passModule(40),
			"old_string": "module 40 line 3: some code", "new_string": "module 40 line 3: fixed"})),
			user(toolResult("toolu_e", "The file "+passModule(40)+" has been updated successfully.", false)))
		res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
		assert.False(t, isStub(servedResult(t, res.Body, "toolu_r40")), "the agent works with it")
	})
	t.Run("the session comes back to what it read", func(t *testing.T) {
		msgs := []obj{user(text("goal"))}
		for i := 1; i <= 40; i++ {
			msgs = append(msgs, readPair(fmt.Sprintf("toolu_r%02d", i), passModule(i), fileLines(fmt.Sprintf("module %02d", i), 220))...)
			if i > 2 {
				id := fmt.Sprintf("toolu_e%02d", i)
				msgs = append(msgs, assistant(toolUse(id, "Edit", obj{"file_path": passModule(i - 2),
					"old_string": fmt.Sprintf("module %02d line 1: some code", i-2), "new_string": "edited"})),
					user(toolResult(id, "The file has been updated successfully.", false)))
			}
		}
		msgs = append(msgs, readPair("toolu_last", passModule(41), fileLines("module 41", 220))...)
		msgs = append(msgs, readPair("toolu_next", passModule(42), fileLines("module 42", 220))...)
		res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
		assert.False(t, isStub(servedResult(t, res.Body, "toolu_last")), "most reads were edited two turns later: nothing is folded")
	})
	t.Run("a small file", func(t *testing.T) {
		msgs := passReads(40)
		msgs = append(msgs, readPair("toolu_small", "/w/small.go", fileLines("small", 10))...)
		msgs = append(msgs, readPair("toolu_next", passModule(41), fileLines("module 41", 220))...)
		res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
		assert.False(t, isStub(servedResult(t, res.Body, "toolu_small")))
	})
	t.Run("a partial read", func(t *testing.T) {
		msgs := passReads(40)
		msgs = append(msgs, assistant(toolUse("toolu_part", "Read", obj{"file_path": "/w/big.go", "offset": 1, "limit": 220})),
			user(toolResult("toolu_part", fileLines("big", 220), false)))
		msgs = append(msgs, readPair("toolu_next", passModule(41), fileLines("module 41", 220))...)
		res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
		assert.False(t, isStub(servedResult(t, res.Body, "toolu_part")))
	})
	t.Run("too few reads decided", func(t *testing.T) {
		msgs := passReads(passSamples)
		res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
		for i := 1; i <= passSamples; i++ {
			assert.False(t, isStub(servedResult(t, res.Body, fmt.Sprintf("toolu_r%02d", i))), "read %d", i)
		}
	})
}

// TestFoldedReadRestoredByUnchangedStub: when the agent reads a folded
// file again and Claude Code answers that it is unchanged, the content is
// restored.
func TestFoldedReadRestoredByUnchangedStub(t *testing.T) {
	msgs := passReads(40)
	msgs = append(msgs, rereadUnchanged(passModule(38))...)
	res := project(t, Config{AlwaysEngage: true}, msgs)
	assert.Contains(t, lastResult(t, res), "module 38 line 1: some code")
}

// TestNoRebuildAtTheEditOfAFileJustUsed: a rebuild at the turn that
// carries the result of an edit of a file the previous turn used would
// write the file as it was before the edit (the turn is ingested after
// the rebuild), a copy stale from the next request on; the rebuild waits
// a turn. An edit of a file used long ago, or of one not in view, does not
// hold it.
func TestNoRebuildAtTheEditOfAFileJustUsed(t *testing.T) {
	msgs := passReads(3)
	editOf := func(path string) (obj, message) {
		call := assistant(toolUse("toolu_e", "Edit", obj{"file_path": path, "old_string": "line 1: some code", "new_string": "line 1: fixed"}))
		raw, err := json.Marshal(user(toolResult("toolu_e", "The file "+path+" has been updated successfully.", false)))
		require.NoError(t, err)
		m, err := parseMessage(gjson.ParseBytes(raw), len(msgs)+1)
		require.NoError(t, err)
		return call, m
	}
	for _, tc := range []struct {
		path string
		hold bool
	}{
		{passModule(3), true},  // read the turn before
		{passModule(1), false}, // read three turns before
		{"/w/never-read.go", false},
	} {
		call, result := editOf(tc.path)
		f := foldOf(t, Config{AlwaysEngage: true}, append(slices.Clone(msgs), call))
		assert.Equal(t, tc.hold, f.changesView(result), tc.path)
	}
}
