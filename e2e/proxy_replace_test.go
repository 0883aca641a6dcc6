package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

// buildVersion builds synaxi-proxyd and synaxi-session of version into one
// directory, as a plugin version's binaries sit together in the launcher's
// data directory.
func buildVersion(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	for _, pkg := range []string{"./proxyd/cmd/synaxi-proxyd", "./hooks/cmd/synaxi-session"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", dir, pkg)
		cmd.Dir = claudecli.RepoRoot()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build %s: %s", pkg, out)
	}
	return dir
}

// TestSessionStartReplacesOlderProxy: a proxy of plugin version v0.1.0 is
// serving a stream when a session of v0.2.0 starts. The SessionStart hook
// replaces the proxy with its own version's, within its budget, without
// cancelling the session start; the stream in flight completes byte for
// byte on the old process, which then exits; new requests reach the new
// proxy on the same address; the stable copies an install of v0.1.0 made
// are v0.2.0's. A session of the older version starting afterwards leaves
// the newer proxy alone.
func TestSessionStartReplacesOlderProxy(t *testing.T) {
	oldBin, newBin := buildVersion(t, "v0.1.0"), buildVersion(t, "v0.2.0")
	home := t.TempDir()
	env := append(os.Environ(),
		"HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	d := xdg.Resolve()

	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	const head, tail = "event: message_start\ndata: {}\n\n", "event: message_stop\ndata: {}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.RawQuery == "slow" {
			_, _ = io.WriteString(w, head)
			w.(http.Flusher).Flush()
			<-release
		}
		_, _ = io.WriteString(w, tail)
	}))
	defer up.Close()
	// Both proxies read the upstream from the config, as an installed one does.
	require.NoError(t, os.MkdirAll(filepath.Join(home, "config", "synaxi"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "config", "synaxi", "config.toml"),
		[]byte(fmt.Sprintf("[proxy]\nupstream = %q\n", up.URL)), 0o600))

	run := func(bin string, stdin string, args ...string) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		require.NoError(t, cmd.Run(), "%s %v: %s", bin, args, out.String())
		return out.String(), time.Since(t0)
	}
	t.Cleanup(func() { run(filepath.Join(newBin, "synaxi-proxyd"), "", "stop") })

	run(filepath.Join(oldBin, "synaxi-proxyd"), "", "start")
	old, err := proxyinfo.Live(d)
	require.NoError(t, err)
	require.Equal(t, "v0.1.0", old.Version)
	oldProc, err := os.FindProcess(old.PID)
	require.NoError(t, err)

	resp, err := http.Post("http://"+old.Addr+"/v1/messages?slow", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, len(head))
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err, "the stream is in flight")

	// The stable copies an install of v0.1.0 made, stamped.
	stable := filepath.Join(home, "data", "synaxi", "bin")
	require.NoError(t, os.MkdirAll(stable, 0o700))
	oldProxyd, err := os.ReadFile(filepath.Join(oldBin, "synaxi-proxyd"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stable, "synaxi-proxyd"), oldProxyd, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stable, "VERSION"), []byte("v0.1.0\n"), 0o644))

	hookIn := `{"session_id":"s-new","hook_event_name":"SessionStart","source":"startup","cwd":"` + home + `","transcript_path":"` + home + `/t.jsonl"}`
	out, took := run(filepath.Join(newBin, "synaxi-session"), hookIn, "start")
	t.Logf("SessionStart of v0.2.0 took %s; printed %q", took, out)
	assert.NotContains(t, out, "not running", "the session is not told the proxy is down")
	var cur *proxyinfo.Info
	require.Eventually(t, func() bool {
		cur, err = proxyinfo.Live(d)
		return err == nil && cur.PID != old.PID
	}, 20*time.Second, 20*time.Millisecond, "the replacement publishes its record")
	assert.Equal(t, "v0.2.0", cur.Version)
	assert.Equal(t, old.Addr, cur.Addr, "same address: routed sessions keep working")
	assert.True(t, proxyinfo.PIDAlive(old.PID), "the old proxy still drains its stream")
	newProxyd, err := os.ReadFile(filepath.Join(newBin, "synaxi-proxyd"))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(stable, "synaxi-proxyd"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(newProxyd, got), "the stable copy is v0.2.0's now")
	stamp, err := os.ReadFile(filepath.Join(stable, "VERSION"))
	require.NoError(t, err)
	assert.Equal(t, "v0.2.0\n", string(stamp))

	r2, err := http.Post("http://"+cur.Addr+"/v1/messages", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	assert.Equal(t, tail, string(b2), "the new proxy serves")

	once.Do(func() { close(release) })
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, tail, string(rest), "the stream in flight completes")
	require.Eventually(t, func() bool { return !proxyinfo.PIDAlive(old.PID) }, 30*time.Second, 50*time.Millisecond, "the old proxy exits after draining")
	_ = oldProc

	// An older session starting now leaves the newer proxy alone.
	run(filepath.Join(oldBin, "synaxi-session"), strings.Replace(hookIn, "s-new", "s-old", 1), "start")
	time.Sleep(300 * time.Millisecond)
	again, err := proxyinfo.Live(d)
	require.NoError(t, err)
	assert.Equal(t, cur.PID, again.PID)
	assert.Equal(t, "v0.2.0", again.Version)
}
