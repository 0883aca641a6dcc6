package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/visibility"
)

// workerSentinel marks the worker's requests for the proxy.
const workerSentinel = "SYNAXI-PROJECTION-WORKER"

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

// frontmatter splits an agent or skill markdown file into its YAML
// frontmatter fields (top-level "key: value" lines) and its body.
func frontmatter(t *testing.T, path string) (map[string]string, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	require.True(t, strings.HasPrefix(text, "---\n"), "%s starts with frontmatter", path)
	head, body, ok := strings.Cut(text[4:], "\n---\n")
	require.True(t, ok, "%s: frontmatter is closed", path)
	fields := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields, body
}

// TestPluginValidates runs the real CLI's validator, with warnings as
// errors, on the marketplace (the repository root) and on the plugin.
func TestPluginValidates(t *testing.T) {
	e := claudecli.NewEnv(t, "")
	root := claudecli.RepoRoot()
	for _, dir := range []string{root, filepath.Join(root, "plugin")} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := e.Run(ctx, "plugin", "validate", "--strict", dir)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, "claude plugin validate --strict %s\n%s\n%s", dir, res.Stdout, res.Stderr)
		assert.Contains(t, res.Stdout, "Validation passed", dir)
	}
}

// TestPluginManifests pins the names every part of synaxi relies on.
func TestPluginManifests(t *testing.T) {
	root := claudecli.RepoRoot()

	var market struct {
		Name    string `json:"name"`
		Owner   struct{ Name string }
		Plugins []struct{ Name, Source string }
	}
	readJSONFile(t, filepath.Join(root, ".claude-plugin", "marketplace.json"), &market)
	assert.Equal(t, "synaxi", market.Name)
	assert.NotEmpty(t, market.Owner.Name)
	require.Len(t, market.Plugins, 1)
	assert.Equal(t, "synaxi", market.Plugins[0].Name)
	assert.Equal(t, "./plugin", market.Plugins[0].Source)

	var manifest map[string]any
	readJSONFile(t, filepath.Join(root, "plugin", ".claude-plugin", "plugin.json"), &manifest)
	assert.Equal(t, "synaxi", manifest["name"])
	assert.Equal(t, "MIT", manifest["license"])
	assert.NotContains(t, manifest, "hooks", "hooks/hooks.json is loaded automatically; naming it again breaks loading")

	var hooks struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Args          []string
				Timeout       int
			}
		}
	}
	readJSONFile(t, filepath.Join(root, "plugin", "hooks", "hooks.json"), &hooks)
	want := map[string]struct {
		matcher string
		runs    []string
	}{
		"SessionStart":  {"", []string{"synaxi-session start"}},
		"SubagentStart": {"synaxi:synaxi-worker", []string{"synaxi-session substart"}},
		"PreCompact":    {"", []string{"synaxi-session precompact"}},
		"SessionEnd":    {"", []string{"synaxi-session end", "synaxi-ingest"}},
		// Edits too: governor.mode on stops at whatever call follows a fire.
		"PreToolUse":  {"Read|Bash|Edit|Write|MultiEdit|NotebookEdit", []string{"synaxi-noreread pre"}},
		"PostToolUse": {"Read|Bash|Edit|Write|MultiEdit|NotebookEdit", []string{"synaxi-noreread post"}},
		// A failed Bash call feeds the loop governor (docs/governor.md).
		"PostToolUseFailure": {"Bash", []string{"synaxi-noreread post"}},
	}
	assert.Len(t, hooks.Hooks, len(want))
	for event, w := range want {
		groups := hooks.Hooks[event]
		require.Len(t, groups, 1, event)
		assert.Equal(t, w.matcher, groups[0].Matcher, event)
		require.Len(t, groups[0].Hooks, len(w.runs), event)
		for i, run := range w.runs {
			h := groups[0].Hooks[i]
			assert.Equal(t, "command", h.Type, event)
			// Exec form through sh: no shell parsing of the plugin path, and no
			// reliance on the launcher's execute bit.
			assert.Equal(t, "sh", h.Command, event)
			assert.Equal(t, append([]string{"${CLAUDE_PLUGIN_ROOT}/bin/synaxi-run"}, strings.Fields(run)...), h.Args, event)
			assert.Positive(t, h.Timeout, event)
		}
	}

	var mcp struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	readJSONFile(t, filepath.Join(root, "plugin", ".mcp.json"), &mcp)
	require.Contains(t, mcp.MCPServers, "synaxi")
	assert.Equal(t, []string{"${CLAUDE_PLUGIN_ROOT}/bin/synaxi-run", "synaxi-mcp"}, mcp.MCPServers["synaxi"].Args)

	agents := filepath.Join(root, "plugin", "agents")
	fields, body := frontmatter(t, filepath.Join(agents, "synaxi-worker.md"))
	assert.Equal(t, "synaxi-worker", fields["name"])
	assert.Equal(t, "Read, Write, Edit, Bash, Grep, Glob", fields["tools"])
	assert.Contains(t, body, workerSentinel)
	assert.NotContains(t, fields["description"], workerSentinel, "the orchestrator sees descriptions; the proxy must not gate on them")

	fields, body = frontmatter(t, filepath.Join(agents, "synaxi-chat.md"))
	assert.Equal(t, "synaxi-chat", fields["name"])
	assert.Contains(t, fields["tools"], "Agent(synaxi:synaxi-worker)")
	assert.Contains(t, fields["tools"], "AskUserQuestion")
	for _, tool := range []string{"Write", "Edit", "Bash"} {
		assert.NotContains(t, strings.Split(fields["tools"], ", "), tool, "the orchestrator writes no code")
	}
	assert.NotContains(t, body, workerSentinel)

	fields, _ = frontmatter(t, filepath.Join(agents, "explore.md"))
	assert.Equal(t, "explore", fields["name"])
	for _, tool := range []string{"repo_map", "file_outline", "find_symbol"} {
		name := "mcp__plugin_synaxi_synaxi__" + tool
		assert.Contains(t, fields["tools"], name)
		assert.LessOrEqual(t, len(name), 64, "API tool names are at most 64 characters")
	}

	for _, skill := range []string{"explore", "brief", "setup", "review", "trim"} {
		fields, _ := frontmatter(t, filepath.Join(root, "plugin", "skills", skill, "SKILL.md"))
		assert.Equal(t, skill, fields["name"])
		assert.NotEmpty(t, fields["description"])
	}

	// /synaxi:setup runs only when the user types it, and only synaxi's CLI
	// through the launcher; it asks before routing.
	fields, body = frontmatter(t, filepath.Join(root, "plugin", "skills", "setup", "SKILL.md"))
	assert.Equal(t, "true", fields["disable-model-invocation"])
	const cli = "sh ${CLAUDE_PLUGIN_ROOT}/bin/synaxi-run synaxi"
	assert.Equal(t, "Bash("+cli+" *)", fields["allowed-tools"])
	install, replay, route := strings.Index(body, cli+" install\n"), strings.Index(body, cli+" savings --replay\n"), strings.Index(body, cli+" install --route\n")
	assert.True(t, install >= 0 && replay > install && route > replay, "install, then the replay, then routing, in that order")
}

