package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// gateway stands in for a company gateway: a fake Messages API behind a
// path prefix (/anthropic), the way gateways mount it.
type gateway struct {
	api *fakeapi.Server
	srv *httptest.Server
}

func newGateway(t *testing.T, reply string) *gateway {
	api := fakeapi.New(fakeapi.Options{RequireAuth: true, Agent: fakeapi.AgentFunc(func(*fakeapi.View) fakeapi.Reply {
		return fakeapi.Reply{Text: reply}
	})})
	t.Cleanup(api.Close)
	target, err := url.Parse(api.URL())
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.StripPrefix("/anthropic", rp))
	t.Cleanup(srv.Close)
	return &gateway{api: api, srv: srv}
}

func (g *gateway) URL() string { return g.srv.URL + "/anthropic" }

// TestRouteKeepsGatewayRealClient: a user whose Claude Code talks to a
// company gateway (ANTHROPIC_BASE_URL with ANTHROPIC_AUTH_TOKEN and a custom
// header, once in settings.json, once in the shell) runs `synaxi install
// --route`; a real session then succeeds, and every request it makes
// reaches the gateway through the proxy with the user's token and header;
// uninstall gives the user's settings back byte for byte. On the shell
// home, doctor is then run against the real proxy with a failing upstream
// and with a changed configuration, and `synaxi proxy restart` applies it.
func TestRouteKeepsGatewayRealClient(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	for _, where := range []string{"settings", "shell"} {
		t.Run(where, func(t *testing.T) { routeThroughGateway(t, where) })
	}
}

