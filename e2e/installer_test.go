package e2e_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// TestInstallerRealClient drives `synaxi install` and `synaxi uninstall`
// against the pinned Claude Code CLI in a temporary HOME where the user
// already has a status line and hand-formatted settings: install must leave
// the plugin enabled (as the CLI itself reports it) and the status line
// composed with the user's; uninstall must put every file back byte for
// byte.
func TestInstallerRealClient(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	e := claudecli.NewEnv(t, "")
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	t.Cleanup(func() {
		// Whatever happens, leave no proxy running.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = e.RunProgram(ctx, filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-proxyd"), "stop")
	})

	settingsPath := filepath.Join(e.ClaudeDir(), "settings.json")
	original := "{\n    \"statusLine\": {\"type\": \"command\", \"command\": \"echo mine\", \"padding\": 1},\n  \"model\":   \"opus\"\n}\n"
	require.NoError(t, os.MkdirAll(e.ClaudeDir(), 0o700))
	require.NoError(t, os.WriteFile(settingsPath, []byte(original), 0o644))
	configPath := filepath.Join(e.ConfigHome(), "synaxi", "config.toml")

	run := func(prog string, args ...string) *claudecli.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := e.RunProgram(ctx, prog, args...)
		require.NoError(t, err)
		return res
	}

	res := run(synaxi, "install", "--claude", e.Bin)
	require.Equal(t, 0, res.ExitCode, "synaxi install\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)

	// The client itself says the plugin is installed and enabled.
	res = run(e.Bin, "plugin", "list", "--json")
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	var plugins []struct {
		ID      string `json:"id"`
		Enabled bool   `json:"enabled"`
	}
	require.NoError(t, json.NewDecoder(strings.NewReader(res.Stdout)).Decode(&plugins), res.Stdout)
	found := false
	for _, p := range plugins {
		if p.ID == "synaxi@synaxi" {
			found = true
			assert.True(t, p.Enabled, "synaxi@synaxi is enabled")
		}
	}
	assert.True(t, found, "claude plugin list shows synaxi@synaxi:\n%s", res.Stdout)

	// The status line is composed: ours at a stable path, theirs recorded.
	var settings struct {
		StatusLine struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Padding int    `json:"padding"`
		} `json:"statusLine"`
		Model string `json:"model"`
	}
	readJSONFile(t, settingsPath, &settings)
	stable := filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-statusline")
	assert.Equal(t, stable, settings.StatusLine.Command)
	assert.Equal(t, "command", settings.StatusLine.Type)
	assert.Equal(t, 1, settings.StatusLine.Padding, "the user's other statusLine fields stay")
	assert.Equal(t, "opus", settings.Model)
	cfg, err := os.ReadFile(configPath)
	require.NoError(t, err)
	assert.Contains(t, string(cfg), `previous_command = "echo mine"`)
	assert.FileExists(t, stable)

	// The composed status line prints the user's line first.
	sl := exec.Command(stable)
	sl.Env = e.Environ()
	sl.Stdin = strings.NewReader(`{"session_id":"s1","cwd":"` + e.Work + `","model":{"id":"claude-opus-4-8","display_name":"Opus"},"workspace":{"current_dir":"` + e.Work + `"}}`)
	out, err := sl.Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "mine\n"), "the user's status line comes first: %q", out)

	res = run(synaxi, "status")
	assert.Contains(t, res.Stdout, "synaxi@synaxi installed and enabled", res.Stdout)
	assert.Regexp(t, `status line\s+composed`, res.Stdout)
	assert.Regexp(t, `proxy\s+running at http://127.0.0.1:`, res.Stdout)

	// A second install changes nothing.
	afterFirst, err := os.ReadFile(settingsPath)
	require.NoError(t, err)
	res = run(synaxi, "install", "--claude", e.Bin)
	require.Equal(t, 0, res.ExitCode, "second install\n%s\n%s", res.Stdout, res.Stderr)
	again, err := os.ReadFile(settingsPath)
	require.NoError(t, err)
	assert.Equal(t, string(afterFirst), string(again))

	res = run(synaxi, "uninstall", "--claude", e.Bin)
	require.Equal(t, 0, res.ExitCode, "synaxi uninstall\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)

	got, err := os.ReadFile(settingsPath)
	require.NoError(t, err)
	assert.Equal(t, original, string(got), "settings.json is restored byte for byte")
	_, err = os.Stat(configPath)
	assert.ErrorIs(t, err, fs.ErrNotExist, "config.toml did not exist before install")
	_, err = os.Stat(filepath.Join(e.DataHome(), "synaxi", "bin"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the stable binaries are gone")
	for _, p := range []string{"known_marketplaces.json", "installed_plugins.json", "cache"} {
		_, err = os.Stat(filepath.Join(e.ClaudeDir(), "plugins", p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "plugins/%s did not exist before install", p)
	}
	res = run(e.Bin, "plugin", "list", "--json")
	assert.NotContains(t, res.Stdout, "synaxi@synaxi")
	res = run(synaxi, "status")
	assert.Regexp(t, `proxy\s+down`, res.Stdout)
}

// TestWrapRealClient runs `synaxi wrap claude -p …` with the pinned CLI: the
// launch reaches the fake upstream only through the proxy (the client's own
// environment names no upstream), runs as the synaxi-chat agent, and when it
// ends the proxy the wrap started is stopped and no wrap marker is left.
func TestWrapRealClient(t *testing.T) {
	upstream := fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		return fakeapi.Reply{Text: "wrapped hello"}
	})})
	t.Cleanup(upstream.Close)
	e := claudecli.NewEnv(t, "")
	e.Vars = append(e.Vars, "SYNAXI_PROXY_UPSTREAM="+upstream.URL())
	e.InstallPlugin(t)
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := e.RunProgram(ctx, synaxi, "wrap", "--claude", e.Bin, "claude",
		"-p", "--permission-mode", "bypassPermissions", "--output-format", "json", "Say hello.")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.Equal(t, "wrapped hello", out.Result)

	main := 0
	for _, r := range upstream.MessagesRequests() {
		assert.Empty(t, r.Invalid)
		if !r.Side && strings.Contains(systemText(t, r.Body), "You are the orchestrator of a coding session") {
			main++
		}
	}
	assert.Positive(t, main, "the launch ran as synaxi:synaxi-chat, through the proxy")

	var info struct {
		PID int `json:"pid"`
	}
	if data, err := os.ReadFile(filepath.Join(e.StateDir(), "proxyd", "proxyd.json")); err == nil {
		require.NoError(t, json.Unmarshal(data, &info))
		assert.Error(t, syscall.Kill(info.PID, 0), "the proxy the wrap started is stopped")
	}
	markers, _ := filepath.Glob(filepath.Join(e.StateDir(), "wrap", "*.json"))
	assert.Empty(t, markers)
}