// workerAgent reads the file at readme, then answers with the marker line it
// found there. It acts only on what the request shows: if the Read result is
// not visible, it cannot produce the marker.
func workerAgent(readme, marker string) fakeapi.Agent {
	return fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		if !strings.Contains(v.System, workerSentinel) {
			return fakeapi.Reply{Text: "this is not the synaxi worker"}
		}
		if c, ok := v.LastToolResult(); ok && c.Name == "Read" {
			if strings.Contains(c.Result, marker) {
				return fakeapi.Reply{Text: "The readme says " + marker}
			}
			return fakeapi.Reply{Text: "the readme content is not visible"}
		}
		if len(v.CallsTo("Read")) > 0 {
			return fakeapi.Reply{Text: "stuck"}
		}
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{"file_path": readme}}}}
	})
}

// systemText returns the top-level system prompt of a Messages request body,
// joined; message text is deliberately not looked at.
func systemText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		System json.RawMessage `json:"system"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var s string
	if json.Unmarshal(req.System, &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	_ = json.Unmarshal(req.System, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// printResult is what `claude -p --output-format json` prints.
type printResult struct {
	Result    string `json:"result"`
	SessionID string `json:"session_id"`
	IsError   bool   `json:"is_error"`
}

// runAgent serves agent from a fake upstream, installs the plugin into e and
// runs `claude -p --agent name prompt` there, failing the test unless the
// client exits 0 with its JSON result.
func runAgent(t *testing.T, e *claudecli.Env, agent fakeapi.Agent, name, prompt string) (*fakeapi.Server, printResult) {
	t.Helper()
	upstream := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(upstream.Close)
	e.BaseURL = upstream.URL()
	e.InstallPlugin(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "--agent", name, "--permission-mode", "bypassPermissions",
		"--output-format", "json", prompt)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out printResult
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.False(t, out.IsError)
	return upstream, out
}

// TestPluginWorkerRunsWithHooks installs the plugin from the repository's
// marketplace into a fresh HOME and runs the worker as the main agent
// against the fake upstream: the sentinel reaches the upstream in the
// top-level system prompt, the Read round trip works, and the plugin's hooks
// ran (the session record and the no-reread record exist).
func TestPluginWorkerRunsWithHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	e := claudecli.NewEnv(t, "")
	readme := filepath.Join(e.Work, "README.md")
	const marker = "synaxi-e2e-marker-4711"
	require.NoError(t, os.WriteFile(readme, []byte("# Demo\n\n"+marker+"\n"), 0o644))

	upstream, out := runAgent(t, e, workerAgent(readme, marker), "synaxi:synaxi-worker",
		"Read README.md and tell me what it says.")
	assert.Equal(t, "The readme says "+marker, out.Result)
	require.NotEmpty(t, out.SessionID)

	// The worker's requests reach the upstream with the sentinel in the
	// top-level system prompt, and every request was valid.
	worker := 0
	for _, r := range upstream.MessagesRequests() {
		assert.Empty(t, r.Invalid, "the fake upstream rejected a request")
		if r.Side {
			continue
		}
		assert.Contains(t, systemText(t, r.Body), workerSentinel)
		worker++
	}
	assert.GreaterOrEqual(t, worker, 2, "a Read call and the answer after it")

	// SessionStart ran synaxi-session start.
	var session struct {
		SessionID string `json:"session_id"`
		Source    string `json:"source"`
		AgentType string `json:"agent_type"`
		Cwd       string `json:"cwd"`
		Started   string `json:"started"`
	}
	readJSONFile(t, filepath.Join(e.StateDir(), "sessions", statefile.SafeName(out.SessionID), "session.json"), &session)
	assert.Equal(t, out.SessionID, session.SessionID)
	assert.Equal(t, "startup", session.Source)
	assert.Equal(t, "synaxi:synaxi-worker", session.AgentType)
	assert.Equal(t, e.Work, session.Cwd)
	_, err := time.Parse(time.RFC3339, session.Started)
	assert.NoError(t, err)

	// PostToolUse ran synaxi-noreread post, which recorded the Read in the
	// main context's records (the worker is the main agent here).
	rec, ok := findReadRecord(t, filepath.Join(e.StateDir(), "noreread"), visibility.ContextKey(out.SessionID, ""), readme)
	require.True(t, ok, "no no-reread record of %s", readme)
	assert.True(t, rec.ViaTool)
	fi, err := os.Stat(readme)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), rec.Size)
	assert.NotEmpty(t, rec.Spans)
}

// readRecord is what the no-reread hook keeps about one file read in one
// context: the read's size, whether the Read tool made it, and its spans.
type readRecord struct {
	Size    int64
	ViaTool bool
	Spans   []string
}

// findReadRecord reads the record of path from the context log under dir
// whose key is ctxKey (reads.log, docs/noreread.md "The state files": a
// read is `r SIZE MTIME_NS INODE VIA AT_NS SPANS "PATH"`; `x "PATH"` and
// `X` forget). The record is the last read of path not forgotten since.
func findReadRecord(t *testing.T, dir, ctxKey, path string) (readRecord, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ctxKey, "reads.log"))
	if errors.Is(err, fs.ErrNotExist) {
		return readRecord{}, false
	}
	require.NoError(t, err)
	var found readRecord
	ok := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "X" {
			ok = false
			continue
		}
		i := strings.Index(line, ` "`)
		if i < 0 {
			continue
		}
		p, err := strconv.Unquote(line[i+1:])
		if err != nil || p != path {
			continue // a torn line, or another file
		}
		f := strings.Fields(line[:i])
		switch {
		case f[0] == "x":
			ok = false
		case f[0] == "r" && len(f) == 7:
			size, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err, line)
			found, ok = readRecord{Size: size, ViaTool: f[4] == "t", Spans: strings.Split(f[6], ",")}, true
		}
	}
	return found, ok
}