func routeThroughGateway(t *testing.T, where string) {
	gw := newGateway(t, "hello from the gateway")
	e := claudecli.NewEnv(t, "")
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	proxyd := filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-proxyd")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = e.RunProgram(ctx, proxyd, "stop")
	})
	run := func(prog string, args ...string) *claudecli.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		res, err := e.RunProgram(ctx, prog, args...)
		require.NoError(t, err)
		return res
	}

	settingsPath := filepath.Join(e.ClaudeDir(), "settings.json")
	require.NoError(t, os.MkdirAll(e.ClaudeDir(), 0o700))
	vars := map[string]string{
		"ANTHROPIC_BASE_URL":       gw.URL(),
		"ANTHROPIC_AUTH_TOKEN":     "gw-secret-token",
		"ANTHROPIC_CUSTOM_HEADERS": "X-Gateway-Team: team-blue",
	}
	original := "{\n  \"model\": \"sonnet\"\n}\n"
	if where == "settings" {
		b, err := json.MarshalIndent(map[string]any{"model": "sonnet", "env": vars}, "", "  ")
		require.NoError(t, err)
		original = string(b) + "\n"
	} else {
		for k, v := range vars {
			e.Vars = append(e.Vars, k+"="+v)
		}
	}
	require.NoError(t, os.WriteFile(settingsPath, []byte(original), 0o644))
	// The conversation log on, so the check below that synaxi stores no
	// credential also covers it.
	e.Vars = append(e.Vars, "SYNAXI_PROXY_LOG_CONVERSATIONS=true")

	res := run(synaxi, "install", "--route", "--claude", e.Bin)
	require.Equal(t, 0, res.ExitCode, "synaxi install --route\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	from := map[string]string{"settings": "settings env", "shell": "shell environment"}[where]
	assert.Contains(t, res.Stdout, "routing: keeps your endpoint: the proxy forwards to "+gw.URL()+" (ANTHROPIC_BASE_URL, "+from+")")
	assert.Contains(t, res.Stdout, "ANTHROPIC_CUSTOM_HEADERS X-Gateway-Team ("+from+")")
	assert.NotContains(t, res.Stdout+res.Stderr, "gw-secret-token", "credentials are named, never printed")
	t.Logf("install --route (%s):\n%s", where, res.Stdout)
	cfg, err := os.ReadFile(filepath.Join(e.ConfigHome(), "synaxi", "config.toml"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), fmt.Sprintf("upstream = %q", gw.URL()))
	assert.NotContains(t, string(cfg), "gw-secret-token")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err = e.Run(ctx, "-p", "--permission-mode", "bypassPermissions", "--output-format", "json", "Say hello.")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.Equal(t, "hello from the gateway", out.Result)

	reqs := gw.api.Requests()
	messages, probes := 0, 0
	for _, r := range reqs {
		switch r.Kind {
		case "messages":
			messages++
		case "count_tokens":
			probes++
		}
		assert.Equal(t, "Bearer gw-secret-token", r.Header.Get("Authorization"), "%s %s carries the user's token", r.Kind, r.Path)
		assert.Equal(t, "team-blue", r.Header.Get("X-Gateway-Team"), "%s %s carries the user's header", r.Kind, r.Path)
		assert.Empty(t, r.Header.Get("X-Synaxi-Scope"))
		assert.Empty(t, r.Invalid)
	}
	require.Positive(t, messages)
	h := installedHealth(t, e)
	assert.Equal(t, gw.URL(), h.Upstream, "the running proxy forwards to the gateway")
	assert.Equal(t, int64(len(reqs)-probes), h.Requests, "every request the gateway got came through the proxy")
	t.Logf("%s: the gateway got %d Messages requests and %d count_tokens probes, all with the user's token and header; the proxy forwarded %d", where, messages, probes, h.Requests)
	assert.FileExists(t, filepath.Join(e.StateDir(), "proxyd", "conversations.jsonl"))
	assert.FileExists(t, filepath.Join(e.StateDir(), "ledger", "ledger.jsonl"))
	// synaxi stores no credential. The one exception is the install
	// journal's backup of settings.json, the user's own file as it was
	// (uninstall puts it back): private, like every state file.
	backups := filepath.Join(e.DataHome(), "synaxi", "install", "backups")
	for _, dir := range []string{e.StateDir(), filepath.Join(e.DataHome(), "synaxi"), filepath.Join(e.ConfigHome(), "synaxi"), filepath.Join(e.CacheHome(), "synaxi")} {
		for _, p := range filesHolding(t, dir, "gw-secret-token") {
			if where == "settings" && filepath.Dir(p) == backups && strings.HasSuffix(p, "-settings.json") {
				fi, err := os.Stat(p)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
				continue
			}
			t.Errorf("%s holds the user's token", p)
		}
	}

	if where == "shell" {
		doctorOnRunningProxy(t, e, gw, synaxi, run)
	}

	res = run(synaxi, "uninstall", "--claude", e.Bin)
	require.Equal(t, 0, res.ExitCode, "synaxi uninstall\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	got, err := os.ReadFile(settingsPath)
	require.NoError(t, err)
	assert.Equal(t, original, string(got), "settings.json is restored byte for byte, the user's ANTHROPIC_BASE_URL with it")
}

// doctorOnRunningProxy: the gateway goes away, requests fail, and doctor
// fails the proxy check with the upstream the running proxy uses; then the
// configuration names another gateway, doctor says the proxy runs an older
// configuration, and `synaxi proxy restart` applies it.
func doctorOnRunningProxy(t *testing.T, e *claudecli.Env, gw *gateway, synaxi string, run func(string, ...string) *claudecli.Result) {
	gw.srv.Close()
	addr := proxyAddr(t, e)
	for range 5 {
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	}
	res := run(synaxi, "doctor", "--claude", e.Bin)
	t.Logf("doctor with the gateway down:\n%s", res.Stdout)
	assert.Equal(t, 1, res.ExitCode)
	assert.Regexp(t, `\[FAIL\] proxy: running at http://`+addr+` .*; its upstream `+gw.URL()+` is failing: 5 call\(s\) in the last 5 minutes got no answer, none since \(last: `, res.Stdout)
	assert.Contains(t, res.Stdout, "hint: make "+gw.URL()+" reachable from the proxy's host")

	gw2 := newGateway(t, "hello from the new gateway")
	cfgPath := filepath.Join(e.ConfigHome(), "synaxi", "config.toml")
	cfg, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgPath, []byte(strings.ReplaceAll(string(cfg), gw.URL(), gw2.URL())), 0o600))
	res = run(synaxi, "doctor", "--claude", e.Bin)
	t.Logf("doctor after the configuration changed:\n%s", res.Stdout)
	assert.Regexp(t, `\[FAIL\] proxy config: the configuration changed since the proxy started: it runs [0-9a-f]{12}, the configuration is now [0-9a-f]{12} \(upstream: running `+gw.URL()+`, configured `+gw2.URL()+`\)`, res.Stdout)
	assert.Contains(t, res.Stdout, "hint: synaxi proxy restart")

	res = run(synaxi, "proxy", "restart")
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	t.Logf("synaxi proxy restart:\n%s", res.Stdout)
	assert.Regexp(t, `^proxy: replaced pid \d+ .* upstream `+gw2.URL(), res.Stdout)
	res = run(synaxi, "doctor", "--claude", e.Bin)
	assert.Regexp(t, `\[ok  \] proxy: running at http://`+addr+` `, res.Stdout, "the replacement serves on the same address")
	assert.Contains(t, res.Stdout, "[ok  ] proxy config: the proxy runs the configuration as it is now")
	assert.Equal(t, gw2.URL(), installedHealth(t, e).Upstream)
}

