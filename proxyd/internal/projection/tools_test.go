package projection

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// TestStubKeepsWhatACallNeeds: a stub keeps the name, the first sentence
// and every constraint of the schema, at every level, and drops prose —
// but never a property that happens to be called "description".
func TestStubKeepsWhatACallNeeds(t *testing.T) {
	tool := gjson.Parse(`{"name":"Skill","description":"Run a skill. It expands to its instructions.\nMore.","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"skill":{"type":"string","description":"the skill's name"},"description":{"type":"string","description":"why"},"opts":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","enum":["a","b"],"description":"x"}},"required":["k"]}},"mode":{"anyOf":[{"type":"string","title":"t"},{"type":"null"}]}},"required":["skill"],"additionalProperties":false}}`)
	stub := stubTool(tool)
	require.True(t, gjson.ValidBytes(stub), "%s", stub)
	assert.Equal(t, `{"name":"Skill","description":"Run a skill. (Shortened: its full description is served after its first call.)","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"skill":{"type":"string"},"description":{"type":"string"},"opts":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","enum":["a","b"]}},"required":["k"]}},"mode":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["skill"],"additionalProperties":false}}`, string(stub))
}

// TestRosterIsMonotone: the served roster, before the projection engages
// and after, depends on the tools the conversation has ever called, not
// on the calls the request still shows:
// a tool called once stays in full after its call was folded away, a tool
// never called is a stub (or left out, when trimming), and from one
// request to the next the tools change only when a tool is called for the
// first time.
func TestRosterIsMonotone(t *testing.T) {
	msgs := []obj{user(text("goal")),
		assistant(toolUse("toolu_w", "WebFetch", obj{"url": "https://example.com"})), user(toolResult("toolu_w", "page", false))}
	for i := range 80 {
		// Reads under a fifth of the budget: no read the session passes
		// through is folded at its next turn (pass.go), so the tail grows
		// and rebuilds fold the WebFetch call away.
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/f%02d.go", i), fileLines(id, 60))...)
	}
	for _, cfg := range []Config{{StubTools: true, BudgetTokens: 4000}, {TrimTools: true, BudgetTokens: 4000}} {
		eng := New(cfg)
		var prev string
		changes, reprojections := 0, 0
		for n := 2; n <= len(msgs); n++ {
			if msgs[n-1]["role"] != "user" {
				continue
			}
			r, err := eng.ProjectBody(context.Background(), reqBody(msgs[:n]), "")
			require.NoError(t, err)
			require.NoError(t, validate.Request(r.Body))
			if r.Reprojected {
				reprojections++
			}
			tools := gjson.GetBytes(r.Body, "tools").Raw
			if prev != "" && tools != prev {
				changes++
			}
			prev = tools
			assert.Contains(t, gjson.GetBytes(r.Body, "tools.#(name==\"WebFetch\").description").String(), "WebFetch tool", "called once: served in full")
			if cfg.StubTools {
				assert.Contains(t, gjson.GetBytes(r.Body, "tools.#(name==\"mcp__x__y\").description").String(), stubNote)
			} else {
				assert.False(t, gjson.GetBytes(r.Body, "tools.#(name==\"mcp__x__y\")").Exists())
			}
		}
		assert.Greater(t, reprojections, 2, "the WebFetch call was folded away")
		assert.Zero(t, changes, "the roster never changed")
	}
}

// TestTrimKeepsRecall: a trimmed roster leaves out tools never called,
// except synaxi's recall tool, which fold notes name and which is served
// as a stub until its first call; stubbing and serving all leave it as
// they leave any tool.
func TestTrimKeepsRecall(t *testing.T) {
	tools := gjson.Parse(`[{"name":"Read","description":"Read a file.","input_schema":{"type":"object"}},` +
		`{"name":"mcp__plugin_synaxi_synaxi__recall","description":"Return folded output. More.","input_schema":{"type":"object","properties":{"ref":{"type":"string","description":"r…"}},"required":["ref"]}},` +
		`{"name":"mcp__synaxi__recall","description":"Return folded output.","input_schema":{"type":"object"}},` +
		`{"name":"mcp__other__recall","description":"Someone else's.","input_schema":{"type":"object"}},` +
		`{"name":"mcp__synaxi__repo_map","description":"Map the repo.","input_schema":{"type":"object"}}]`)
	names := func(ro roster, called map[string]bool) []string {
		var out []string
		for _, raw := range projectTools(tools, ro, called) {
			t := gjson.ParseBytes(raw)
			n := t.Get("name").String()
			if strings.HasSuffix(t.Get("description").String(), stubNote) {
				n += " (stub)"
			}
			out = append(out, n)
		}
		return out
	}
	assert.Equal(t, []string{"Read", "mcp__plugin_synaxi_synaxi__recall (stub)", "mcp__synaxi__recall (stub)"}, names(rosterTrim, nil))
	assert.Equal(t, []string{"Read", "mcp__plugin_synaxi_synaxi__recall", "mcp__synaxi__recall (stub)"}, names(rosterTrim, map[string]bool{"mcp__plugin_synaxi_synaxi__recall": true}))
	assert.Equal(t, []string{"Read", "mcp__plugin_synaxi_synaxi__recall (stub)", "mcp__synaxi__recall (stub)", "mcp__other__recall (stub)", "mcp__synaxi__repo_map (stub)"}, names(rosterStub, nil))
	assert.Len(t, names(rosterAll, nil), 5)
}