// TestPluginExploreUsesMapTools runs the explore agent: the plugin's MCP
// server starts through the launcher, its map tools reach the upstream under
// their plugin-scoped names, and a find_symbol call comes back with the
// definition's file.
func TestPluginExploreUsesMapTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	const prefix = "mcp__plugin_synaxi_synaxi__"
	e := claudecli.NewEnv(t, "")
	src := "package main\n\n// Greet says hello.\nfunc Greet() string { return \"hello\" }\n\nfunc main() { println(Greet()) }\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.Work, "main.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.Work, "go.mod"), []byte("module demo\n\ngo 1.22\n"), 0o644))

	agent := fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		if !v.HasTool(prefix + "find_symbol") {
			return fakeapi.Reply{Text: "no map tools"}
		}
		if c, ok := v.LastToolResult(); ok && c.Name == prefix+"find_symbol" {
			if !c.IsError && strings.Contains(c.Result, "main.go") {
				return fakeapi.Reply{Text: "Greet is defined in main.go"}
			}
			return fakeapi.Reply{Text: "lookup failed: " + c.Result}
		}
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: prefix + "find_symbol", Input: map[string]any{"name": "Greet"}}}}
	})
	upstream, out := runAgent(t, e, agent, "synaxi:explore", "Where is Greet defined?")
	assert.Equal(t, "Greet is defined in main.go", out.Result)

	var tools []string
	for _, r := range upstream.MessagesRequests() {
		if r.Side {
			continue
		}
		var req struct{ Tools []struct{ Name string } }
		require.NoError(t, json.Unmarshal(r.Body, &req))
		for _, tl := range req.Tools {
			tools = append(tools, tl.Name)
		}
		break
	}
	for _, name := range []string{"repo_map", "file_outline", "find_symbol"} {
		assert.Contains(t, tools, prefix+name)
	}
}

