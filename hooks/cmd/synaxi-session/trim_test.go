package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/trim"
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
