package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// The test binary doubles as synaxi-proxyd when `start` re-executes it.
func TestMain(m *testing.M) {
	if os.Getenv("SYNAXI_PROXYD_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func isolate(t *testing.T) xdg.Dirs {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("SYNAXI_PROXYD_TEST_AS_MAIN", "1")
	return xdg.Resolve()
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestStartStatusStop(t *testing.T) {
	d := isolate(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"usage":{"input_tokens":1,"output_tokens":2}}`)
	}))
	defer up.Close()

	code, out, _ := runCmd(t, "status")
	assert.Equal(t, 3, code)
	assert.Equal(t, "not running\n", out)

	code, out, errOut := runCmd(t, "start", "--upstream", up.URL)
	require.Equal(t, 0, code, errOut)
	addr := strings.TrimSpace(out)
	t.Cleanup(func() { runCmd(t, "stop") })
	info, err := proxyinfo.Read(d)
	require.NoError(t, err)
	assert.Equal(t, addr, info.Addr)
	assert.NotEqual(t, os.Getpid(), info.PID)

	// A second start finds the running instance.
	code, out, errOut = runCmd(t, "start")
	require.Equal(t, 0, code)
	assert.Equal(t, addr, strings.TrimSpace(out))
	assert.Contains(t, errOut, "already running")

	// A foreground serve is refused by the lock.
	code, _, errOut = runCmd(t, "serve", "--upstream", up.URL)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "already running")

	resp, err := http.Post("http://"+addr+"/v1/messages?beta=true", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()

	code, out, _ = runCmd(t, "status", "--json")
	require.Equal(t, 0, code)
	var st struct {
		Running bool
		Health  struct {
			Requests, Messages int64
			Config             string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.True(t, st.Running)
	assert.Equal(t, int64(1), st.Health.Requests)
	started := config.Default()
	started.Proxy.Upstream = up.URL
	assert.Equal(t, started.ProxyFingerprint(), st.Health.Config, "/health names the configuration it started with, --upstream included")

	code, out, _ = runCmd(t, "stop")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "stopped pid")
	_, err = proxyinfo.Read(d)
	assert.Error(t, err, "the record is removed on exit")
	code, _, _ = runCmd(t, "status")
	assert.Equal(t, 3, code)
	code, out, _ = runCmd(t, "stop")
	assert.Equal(t, 0, code)
	assert.Equal(t, "not running\n", out)
}

func TestServeRefusesNonLoopback(t *testing.T) {
	isolate(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		code, _, errOut := runCmd(t, "serve", "--listen", addr)
		assert.Equal(t, 2, code, addr)
		assert.Contains(t, errOut, "beyond loopback the proxy needs a team token")
		assert.Contains(t, errOut, "--token-file")
		code, _, startErr := runCmd(t, "start", "--listen", addr)
		assert.Equal(t, 2, code, addr)
		assert.Equal(t, errOut, startErr, "serve and start refuse alike")
	}
}

// A visibility store that does not answer stops the start, and says which
// setting to fix, without the URL's password.
func TestServeRefusesUnreachableVisibilityStore(t *testing.T) {
	isolate(t)
	code, _, errOut := runCmd(t, "serve", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:9",
		"--visibility-store", "redis://:hunter2hunter2@127.0.0.1:1/0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "visibility store 127.0.0.1:1")
	assert.Contains(t, errOut, "fix proxy.visibility_store (--visibility-store)")
	assert.NotContains(t, errOut, "hunter2")
}

func TestServeForegroundAndSignal(t *testing.T) {
	isolate(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:9", "--idle-exit", "0"}, io.Discard, &errb)
	}()
	d := xdg.Resolve()
	require.Eventually(t, func() bool { _, err := proxyinfo.Read(d); return err == nil }, 5*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on cancel")
	}
}

func TestFlagsOverrideConfig(t *testing.T) {
	d := isolate(t)
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("[proxy]\nupstream = \"http://file.example\"\nscope = \"worker\"\n"), 0o600))
	t.Setenv("SYNAXI_PROXY_UPSTREAM", "http://env.example")
	o, err := parseFlags("serve", nil, io.Discard)
	require.NoError(t, err)
	c, err := loadConfig(o, d)
	require.NoError(t, err)
	assert.Equal(t, "http://env.example", c.Proxy.Upstream, "env beats file")
	assert.Equal(t, config.ScopeWorker, c.Proxy.Scope, "file beats default")
	for flags, want := range map[string]string{"--disable-projection": config.ScopeOff, "--project-all": config.ScopeAll,
		"--project-all=false": config.ScopeWorker, "--scope=off": config.ScopeOff} {
		o, err = parseFlags("serve", []string{flags}, io.Discard)
		require.NoError(t, err)
		c, err = loadConfig(o, d)
		require.NoError(t, err)
		assert.Equal(t, want, c.Proxy.Scope, flags)
	}
	o, err = parseFlags("serve", []string{"--scope", "main"}, io.Discard)
	require.NoError(t, err)
	_, err = loadConfig(o, d)
	require.ErrorContains(t, err, "all, worker or off")
	o, err = parseFlags("serve", []string{"--upstream", "http://flag.example", "--count-tokens=false"}, io.Discard)
	require.NoError(t, err)
	c, err = loadConfig(o, d)
	require.NoError(t, err)
	assert.Equal(t, "http://flag.example", c.Proxy.Upstream, "flag beats env")
	assert.False(t, c.Proxy.CountTokens)
	o, err = parseFlags("serve", []string{"--upstream", "ftp://x"}, io.Discard)
	require.NoError(t, err)
	_, err = loadConfig(o, d)
	assert.ErrorContains(t, err, "proxy.upstream")
}

func TestVersionAndUsage(t *testing.T) {
	code, out, _ := runCmd(t, "-version")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "synaxi-proxyd "))
	code, _, errOut := runCmd(t, "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "unknown command")
	code, out, _ = runCmd(t, "help")
	assert.Equal(t, 0, code)
	for _, cmd := range []string{"serve", "start", "stop", "status", "replay", "-version"} {
		assert.Contains(t, out, "synaxi-proxyd "+cmd, "the usage names every command")
	}
}

// SIGTERM drains: the instance stops accepting and gives up its lock and
// port at once, a replacement starts on the same address while the old
// one's stream is still in flight, the stream completes byte for byte, and
// the old process exits 0.
func TestSIGTERMDrainsWhileReplacementServes(t *testing.T) {
	d := isolate(t)
	rig := newDrainRig(t, d)
	up, old, oldLog, exited, info, resp := rig.up, rig.old, rig.log, rig.exited, rig.info, rig.stream

	code, out, errOut := runCmd(t, "stop")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "stopped pid")
	select {
	case err := <-exited:
		t.Fatalf("the old instance exited with a stream in flight: %v\n%s", err, oldLog.String())
	default:
	}

	code, out, errOut = runCmd(t, "start", "--upstream", up.URL)
	require.Equal(t, 0, code, errOut)
	t.Cleanup(func() { runCmd(t, "stop") })
	assert.Equal(t, info.Addr, strings.TrimSpace(out), "the replacement listens where the old one did")
	next, err := proxyinfo.Read(d)
	require.NoError(t, err)
	assert.NotEqual(t, old.Process.Pid, next.PID)
	r2, err := http.Post("http://"+info.Addr+"/v1/messages", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	assert.Equal(t, tail, string(b2), "the replacement serves")

	rig.finish()
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, tail, string(rest), "the old stream completes")
	select {
	case err := <-exited:
		assert.NoError(t, err, "exit 0 after the drain\n%s", oldLog.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the old instance did not exit after its stream ended")
	}
	assert.Contains(t, oldLog.String(), "stopped accepting")
}
