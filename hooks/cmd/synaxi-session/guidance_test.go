package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/store"
)

// SessionStart gives the model the guidance learned for the session's
// project (its repository root) plus global entries, and nothing on resume.
func TestStartGivesLearnedGuidance(t *testing.T) {
	w := newWorld(t, deadProxyd)
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	sub := filepath.Join(repo, "cmd", "tool")
	require.NoError(t, os.MkdirAll(sub, 0o755))

	input := func(source, cwd string) map[string]any {
		in := startInput(source)
		in["cwd"] = cwd
		return in
	}
	additional := func(out string) string {
		if out == "" {
			return ""
		}
		var o struct {
			HookSpecificOutput struct{ HookEventName, AdditionalContext string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &o), out)
		assert.Equal(t, "SessionStart", o.HookSpecificOutput.HookEventName)
		return o.HookSpecificOutput.AdditionalContext
	}

	out, _ := w.run(t, "start", input("startup", sub))
	assert.Empty(t, out, "no profile: nothing to say")

	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	quote := "no, don't mock the database, use the test container"
	e := store.Entry{ID: store.NewID(store.ScopeProject, repo, store.Guards, "don't mock the database"),
		Scope: store.ScopeProject, Project: repo, Dimension: store.Guards, Text: "don't mock the database",
		Weight: 0.7, Count: 1, Sessions: []string{"s-1"}, FirstSeen: ts, LastSeen: ts,
		State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: ts,
		Evidence: []store.Evidence{{Session: "s-1", UUID: "9f8e7d6c-0000", Timestamp: ts, Quote: quote}}}
	profiles := store.Open(store.Dir(w.dirs))
	_, err := profiles.Update("test", func(p *store.Profile) error {
		p.Entries = append(p.Entries, e)
		return nil
	})
	require.NoError(t, err)

	for _, source := range []string{"startup", "clear", "compact"} {
		out, _ = w.run(t, "start", input(source, sub))
		ctx := additional(out)
		assert.Contains(t, ctx, "NEVER mock the database.", source)
		b, _ := json.Marshal(quote)
		assert.Contains(t, ctx, string(b), "the user's words, traceable: %s", source)
		assert.Contains(t, ctx, "session s-1")
	}
	out, _ = w.run(t, "start", input("resume", sub))
	assert.Empty(t, out, "a resumed session already has it")

	// The worker subagent gets it at SubagentStart.
	out, _ = w.run(t, "substart", map[string]any{"session_id": "sess-7", "hook_event_name": "SubagentStart",
		"agent_id": "a1", "agent_type": "synaxi:synaxi-worker", "cwd": sub})
	var sub1 struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sub1), out)
	assert.Equal(t, "SubagentStart", sub1.HookSpecificOutput.HookEventName)
	assert.Contains(t, sub1.HookSpecificOutput.AdditionalContext, "NEVER mock the database.")
	out, _ = w.run(t, "start", input("startup", t.TempDir()))
	assert.Empty(t, out, "another project gets only global entries, and there are none")

	// A cap from the config bounds it.
	require.NoError(t, os.MkdirAll(w.dirs.Config, 0o700))
	require.NoError(t, os.WriteFile(w.dirs.ConfigFile(), []byte("[guidance]\nmax_chars = 500\n"), 0o600))
	_, err = profiles.Update("more", func(p *store.Profile) error {
		for i := range 20 {
			x := e
			x.Text = strings.Repeat("x", i+1) + " always keep this rule"
			x.ID = store.NewID(x.Scope, repo, x.Dimension, x.Text)
			p.Entries = append(p.Entries, x)
		}
		return nil
	})
	require.NoError(t, err)
	out, _ = w.run(t, "start", input("startup", sub))
	assert.LessOrEqual(t, len([]rune(additional(out))), 500)

	// Rolled back to nothing: the next session gets nothing.
	_, err = profiles.Reset()
	require.NoError(t, err)
	out, _ = w.run(t, "start", input("startup", sub))
	assert.Empty(t, out)
	out, _ = w.run(t, "substart", map[string]any{"session_id": "sess-7", "agent_id": "a2", "cwd": sub})
	assert.Empty(t, out)

	// Turned off by config.
	_, err = profiles.Update("again", func(p *store.Profile) error {
		p.Entries = append(p.Entries, e)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(w.dirs.ConfigFile(), []byte("[guidance]\nsession_start = false\n"), 0o600))
	out, _ = w.run(t, "start", input("startup", sub))
	assert.Empty(t, out)
}

// Candidates waiting: the notice is shown to the user (systemMessage) and
// told to the model, once a day per project.
func TestStartShowsTheUserTheReviewNotice(t *testing.T) {
	w := newWorld(t, deadProxyd)
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := store.Entry{ID: "c1", Scope: store.ScopeProject, Project: repo, Dimension: store.Guards, Text: "never use tabs",
		Weight: 0.7, Count: 1, Sessions: []string{"s-1"}, FirstSeen: ts, LastSeen: ts, State: store.Candidate,
		Evidence: []store.Evidence{{Session: "s-1", UUID: "u-1", Timestamp: ts, Quote: "never use tabs"}}}
	_, err := store.Open(store.Dir(w.dirs)).Update("test", func(p *store.Profile) error {
		p.Entries = append(p.Entries, e)
		return nil
	})
	require.NoError(t, err)
	in := startInput("startup")
	in["cwd"] = repo
	out, _ := w.run(t, "start", in)
	var o struct {
		SystemMessage      string
		HookSpecificOutput struct{ AdditionalContext string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	const line = "synaxi learned 1 thing it may apply from now on — /synaxi:review"
	assert.Contains(t, o.SystemMessage, line, "the user sees it")
	assert.Contains(t, o.HookSpecificOutput.AdditionalContext, line, "the model knows it")
	assert.NotContains(t, o.SystemMessage+o.HookSpecificOutput.AdditionalContext, "tabs", "never the candidate's text")
	out, _ = w.run(t, "start", in)
	assert.NotContains(t, out, "/synaxi:review", "once a day in this project")
}
