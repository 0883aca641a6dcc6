package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/tokens"
)

// synaxiToolPrefix is how the installed plugin's MCP tools are named.
const synaxiToolPrefix = "mcp__plugin_synaxi_synaxi__"

// requestTools is the tools array of a request body: each tool's name and
// its definition as sent.
func requestTools(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	out := map[string]json.RawMessage{}
	for _, raw := range req.Tools {
		var def struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(raw, &def))
		out[def.Name] = raw
	}
	return out
}

// synaxiToolTokens is the estimated size of the synaxi tool definitions a
// request carries, in tokens.
func synaxiToolTokens(tools map[string]json.RawMessage) (names []string, size int) {
	for name, raw := range tools {
		if strings.HasPrefix(name, synaxiToolPrefix) {
			names = append(names, strings.TrimPrefix(name, synaxiToolPrefix))
			size += tokens.EstimateBytes(raw)
		}
	}
	return names, size
}

// toolUseNames is the name of every tool_use in a request body's
// messages, in order.
func toolUseNames(t *testing.T, body []byte) []string {
	t.Helper()
	var names []string
	for _, b := range requestBlocks(t, body) {
		var name string
		if string(b["type"]) == `"tool_use"` && json.Unmarshal(b["name"], &name) == nil {
			names = append(names, name)
		}
	}
	return names
}

// mainRequests is the bodies of the requests the agent answered.
func mainRequests(fake *fakeapi.Server) [][]byte {
	var out [][]byte
	for _, r := range fake.MessagesRequests() {
		if !r.Side {
			out = append(out, r.Body)
		}
	}
	return out
}

// TestRecallToolLoadedUpfront: the synaxi MCP server lists recall with
// _meta "anthropic/alwaysLoad", and Claude Code 2.1.332 keeps that one
// tool's schema in every request of a session with tool search on (the
// default, and what `synaxi install --route` sets), while the other synaxi
// tools stay deferred (named only in the deferred-tools message). With
// ENABLE_TOOL_SEARCH=false every synaxi tool is loaded; the logged sizes
// are the per-request cost of each choice. The plugin's worker agent lists
// its tools and leaves recall out (docs/maps.md says why), so its requests
// carry no synaxi tool.
func TestRecallToolLoadedUpfront(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	for _, tc := range []struct {
		name   string
		vars   []string
		args   []string
		loaded []string // the synaxi tools whose schema the request carries
	}{
		{"tool search unset", nil, nil, []string{"recall"}},
		{"tool search on", []string{"ENABLE_TOOL_SEARCH=true"}, nil, []string{"recall"}},
		{"tool search off", []string{"ENABLE_TOOL_SEARCH=false"}, nil,
			[]string{"file_outline", "find_symbol", "profile", "recall", "repo_map", "review_candidates", "review_decide"}},
		// The worker's tool list does not name recall: it has none.
		{"worker", []string{"ENABLE_TOOL_SEARCH=true"}, []string{"--agent", "synaxi:synaxi-worker"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := claudecli.NewEnv(t, "")
			fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(*fakeapi.View) fakeapi.Reply {
				return fakeapi.Reply{Text: "ok"}
			})})
			t.Cleanup(fake.Close)
			e.BaseURL = fake.URL()
			e.Vars = append(e.Vars, tc.vars...)
			e.InstallPlugin(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := e.Run(ctx, append(append([]string{"-p", "--permission-mode", "bypassPermissions"}, tc.args...), "hello")...)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)

			bodies := mainRequests(fake)
			require.NotEmpty(t, bodies)
			tools := requestTools(t, bodies[0])
			names, size := synaxiToolTokens(tools)
			assert.ElementsMatch(t, tc.loaded, names, "synaxi tools with their schema in the request")
			t.Logf("synaxi tool definitions in the request: %d, ~%d tokens", len(names), size)
			if tc.loaded == nil {
				return
			}
			recall := string(tools[synaxiToolPrefix+"recall"])
			assert.Contains(t, recall, `"input_schema"`)
			assert.NotContains(t, recall, "defer_loading", "recall is not deferred")
			if len(tc.loaded) == 1 {
				assert.Contains(t, tools, "ToolSearch")
				assert.Contains(t, string(bodies[0]), synaxiToolPrefix+"repo_map", "the map tools are named for ToolSearch")
			}
		})
	}
}

// recallAgent plays the model of a routed main session in one -p turn: it
// counts the modules' lines with wc, reads modules one per request, then
// answers how many lines wc counted, from the request when the output is
// still there, else recovering it with one call: the recall tool when the
// request carries it and the fold note names the output's reference, else
// a re-run.
type recallAgent struct {
	mods, wc   string
	reads      int
	mu         sync.Mutex
	recoveries []string // the tool each recovery called
	answer     string
}

