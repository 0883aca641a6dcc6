package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// requestBlocks are the content blocks of a request's messages, with the
// blocks of each tool_result's content after it.
func requestBlocks(t *testing.T, body []byte) []map[string]json.RawMessage {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var out []map[string]json.RawMessage
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		var blocks []map[string]json.RawMessage
		if json.Unmarshal(raw, &blocks) != nil {
			return // a string
		}
		for _, b := range blocks {
			out = append(out, b)
			if c, ok := b["content"]; ok {
				walk(c)
			}
		}
	}
	for _, m := range req.Messages {
		walk(m.Content)
	}
	return out
}

// blockCount counts the blocks of typ whose field key is the JSON string
// value.
func blockCount(blocks []map[string]json.RawMessage, typ, key, value string) int {
	n := 0
	want, _ := json.Marshal(value)
	for _, b := range blocks {
		if string(b["type"]) == `"`+typ+`"` && string(b[key]) == string(want) {
			n++
		}
	}
	return n
}

// TestPlanModeToolSearchProjectedRealClient: plan mode in a routed session
// with tool search on, as `synaxi install --route` sets it (2.1.332's
// default): ExitPlanMode is deferred, named in the system prompt's list of
// deferred tools and absent from request.tools. The session runs without
// the plugin: the deferral is tool search's alone (the plugin adds its MCP
// tools to the list and recall upfront), and with it the session took 55
// to 114 s and 2.1.332 at times sent a late MCP server's tools as a system
// message of tool_addition blocks, which the fake does not know.
// The agent reads sixteen modules under the plan-mode reminder, finds
// ExitPlanMode named as deferred, loads it with one ToolSearch call
// ("select:ExitPlanMode", the form the prompt gives); Claude Code answers
// with a tool_reference block and from then on declares ExitPlanMode in
// request.tools with defer_loading (the API shows it to the model while a
// reference names it; the fake's view does the same). The agent calls it,
// the person approves in the client's dialog, and a turn of four reads
// follows. On the fake's received bytes: the ToolSearch result and the
// ExitPlanMode call are in requests served as the engine's projection,
// the served ExitPlanMode definition is the client's (with defer_loading,
// not a roster stub), every request after the load keeps the
// tool_reference in view (the engine never folds it: before, 6 of the 7
// requests after the load had lost it), and every request is valid.
func TestPlanModeToolSearchProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, a, fake, proxy := mechanismSession(t)
	e.Vars = append(e.Vars, "ENABLE_TOOL_SEARCH=true") // the later value wins
	approvePlan(t, e)

	a.mu.Lock()
	loads := append([]string(nil), a.loads...)
	a.mu.Unlock()
	assert.Equal(t, []string{"ExitPlanMode"}, loads, "one ToolSearch call")

	// loaded is the first request holding the ToolSearch call, call the
	// first holding the ExitPlanMode call; after the load, unreferenced
	// counts the requests that declare ExitPlanMode (deferred) with no
	// tool_reference naming it in view: the API would not show it there.
	var referenced, unreferenced, stubbed int
	loaded, call := -1, -1
	reqs := fake.MessagesRequests()
	for i, r := range reqs {
		if r.Side {
			continue
		}
		tools := requestTools(t, r.Body)
		blocks := requestBlocks(t, r.Body)
		def, declared := tools["ExitPlanMode"]
		if loaded < 0 && blockCount(blocks, "tool_use", "name", "ToolSearch") > 0 {
			loaded = i
		}
		if loaded < 0 {
			assert.False(t, declared, "request %d: ExitPlanMode is deferred before the load", i)
			if strings.Contains(string(r.Body), "Plan mode is active") {
				assert.Contains(t, string(r.Body), fakeapi.JSONText(deferredHint), "request %d names the deferred tools", i)
			}
			continue
		}
		if call < 0 && blockCount(blocks, "tool_use", "name", "ExitPlanMode") > 0 {
			call = i
		}
		if !assert.True(t, declared, "request %d: ExitPlanMode declared after the load", i) {
			continue
		}
		assert.Contains(t, string(def), `"defer_loading":true`, "request %d: served as the client declares it", i)
		if strings.Contains(string(def), "Shortened:") {
			stubbed++
		}
		if blockCount(blocks, "tool_reference", "tool_name", "ExitPlanMode") > 0 {
			referenced++
		} else {
			unreferenced++
		}
	}
	require.Positive(t, loaded, "a request holds the ToolSearch result")
	require.Positive(t, call, "a request holds the ExitPlanMode call")
	for _, i := range []int{loaded, call - 1} { // the load's result, the request the call answered
		assert.Positive(t, blockCount(requestBlocks(t, reqs[i].Body), "tool_reference", "tool_name", "ExitPlanMode"),
			"request %d holds the tool_reference", i)
	}
	assert.Zero(t, unreferenced, "after the load every request keeps ExitPlanMode's tool_reference in view (the engine never folds it)")
	// The engine's projection: its fold note, or an exchange it re-emits.
	body := string(reqs[call].Body)
	assert.True(t, strings.Contains(body, foldNote) || strings.Contains(body, syntheticID),
		"request %d, holding the ExitPlanMode call, served as the engine's projection", call)
	t.Logf("%d requests, the ToolSearch call in request %d, ExitPlanMode's in %d; after the load ExitPlanMode's reference in view in %d, not in %d, a roster stub in %d; %s; %s",
		len(reqs), loaded, call, referenced, unreferenced, stubbed,
		checkServed(t, e, fake, proxy, `"tool_name":"ExitPlanMode"`), time.Since(start).Round(time.Second))
}
