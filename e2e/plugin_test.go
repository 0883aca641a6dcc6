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

// TestPluginValidates runs the real CLI's validator on the marketplace (the
// repository root) and on the plugin directory.
func TestPluginValidates(t *testing.T) {
	e := claudecli.NewEnv(t, "")
	root := claudecli.RepoRoot()
	for _, dir := range []string{root, filepath.Join(root, "plugin")} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := e.Run(ctx, "plugin", "validate", dir)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, "claude plugin validate %s\n%s\n%s", dir, res.Stdout, res.Stderr)
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
				Timeout       int
			}
		}
	}
	readJSONFile(t, filepath.Join(root, "plugin", "hooks", "hooks.json"), &hooks)
	want := map[string]struct{ matcher, run string }{
		"SessionStart": {"", "synaxi-session start"},
		"PreCompact":   {"", "synaxi-session precompact"},
		"SessionEnd":   {"", "synaxi-session end"},
		"PreToolUse":   {"Read|Bash", "synaxi-noreread pre"},
		"PostToolUse":  {"Read|Bash|Edit|Write|MultiEdit|NotebookEdit", "synaxi-noreread post"},
	}
	assert.Len(t, hooks.Hooks, len(want))
	for event, w := range want {
		groups := hooks.Hooks[event]
		require.Len(t, groups, 1, event)
		assert.Equal(t, w.matcher, groups[0].Matcher, event)
		require.Len(t, groups[0].Hooks, 1, event)
		h := groups[0].Hooks[0]
		assert.Equal(t, "command", h.Type, event)
		assert.Equal(t, `sh "${CLAUDE_PLUGIN_ROOT}/bin/synaxi-run" `+w.run, h.Command, event)
		assert.Positive(t, h.Timeout, event)
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

	for _, skill := range []string{"explore", "brief"} {
		fields, _ := frontmatter(t, filepath.Join(root, "plugin", "skills", skill, "SKILL.md"))
		assert.Equal(t, skill, fields["name"])
		assert.NotEmpty(t, fields["description"])
	}
}
