package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/trim"
	"github.com/synaxi/synaxi/learning/store"
)

// After /clear, SessionStart gives the staged trim once; resume, compact,
// startup and subagents leave it staged; an expired one is removed unseen.
func TestStartGivesStagedTrimOnceAfterClear(t *testing.T) {
	w := newWorld(t, deadProxyd)
	stage := func(expires time.Time) {
		require.NoError(t, trim.Save(w.dirs, &trim.Stage{Project: "/work", Session: "sess-6",
			Created: time.Now(), Expires: expires, Block: "# Carried over by synaxi trim\nfix the parser", Tokens: 12}))
	}
	type reply struct {
		SystemMessage      string
		HookSpecificOutput struct{ AdditionalContext string }
	}
	start := func(in map[string]any) reply {
		out, _ := w.run(t, "start", in)
		var r reply
		if out != "" {
			require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		}
		return r
	}

	stage(time.Now().Add(time.Hour))
	sub := startInput("clear")
	sub["agent_id"] = "a1"
	for name, in := range map[string]map[string]any{
		"resume": startInput("resume"), "compact": startInput("compact"), "startup": startInput("startup"),
		"a subagent": sub,
	} {
		assert.Empty(t, start(in).HookSpecificOutput.AdditionalContext, name)
		assert.FileExists(t, trim.StagePath(w.dirs, "/work"), name+" leaves the stage")
	}
	other := startInput("clear")
	other["cwd"] = "/elsewhere"
	assert.Empty(t, start(other).HookSpecificOutput.AdditionalContext, "another project")

	got := start(startInput("clear"))
	assert.Equal(t, "# Carried over by synaxi trim\nfix the parser", got.HookSpecificOutput.AdditionalContext)
	assert.Contains(t, got.SystemMessage, "synaxi trim: this session starts with what session sess-6 left open (about 12 tokens)")
	assert.NoFileExists(t, trim.StagePath(w.dirs, "/work"))
	assert.Empty(t, start(startInput("clear")).HookSpecificOutput.AdditionalContext, "once")

	stage(time.Now().Add(-time.Second))
	assert.Empty(t, start(startInput("clear")).HookSpecificOutput.AdditionalContext, "expired")
	assert.NoFileExists(t, trim.StagePath(w.dirs, "/work"), "an expired stage is removed")
}

// A trim block and a large learned guidance share Claude Code's output
// cap: the block comes whole and first, the guidance within what is left.
func TestStagedTrimAndGuidanceShareTheCap(t *testing.T) {
	w := newWorld(t, deadProxyd)
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	profiles := store.Open(store.Dir(w.dirs))
	_, err := profiles.Update("test", func(p *store.Profile) error {
		for i := range 80 {
			text := fmt.Sprintf("rule %02d: always keep the public API of package %02d stable across releases", i, i)
			p.Entries = append(p.Entries, store.Entry{ID: store.NewID(store.ScopeProject, repo, store.Guards, text),
				Scope: store.ScopeProject, Project: repo, Dimension: store.Guards, Text: text,
				Weight: 0.7, Count: 1, Sessions: []string{"s-1"}, FirstSeen: ts, LastSeen: ts,
				State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: ts,
				Evidence: []store.Evidence{{Session: "s-1", UUID: fmt.Sprintf("u-%d", i), Timestamp: ts, Quote: text}}})
		}
		return nil
	})
	require.NoError(t, err)
	block := "# Carried over by synaxi trim\n" + strings.Repeat("- a carried line of the trimmed session\n", 149)
	require.Less(t, len(block), trim.MaxChars+1)
	require.NoError(t, trim.Save(w.dirs, &trim.Stage{Project: repo, Session: "s-6", Expires: time.Now().Add(time.Hour), Block: block}))

	in := startInput("clear")
	in["cwd"] = repo
	out, _ := w.run(t, "start", in)
	var r struct {
		HookSpecificOutput struct{ AdditionalContext string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	ctx := r.HookSpecificOutput.AdditionalContext
	assert.True(t, strings.HasPrefix(ctx, block), "the block comes whole and first")
	assert.Contains(t, ctx[len(block):], "always keep the public API", "the guidance follows")
	assert.LessOrEqual(t, len(ctx), hookio.MaxText)
	assert.False(t, strings.HasSuffix(ctx, "…"), "nothing cut by the output cap")
}
