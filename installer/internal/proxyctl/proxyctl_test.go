package proxyctl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// healthAt answers /health as a proxy of version does.
func healthAt(t *testing.T, version string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"version":%q,"upstream":"http://upstream.invalid"}`, version)
	}))
	t.Cleanup(s.Close)
	return s
}

// fakeProxyd is a synaxi-proxyd of version v0.2.0 whose `start --takeover`
// writes the record of a replacement (this test process, answering at
// $NEW_ADDR) and logs its arguments.
const fakeProxyd = `#!/bin/sh
echo "$*" >> "$LOG"
case "$1" in
version) echo "synaxi-proxyd v0.2.0" ;;
start) printf '{"pid":%s,"addr":"%s","version":"v0.2.0"}' "$NEW_PID" "$NEW_ADDR" > "$RECORD" ;;
esac
`

func TestStartReplacesOnlyAnOlderProxy(t *testing.T) {
	for _, c := range []struct {
		running string
		replace bool
	}{{"v0.1.0", true}, {"v0.2.0", false}, {"v0.3.0", false}, {"dev", false}} {
		t.Run(c.running, func(t *testing.T) {
			dir := t.TempDir()
			d := xdg.Dirs{State: filepath.Join(dir, "state")}
			bin := filepath.Join(dir, "synaxi-proxyd")
			require.NoError(t, os.WriteFile(bin, []byte(fakeProxyd), 0o755))
			old, repl := healthAt(t, c.running), healthAt(t, "v0.2.0")
			sleeper := exec.Command("sleep", "60")
			require.NoError(t, sleeper.Start())
			t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
			oldAddr := strings.TrimPrefix(old.URL, "http://")
			require.NoError(t, statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: sleeper.Process.Pid, Addr: oldAddr, Version: c.running}))
			log := filepath.Join(dir, "log")
			env := append(os.Environ(), "LOG="+log, "RECORD="+proxyinfo.Path(d),
				fmt.Sprintf("NEW_PID=%d", os.Getpid()), "NEW_ADDR="+strings.TrimPrefix(repl.URL, "http://"))

			st, err := Start(context.Background(), bin, d, env)
			require.NoError(t, err)
			require.True(t, st.Running)
			calls, _ := os.ReadFile(log)
			if !c.replace {
				assert.Nil(t, st.Replaced)
				assert.Equal(t, oldAddr, st.Info.Addr, "left alone")
				assert.NotContains(t, string(calls), "start")
				return
			}
			assert.Equal(t, "version\nstart --takeover\n", string(calls))
			require.NotNil(t, st.Replaced)
			assert.Equal(t, sleeper.Process.Pid, st.Replaced.PID)
			assert.Equal(t, os.Getpid(), st.Info.PID)
			assert.Equal(t, "v0.2.0", st.Health.Version)
		})
	}
}

func TestUpstreamCallsFailing(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	later := t0.Add(time.Minute)
	for name, tt := range map[string]struct {
		c    UpstreamCalls
		want bool
	}{
		"no call failed":               {UpstreamCalls{LastAnswer: &t0}, false},
		"failed, never answered":       {UpstreamCalls{RecentFailures: 5, LastFailure: &t0}, true},
		"failed after the last answer": {UpstreamCalls{RecentFailures: 1, LastFailure: &later, LastAnswer: &t0}, true},
		"answered since the failure":   {UpstreamCalls{RecentFailures: 1, LastFailure: &t0, LastAnswer: &later}, false},
		"the failure left the window":  {UpstreamCalls{RecentFailures: 0, LastFailure: &later}, false},
	} {
		assert.Equal(t, tt.want, tt.c.Failing(), name)
	}
}

// A proxy SessionStart started with -port (the port it recorded) runs the
// configuration as it is; a changed key or a pinned port it does not
// listen on replaces it.
func TestReplaceReason(t *testing.T) {
	d := xdg.Dirs{Config: t.TempDir()}
	require.NoError(t, os.MkdirAll(filepath.Dir(d.ConfigFile()), 0o700))
	cfg := config.Default()
	fp := cfg.ProxyFingerprint()
	st := &State{Health: &Health{Version: "v1", Config: fp}, Info: &proxyinfo.Info{Port: 5555}}
	env := []string{}
	for src, want := range map[string]string{
		"":                                    "",
		"[proxy]\nport = 5555\n":              "",
		"[proxy]\nport = 6666\n":              "it listens on port 5555, proxy.port is 6666",
		"[proxy]\nupstream = \"http://gw\"\n": "it runs configuration " + fp + ", the configuration is now ",
	} {
		require.NoError(t, os.WriteFile(d.ConfigFile(), []byte(src), 0o600))
		got := replaceReason(context.Background(), "/nonexistent/synaxi-proxyd", d, env, st)
		if want == "" {
			assert.Empty(t, got, src)
		} else {
			assert.Contains(t, got, want, src)
		}
	}
}