func (a *recallAgent) mod(i int) string { return filepath.Join(a.mods, fmt.Sprintf("m%02d.py", i)) }

func (a *recallAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, since := v.TypedTurn()
	switch {
	case len(since) == 0:
		return fakeapi.Reply{Text: "Counting lines first.", ToolUses: []fakeapi.ToolUse{bashUse(a.wc)}}
	case a.reads < recallModules:
		a.reads++
		return fakeapi.Reply{Text: "Reading " + a.mod(a.reads), ToolUses: []fakeapi.ToolUse{readUse(a.mod(a.reads))}}
	}
	last := since[len(since)-1]
	if len(a.recoveries) > 0 && last.Answered {
		if m := wcTotalRE.FindStringSubmatch(last.Result); m != nil {
			a.answer = "wc counted " + m[1] + " lines in total."
			return fakeapi.Reply{Text: a.answer}
		}
	}
	visible := v.VisibleText()
	if m := wcTotalRE.FindStringSubmatch(visible); m != nil && len(a.recoveries) == 0 {
		a.answer = "wc counted " + m[1] + " lines in total (still in view)."
		return fakeapi.Reply{Text: a.answer}
	}
	if len(a.recoveries) > 0 {
		return fakeapi.Reply{Text: "recovery failed: " + last.Result}
	}
	if ref := recallRef(visible, a.wc); ref != "" && v.HasTool(recallTool) {
		a.recoveries = append(a.recoveries, "recall")
		return fakeapi.Reply{Text: "That output was folded; recalling it.", ToolUses: []fakeapi.ToolUse{{Name: recallTool, Input: map[string]any{"ref": ref}}}}
	}
	a.recoveries = append(a.recoveries, "re-run")
	return fakeapi.Reply{Text: "That output is no longer in view; running it again.", ToolUses: []fakeapi.ToolUse{bashUse(a.wc)}}
}

// recallModules is how many of readingSession's 12 KB modules the session
// reads after wc: enough, against the pinned 4K budget, for the engine to
// engage and fold the wc output out.
const recallModules = 16

// TestRecallOneCallInRoutedSession: a routed main session as `synaxi
// install --route` sets it up (tool search on, the installed plugin, the
// proxy's default scope; readingSession's modules and 4K budget, so
// folding happens in a test-sized session): wc counts the modules' lines, sixteen modules are
// read, then the agent answers the wc total. By then the wc output is
// folded out of the request (the fold note names its recall reference),
// the recall tool's schema is in that request's tools, and the agent gets
// the output back with exactly one call, recall, and no ToolSearch.
func TestRecallOneCallInRoutedSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	var agent *recallAgent
	e, _, fake, _ := readingSession(t, true, func(a *ttyPersonAgent) fakeapi.Agent {
		agent = &recallAgent{mods: a.mods, wc: a.wc}
		return agent
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "--permission-mode", "bypassPermissions",
		"Count the lines of the modules with wc, read m01.py to m16.py, then tell me how many lines wc counted in total.")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)

	wantTotal := fmt.Sprintf("%d total", personTTYModules*2*personTTYLines)
	agent.mu.Lock()
	recoveries, answer := append([]string(nil), agent.recoveries...), agent.answer
	agent.mu.Unlock()
	assert.Equal(t, []string{"recall"}, recoveries, "the folded wc output came back with one recall call")
	assert.Equal(t, "wc counted "+strings.TrimSuffix(wantTotal, " total")+" lines in total.", answer)
	assert.Contains(t, res.Stdout, answer)

	// On the bytes the upstream received: the request the agent recalled
	// from had the wc output folded out, named its reference, and carried
	// the recall tool's schema; no request carried a ToolSearch call.
	var asked []byte
	bodies := mainRequests(fake)
	for _, body := range bodies {
		called := toolUseNames(t, body)
		assert.NotContains(t, called, "ToolSearch", "no ToolSearch call")
		if slices.Contains(called, recallTool) {
			break
		}
		asked = body
	}
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
	}
	require.NotNil(t, asked, "a request before the recall call")
	assert.NotContains(t, string(asked), wantTotal, "the wc output was folded out")
	assert.Contains(t, string(asked), "[recall r", "the fold note names a recall reference")
	tools := requestTools(t, asked)
	require.Contains(t, tools, recallTool, "the recall tool's schema is in the request")
	assert.NotContains(t, string(tools[recallTool]), "defer_loading")
	t.Logf("%d main requests, recoveries %v, recall schema ~%d tokens", len(bodies), recoveries, tokens.EstimateBytes(tools[recallTool]))
}
