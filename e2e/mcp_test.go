package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// TestMCPToolsThroughRealClient drives the real Claude Code CLI with the
// plugin installed: a scripted model calls file_outline, then repo_map with
// a focus file, then file_outline on a path outside the project, and reads
// each answer only from the tool_result in the next request.
func TestMCPToolsThroughRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	const prefix = "mcp__plugin_synaxi_synaxi__"
	e := claudecli.NewEnv(t, "")
	files := map[string]string{
		"go.mod":         "module demo\n\ngo 1.22\n",
		"store/store.go": "// Package store keeps values.\npackage store\n\n// Store holds values.\ntype Store struct{ m map[string]string }\n\n// New makes a Store.\nfunc New() *Store { return &Store{m: map[string]string{}} }\n\n// Get returns the value for k.\nfunc (s *Store) Get(k string) string { return s.m[k] }\n",
		"main.go":        "package main\n\nimport \"demo/store\"\n\nfunc main() { println(store.New().Get(\"a\")) }\n",
	}
	for rel, content := range files {
		p := filepath.Join(e.Work, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}

	wantOutline := "L11 method func (s *Store) Get(k string) string  // Get returns the value for k."
	script := []fakeapi.ToolUse{
		{Name: prefix + "file_outline", Input: map[string]any{"path": "store/store.go"}},
		{Name: prefix + "repo_map", Input: map[string]any{"budget": 512, "focus": []any{"main.go"}}},
		{Name: prefix + "file_outline", Input: map[string]any{"path": "../outside.go"}},
	}
	var seen []fakeapi.Call
	agent := fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		if v.IsSideRequest() {
			return fakeapi.Reply{Text: "ok"}
		}
		if !v.HasTool(prefix + "file_outline") {
			return fakeapi.Reply{Text: "no map tools: " + strings.Join(v.ToolNames, ",")}
		}
		done := 0
		for _, c := range v.ToolResults() {
			if strings.HasPrefix(c.Name, prefix) {
				done++
			}
		}
		if done < len(script) {
			return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{script[done]}}
		}
		seen = v.ToolResults()
		return fakeapi.Reply{Text: "mapped"}
	})
	upstream := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(upstream.Close)
	e.BaseURL = upstream.URL()
	// The main agent would otherwise see MCP tools only through ToolSearch;
	// load them upfront so the scripted model can call them directly.
	e.Vars = append(e.Vars, "ENABLE_TOOL_SEARCH=false")
	e.InstallPlugin(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "--permission-mode", "bypassPermissions", "--output-format", "json", "Map this repository.")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	require.Equal(t, "mapped", out.Result)

	require.Len(t, seen, len(script))
	outline, repoMap, outside := seen[0], seen[1], seen[2]
	assert.False(t, outline.IsError, outline.Result)
	assert.Contains(t, outline.Result, "# outline of store/store.go (go, package store, 11 lines, 4 definitions)")
	assert.Contains(t, outline.Result, wantOutline)

	assert.False(t, repoMap.IsError, repoMap.Result)
	assert.Contains(t, repoMap.Result, "# repo map of ")
	assert.Contains(t, repoMap.Result, "store/store.go\n")
	assert.Contains(t, repoMap.Result, "L8: func New() *Store")

	assert.True(t, outside.IsError, outside.Result)
	assert.Contains(t, outside.Result, "outside the project root")
}