func proxyAddr(t *testing.T, e *claudecli.Env) string {
	t.Helper()
	var info struct {
		Addr string `json:"addr"`
	}
	readJSONFile(t, filepath.Join(e.StateDir(), "proxyd", "proxyd.json"), &info)
	return info.Addr
}

type health struct { // the part of /health these tests read
	Upstream string `json:"upstream"`
	Requests int64  `json:"requests"`
}

func installedHealth(t *testing.T, e *claudecli.Env) health {
	t.Helper()
	resp, err := http.Get("http://" + proxyAddr(t, e) + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return h
}

// TestRouteRefusesCloudClientRealClient: a Bedrock user is not routed and
// is told why; nothing points Claude Code at the proxy.
func TestRouteRefusesCloudClientRealClient(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	e := claudecli.NewEnv(t, "")
	e.Vars = append(e.Vars, "CLAUDE_CODE_USE_BEDROCK=1")
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = e.RunProgram(ctx, filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-proxyd"), "stop")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := e.RunProgram(ctx, synaxi, "install", "--route", "--claude", e.Bin)
	require.NoError(t, err)
	t.Logf("install --route with CLAUDE_CODE_USE_BEDROCK=1:\n%s", res.Stdout)
	assert.Equal(t, 1, res.ExitCode, "finished with a warning")
	assert.Contains(t, res.Stdout, "warning: not routing: CLAUDE_CODE_USE_BEDROCK is on (shell environment), so Claude Code calls Amazon Bedrock's own API and never a base URL a proxy could listen on")
	assert.Contains(t, res.Stdout, "hint: to route, reach Claude through a gateway that speaks the Anthropic Messages API")
	assert.NotContains(t, res.Stdout, "goes through http://")
	data, err := os.ReadFile(filepath.Join(e.ClaudeDir(), "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "ANTHROPIC_BASE_URL")
	res, err = e.RunProgram(ctx, synaxi, "status")
	require.NoError(t, err)
	assert.Regexp(t, `routing\s+not routed`, res.Stdout)

	// The status line of such a session never says routed, even with the
	// proxy's address in its environment.
	sl := filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-statusline")
	e.Vars = append(e.Vars, "ANTHROPIC_BASE_URL=http://"+proxyAddr(t, e), "NO_COLOR=1")
	cmd := exec.Command(sl)
	cmd.Env = e.Environ()
	cmd.Stdin = strings.NewReader(`{"session_id":"s1","model":{"display_name":"Opus"},"workspace":{"current_dir":"` + e.Work + `"}}`)
	line, err := cmd.Output()
	require.NoError(t, err)
	t.Logf("status line: %s", line)
	assert.Contains(t, string(line), "not routed")
}

// TestWrapScopeRealClient: `synaxi wrap --scope S` decides, for that launch
// alone, whether the real client's conversation is projected: the client
// sends X-Synaxi-Scope through ANTHROPIC_CUSTOM_HEADERS, the proxy's gate
// reads it (gated requests leave ledger rows), and the upstream never sees
// it. SYNAXI_SCOPE does the same without the flag.
func TestWrapScopeRealClient(t *testing.T) {
	upstream := fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(*fakeapi.View) fakeapi.Reply {
		return fakeapi.Reply{Text: "scoped hello"}
	})})
	t.Cleanup(upstream.Close)
	e := claudecli.NewEnv(t, "")
	e.Vars = append(e.Vars, "SYNAXI_PROXY_UPSTREAM="+upstream.URL(), "SYNAXI_PROXY_SCOPE=all")
	e.InstallPlugin(t)
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	gated := func(args ...string) int {
		t.Helper()
		before := len(readLedger(t, e))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := e.RunProgram(ctx, synaxi, append(args, "--claude", e.Bin, "claude", "-p", "--permission-mode", "bypassPermissions", "--agent", "general-purpose", "Say hello.")...)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
		return len(readLedger(t, e)) - before
	}
	off := gated("wrap", "--scope", "off")
	all := gated("wrap", "--scope", "all")
	e.Vars = append(e.Vars, "SYNAXI_SCOPE=off")
	envOff := gated("wrap")
	t.Logf("ledger rows of gated requests: --scope off %d, --scope all %d, SYNAXI_SCOPE=off %d", off, all, envOff)
	assert.Zero(t, off, "--scope off: nothing of the launch is gated")
	assert.Positive(t, all, "--scope all: the conversation is gated")
	assert.Zero(t, envOff, "SYNAXI_SCOPE=off")
	for _, r := range upstream.Requests() {
		assert.Empty(t, r.Header.Values("X-Synaxi-Scope"), "%s %s", r.Kind, r.Path)
	}
}

// filesHolding lists the files under dir whose bytes contain s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			out = append(out, p)
		}
		return nil
	})
	return out
}
