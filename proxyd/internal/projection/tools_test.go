package projection

import (
	"context"
	"fmt"
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

// TestRosterIsMonotone: the served roster depends on the tools the
// conversation has ever called, not on the calls the request still shows:
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
			if !r.Engaged {
				continue
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