// TestPluginChatDelegatesToWorker runs the orchestrator as the main agent:
// it has no editing tools, delegates through Agent(synaxi:synaxi-worker), and
// only the worker's requests carry the sentinel in their top-level system.
func TestPluginChatDelegatesToWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	e := claudecli.NewEnv(t, "")
	readme := filepath.Join(e.Work, "README.md")
	const marker = "synaxi-e2e-delegation-0815"
	require.NoError(t, os.WriteFile(readme, []byte(marker+"\n"), 0o644))
	worker := workerAgent(readme, marker)

	agent := fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		if strings.Contains(v.System, workerSentinel) {
			return worker.Respond(v)
		}
		if c, ok := v.LastToolResult(); ok && c.Name == "Agent" {
			if strings.Contains(c.Result, marker) {
				return fakeapi.Reply{Text: "The worker reports " + marker}
			}
			return fakeapi.Reply{Text: "the worker's answer is not visible: " + c.Result}
		}
		if len(v.CallsTo("Agent")) > 0 {
			return fakeapi.Reply{Text: "stuck"}
		}
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: "Agent", Input: map[string]any{
			"subagent_type": "synaxi:synaxi-worker",
			"description":   "Read the readme",
			"prompt":        "## Goal\nReport what README.md says.\n\n## Proof\n`cat README.md`",
		}}}}
	})
	e.Vars = append(e.Vars, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1")
	upstream, out := runAgent(t, e, agent, "synaxi:synaxi-chat", "What does the readme say? Delegate it.")
	assert.Equal(t, "The worker reports "+marker, out.Result)

	var chat, work int
	for _, r := range upstream.MessagesRequests() {
		assert.Empty(t, r.Invalid)
		if r.Side {
			continue
		}
		var req struct{ Tools []struct{ Name string } }
		require.NoError(t, json.Unmarshal(r.Body, &req))
		var tools []string
		for _, tl := range req.Tools {
			tools = append(tools, tl.Name)
		}
		if strings.Contains(systemText(t, r.Body), workerSentinel) {
			work++
			assert.Contains(t, tools, "Edit")
			continue
		}
		chat++
		assert.Contains(t, tools, "Agent")
		assert.Contains(t, tools, "mcp__plugin_synaxi_synaxi__profile", "the orchestrator can consult the learned profile")
		for _, banned := range []string{"Write", "Edit", "Bash"} {
			assert.NotContains(t, tools, banned, "the orchestrator cannot change code")
		}
	}
	assert.GreaterOrEqual(t, chat, 2, "the delegation and the answer after it")
	assert.GreaterOrEqual(t, work, 2, "the worker's Read and its answer")
}
