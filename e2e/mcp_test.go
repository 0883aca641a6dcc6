package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	writeRepo(t, e.Work, files)

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
	require.Equal(t, "mapped", runWithMapTools(t, e, agent, "Map this repository."))

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

// writeRepo writes files (by slash path) under dir.
func writeRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// runWithMapTools installs the plugin, runs the real client in -p mode
// against a fake upstream driven by agent, and returns its final result.
func runWithMapTools(t *testing.T, e *claudecli.Env, agent fakeapi.Agent, args ...string) string {
	t.Helper()
	upstream := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(upstream.Close)
	e.BaseURL = upstream.URL()
	// The main agent would otherwise see MCP tools only through ToolSearch;
	// load them upfront so the scripted model can call them directly.
	e.Vars = append(e.Vars, "ENABLE_TOOL_SEARCH=false")
	e.InstallPlugin(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args = append([]string{"-p", "--permission-mode", "bypassPermissions", "--output-format", "json"}, args...)
	res, err := e.Run(ctx, args...)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	return out.Result
}

// TestExploreAgentMapsTypeScript runs the plugin's explore agent as the main
// agent on a small TypeScript repository. The scripted model acts only on
// what the tools return: it asks repo_map where the configuration is parsed,
// takes the definition the map lists, asks find_symbol for its line range and
// reads exactly that range, then answers with the file and line it read.
func TestExploreAgentMapsTypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	const prefix = "mcp__plugin_synaxi_synaxi__"
	e := claudecli.NewEnv(t, "")
	files := map[string]string{
		"package.json": `{"name": "demo", "version": "1.0.0"}` + "\n",
		"src/config.ts": "import { readFileSync } from \"fs\";\n\n/** Settings for the server. */\nexport interface Config {\n  port: number;\n  host: string;\n}\n\n" +
			"/** parseConfig reads a JSON config file and fills defaults. */\nexport function parseConfig(path: string): Config {\n  const raw = JSON.parse(readFileSync(path, \"utf8\"));\n" +
			"  return {\n    port: raw.port ?? 8080,\n    host: raw.host ?? \"localhost\",\n  };\n}\n\nexport const unrelated = 1;\n",
		"src/server.ts": "import { Config, parseConfig } from \"./config\";\n\nexport class Server {\n  constructor(private readonly config: Config) {}\n\n" +
			"  listen(): string {\n    return `${this.config.host}:${this.config.port}`;\n  }\n}\n\nexport function start(path: string): Server {\n" +
			"  const server = new Server(parseConfig(path));\n  server.listen();\n  return server;\n}\n",
		"src/main.ts": "import { start } from \"./server\";\n\nstart(process.argv[2] ?? \"config.json\");\n",
	}
	writeRepo(t, e.Work, files)

	defLine := regexp.MustCompile(`(?m)^  L(\d+): export function (parse\w+)\(`)
	siteLine := regexp.MustCompile(`(?m)^func (\w+) — ([\w/.]+):(\d+)-(\d+)$`)
	var final *fakeapi.View
	agent := fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		if v.IsSideRequest() {
			return fakeapi.Reply{Text: "ok"}
		}
		if !v.HasTool(prefix + "repo_map") {
			return fakeapi.Reply{Text: "no map tools: " + strings.Join(v.ToolNames, ",")}
		}
		maps, syms, reads := v.CallsTo(prefix+"repo_map"), v.CallsTo(prefix+"find_symbol"), v.CallsTo("Read")
		switch {
		case len(maps) == 0:
			return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: prefix + "repo_map", Input: map[string]any{"budget": 1000}}}}
		case len(syms) == 0:
			m := defLine.FindStringSubmatch(maps[0].Result)
			if m == nil {
				return fakeapi.Reply{Text: "the map names no parse function"}
			}
			return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: prefix + "find_symbol", Input: map[string]any{"name": m[2]}}}}
		case len(reads) == 0:
			m := siteLine.FindStringSubmatch(syms[0].Result)
			if m == nil {
				return fakeapi.Reply{Text: "find_symbol gave no site"}
			}
			from, _ := strconv.Atoi(m[3])
			to, _ := strconv.Atoi(m[4])
			return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{
				"file_path": filepath.Join(e.Work, filepath.FromSlash(m[2])), "offset": from, "limit": to - from + 1}}}}
		}
		final = v
		m := siteLine.FindStringSubmatch(syms[0].Result)
		return fakeapi.Reply{Text: fmt.Sprintf("The configuration is parsed by %s in %s:%s.", m[1], m[2], m[3])}
	})
	result := runWithMapTools(t, e, agent, "--agent", "synaxi:explore", "Where is the configuration parsed?")
	assert.Equal(t, "The configuration is parsed by parseConfig in src/config.ts:10.", result)

	require.NotNil(t, final)
	repoMap := final.CallsTo(prefix + "repo_map")[0]
	assert.False(t, repoMap.IsError, repoMap.Result)
	assert.Contains(t, repoMap.Result, "(typescript 3)")
	assert.Contains(t, repoMap.Result, "src/config.ts\n  L4: export interface Config\n  L10: export function parseConfig(path: string): Config\n")
	reads := final.CallsTo("Read")
	require.Len(t, reads, 1, "only the range the tools pointed to is read")
	assert.Equal(t, 10.0, reads[0].Input["offset"])
	assert.Equal(t, 7.0, reads[0].Input["limit"])
	lines := final.FileLines(filepath.Join(e.Work, "src", "config.ts"))
	assert.Len(t, lines, 7, "lines 10-16 visible, nothing else")
	assert.Equal(t, "export function parseConfig(path: string): Config {", lines[10])
	assert.Equal(t, "}", lines[16])
	assert.NotContains(t, lines, 18, "the unrelated export stays unread")
}
