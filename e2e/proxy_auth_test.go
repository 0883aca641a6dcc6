package e2e_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
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
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/statefile"
)

// TestProxyTeamTokenRealClient: synaxi-proxyd (the built binary) refuses an
// address beyond loopback without a team token; with one, the real Claude
// Code client without the token gets 401 and nothing reaches the upstream,
// and with the token in ANTHROPIC_CUSTOM_HEADERS it works, the upstream
// never sees the token, and no log or state file holds it; `synaxi doctor
// --proxy` checks it from the outside.
func TestProxyTeamTokenRealClient(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.DemoAgent()})
	t.Cleanup(fake.Close)
	e := claudecli.NewEnv(t, "")
	bin := buildProxyd(t)

	refused := exec.Command(bin, "serve", "--listen", "0.0.0.0:0", "--upstream", fake.URL())
	refused.Env = e.Environ()
	out, err := refused.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "beyond loopback the proxy needs a team token")
	assert.Contains(t, string(out), "ANTHROPIC_CUSTOM_HEADERS")

	const token = "e2e-team-token-5f1c9a7b3d2e4f60"
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--upstream", fake.URL(), "--token-file", tokenFile, "--log-level", "debug")
	cmd.Env = e.Environ()
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	var url string
	require.Eventually(t, func() bool {
		var info struct {
			PID  int
			Addr string
		}
		if statefile.ReadJSON(filepath.Join(e.StateDir(), "proxyd", "proxyd.json"), &info) != nil || info.PID != cmd.Process.Pid {
			return false
		}
		url = "http://" + info.Addr
		resp, err := http.Get(url + "/livez")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 15*time.Second, 20*time.Millisecond)
	e.BaseURL = url

	// Without the token the client is answered 401 and retries; it is
	// stopped after a while, whichever way it ends.
	noTok, cancelNoTok := context.WithTimeout(context.Background(), 40*time.Second)
	res, err := e.Run(noTok, "-p", "Say hello.", "--max-turns", "1")
	cancelNoTok()
	if err == nil {
		assert.NotEqual(t, 0, res.ExitCode, "without the token the client fails\nstdout:\n%s", res.Stdout)
	}
	assert.Contains(t, logs.String(), "unauthorized request", "the client's requests were refused")
	assert.Empty(t, fake.Requests(), "no request without the token reached the upstream")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	file := filepath.Join(e.Work, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("first line of the notes\n"), 0o644))
	e.Vars = append(e.Vars, "ANTHROPIC_CUSTOM_HEADERS=x-synaxi-token: "+token)
	res, err = e.Run(ctx, "-p", "Read "+file+" and report its first line.", "--permission-mode", "bypassPermissions")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stdout, "first line of the notes")
	got := fake.Requests()
	require.NotEmpty(t, got)
	for _, r := range got {
		assert.Empty(t, r.Header.Values("X-Synaxi-Token"), "%s %s carried the team token upstream", r.Method, r.Path)
		assert.Equal(t, "test", r.Header.Get("X-Api-Key"), "the client's key is forwarded")
	}

	// synaxi doctor --proxy checks it from the outside: with the token every
	// check passes; without one the token check fails and says how to fix it.
	require.NoError(t, claudecli.BuildPlugin())
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	res, err = e.RunProgram(ctx, synaxi, "doctor", "--proxy", url, "--token-file", tokenFile)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode, "%s%s", res.Stdout, res.Stderr)
	for _, want := range []string{"[ok  ] proxy answers", "[ok  ] team token: required, and the token from " + tokenFile + " is accepted", "[ok  ] upstream reachable", "[ok  ] metrics"} {
		assert.Contains(t, res.Stdout, want)
	}
	e.Vars = nil
	res, err = e.RunProgram(ctx, synaxi, "doctor", "--proxy", url)
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode, res.Stdout)
	assert.Contains(t, res.Stdout, "[FAIL] team token: the proxy asks for a team token")
	assert.NotContains(t, res.Stdout, token)

	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()

	secrets := []string{token, "x-synaxi-token: "}
	assert.Contains(t, logs.String(), "unauthorized request")
	for _, s := range secrets {
		assert.NotContains(t, logs.String(), s, "the proxy's log")
	}
	require.NoError(t, filepath.WalkDir(e.StateDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, s := range secrets {
			assert.NotContains(t, strings.ToLower(string(b)), strings.ToLower(s), path)
		}
		return nil
	}))
}

// lockedBuffer is a process's output, read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
