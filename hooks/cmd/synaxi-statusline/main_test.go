package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// statusJSON has the shape Claude Code sends (platform-facts §3.2).
const statusJSON = `{"session_id":"sess-42","session_name":"demo","transcript_path":"/h/.claude/projects/p/sess-42.jsonl",
"cwd":"/home/u/proj/sub","version":"2.1.332","model":{"id":"claude-opus-4-7","display_name":"Opus 4.7"},
"workspace":{"current_dir":"/home/u/proj","project_dir":"/home/u/proj","added_dirs":[],"git_worktree":null},
"output_style":{"name":"default"},"cost":{"total_cost_usd":0.12,"total_duration_ms":4000,"total_api_duration_ms":3000,
"total_lines_added":3,"total_lines_removed":1},"context_window":{"total_input_tokens":15234,"total_output_tokens":420,
"context_window_size":200000,"used_percentage":7.6,"remaining_percentage":92.4,"current_usage":{"input_tokens":12,
"output_tokens":420,"cache_creation_input_tokens":300,"cache_read_input_tokens":14922}},"exceeds_200k_tokens":false,
"fast_mode":false,"effort":{"level":"high"},"thinking":{"enabled":true},"vim":{"mode":"NORMAL"},"agent":{"name":"synaxi:synaxi-chat"}}`

// openStdin yields the JSON and then blocks, like a stdin never closed.
type openStdin struct{ r io.Reader }

func (o *openStdin) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if err == io.EOF {
		select {}
	}
	return n, err
}

func setup(t *testing.T) xdg.Dirs {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("ANTHROPIC_BASE_URL", "")
	return xdg.Resolve()
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLineWithoutEOF(t *testing.T) {
	d := setup(t)
	cf := int64(20_000)
	require.NoError(t, ledger.Record(d, &ledger.Row{Session: "sess-42", Model: "claude-opus-4-7", Status: 200,
		Projected: true, Counterfactual: &cf, Usage: ledger.Usage{Input: 500, CacheRead: 7_000, CacheWrite5m: 500}}))
	require.NoError(t, ledger.UpdateCounters(d, "sess-42", time.Now(), func(c *ledger.Counters) {
		c.Denials, c.Blocked, c.TokensSaved = 2, 2, 3_000
	}))
	var out, errb bytes.Buffer
	start := time.Now()
	rc := run(context.Background(), nil, &openStdin{strings.NewReader(statusJSON)}, &out, &errb, env(map[string]string{"NO_COLOR": "1"}))
	assert.Equal(t, 0, rc)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, "Opus 4.7 · proj · ⌁ synaxi saved 12.0k tok ($0.001) · cache 88% · 2 re-reads blocked (~3.0k tok) · proxy down\n", out.String())
}

func TestAlwaysALine(t *testing.T) {
	setup(t)
	for name, in := range map[string]io.Reader{
		"garbage":   strings.NewReader("not json"),
		"empty":     strings.NewReader(""),
		"never EOF": &openStdin{strings.NewReader("")},
		"array":     strings.NewReader("[1,2]"),
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			assert.Equal(t, 0, run(context.Background(), nil, in, &out, io.Discard, env(nil)))
			assert.Contains(t, out.String(), "⌁ synaxi")
			assert.Equal(t, 1, strings.Count(out.String(), "\n"))
		})
	}
}

func TestComposesWithPrevious(t *testing.T) {
	d := setup(t)
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	script := filepath.Join(t.TempDir(), "mine.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nread -r l\necho \"mine $(printf %s \"$l\" | cut -c1-14)\"\n"), 0o755))
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("[statusline]\nprevious_command = '"+script+"'\ncolor = \"never\"\n"), 0o600))
	var out bytes.Buffer
	run(context.Background(), nil, &openStdin{strings.NewReader(statusJSON + "\n")}, &out, io.Discard, env(nil))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, `mine {"session_id":`, lines[0])
	assert.Equal(t, "Opus 4.7 · proj · ⌁ synaxi watching · not routed", lines[1])
}

func TestColour(t *testing.T) {
	assert.True(t, colour("auto", env(nil)))
	assert.False(t, colour("auto", env(map[string]string{"NO_COLOR": "1"})))
	assert.False(t, colour("auto", env(map[string]string{"TERM": "dumb"})))
	assert.True(t, colour("always", env(map[string]string{"NO_COLOR": "1"})))
	assert.False(t, colour("never", env(nil)))
}

// A session whose base URL is synaxi's proxy is routed, unless a cloud
// switch is on: then Claude Code calls the cloud's API, never the proxy.
func TestCloudClientIsNotRouted(t *testing.T) {
	d := setup(t)
	require.NoError(t, os.MkdirAll(d.StatePath("proxyd"), 0o700))
	require.NoError(t, os.WriteFile(proxyinfo.PortPath(d), []byte("48123\n"), 0o600))
	for name, tt := range map[string]struct {
		env  map[string]string
		want string
	}{
		"routed":  {map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:48123"}, "proxy down"},
		"Bedrock": {map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:48123", "CLAUDE_CODE_USE_BEDROCK": "1"}, "not routed"},
	} {
		tt.env["NO_COLOR"] = "1"
		var out bytes.Buffer
		run(context.Background(), nil, &openStdin{strings.NewReader(statusJSON + "\n")}, &out, io.Discard, env(tt.env))
		assert.True(t, strings.HasSuffix(strings.TrimSpace(out.String()), tt.want), "%s: %s", name, out.String())
	}
}