// TestStubRestoredByACall: the request that carries a stubbed tool's
// first result serves its full schema, and every later one does.
func TestStubRestoredByACall(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", fileLines("a", 40))...)
	r, err := New(Config{StubTools: true, AlwaysEngage: true}).ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	assert.Contains(t, gjson.GetBytes(r.Body, `tools.#(name=="mcp__x__y").description`).String(), stubNote)
	msgs = append(msgs, assistant(toolUse("toolu_2", "mcp__x__y", obj{})), user(toolResult("toolu_2", "ok", false)))
	r, err = New(Config{StubTools: true, AlwaysEngage: true}).ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	require.NoError(t, validate.Request(r.Body))
	assert.Equal(t, "mcp__x__y tool", gjson.GetBytes(r.Body, `tools.#(name=="mcp__x__y").description`).String())
	assert.Contains(t, gjson.GetBytes(r.Body, `tools.#(name=="WebFetch").description`).String(), stubNote, "the others stay stubs")
	assert.Equal(t, "Read tool", gjson.GetBytes(r.Body, `tools.#(name=="Read").description`).String(), "core tools are never stubs")
}

// TestNotEngagedServesTheRosterOnly: a request the projection does not
// engage on is the client's body byte for byte but for its tools, which
// are the roster an engaged request serves (so engaging keeps the cached
// tools); without stubs or trimming it is the client's body byte for byte.
func TestNotEngagedServesTheRosterOnly(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", fileLines("a", 40))...)
	in := reqBody(msgs)
	r, err := New(Config{StubTools: true}).ProjectBody(context.Background(), in, "")
	require.NoError(t, err)
	require.False(t, r.Engaged)
	require.NoError(t, validate.Request(r.Body))
	var sent, served map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(in, &sent))
	require.NoError(t, json.Unmarshal(r.Body, &served))
	require.Len(t, served, len(sent))
	for k, v := range sent {
		if k != "tools" {
			assert.Equal(t, string(v), string(served[k]), "%s as sent", k)
		}
	}
	engaged, err := New(Config{StubTools: true, AlwaysEngage: true}).ProjectBody(context.Background(), in, "")
	require.NoError(t, err)
	assert.JSONEq(t, gjson.GetBytes(engaged.Body, "tools").Raw, string(served["tools"]), "the engaged roster")
	assert.Contains(t, gjson.GetBytes(r.Body, `tools.#(name=="mcp__x__y").description`).String(), stubNote)
	assert.Equal(t, "Read tool", gjson.GetBytes(r.Body, `tools.#(name=="Read").description`).String())
	assert.Equal(t, len(r.Body), r.Stats.ServedBytes)

	r, err = New(Config{}).ProjectBody(context.Background(), in, "")
	require.NoError(t, err)
	assert.Equal(t, string(in), string(r.Body), "every tool served as sent: the client's body")
}

// TestRosterChangeRebuilds: the first call of a stubbed tool changes the
// roster, so the request carrying its result writes its whole prefix
// anyway; the engine takes it to engage (before, a conversation that had
// not yet paid for it) or to rebuild (after), when that serves less.
func TestRosterChangeRebuilds(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	for i := range 10 {
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/f%02d.go", i), fileLines(id, 80))...)
	}
	eng := New(Config{StubTools: true})
	r, err := eng.ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	require.False(t, r.Engaged, "no saving predicted yet")
	call := append(slices.Clone(msgs), assistant(toolUse("toolu_x", "mcp__x__y", obj{})), user(toolResult("toolu_x", "ok", false)))
	r, err = eng.ProjectBody(context.Background(), reqBody(call), "")
	require.NoError(t, err)
	require.NoError(t, validate.Request(r.Body))
	assert.True(t, r.Engaged && r.Reprojected, "engaged where the roster changed")
	assert.Equal(t, "mcp__x__y tool", gjson.GetBytes(r.Body, `tools.#(name=="mcp__x__y").description`).String())
	// The same call with no roster change (the tool already in full):
	// no saving predicted, nothing engages.
	r, err = New(Config{}).ProjectBody(context.Background(), reqBody(call), "")
	require.NoError(t, err)
	assert.False(t, r.Engaged)

	// Engaged, then a first call: the request rebuilds where the same
	// conversation with every tool in full does not.
	for i := 10; i < 60; i++ {
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/f%02d.go", i), fileLines(id, 80))...)
	}
	stub, all := New(Config{StubTools: true}), New(Config{})
	taken := 0
	for n := 23; n <= len(msgs); n += 2 {
		call := append(slices.Clone(msgs[:n]), assistant(toolUse("toolu_x", "mcp__x__y", obj{})), user(toolResult("toolu_x", "ok", false)))
		s, err := stub.ProjectBody(context.Background(), reqBody(call), "")
		require.NoError(t, err)
		a, err := all.ProjectBody(context.Background(), reqBody(call), "")
		require.NoError(t, err)
		if s.Engaged && a.Engaged && s.Reprojected && !a.Reprojected {
			taken++
		}
	}
	assert.Positive(t, taken, "a rebuild where only the roster change makes it free")
	t.Logf("%d of %d engaged requests rebuilt at the roster change alone", taken, (len(msgs)-23)/2+1)
}
