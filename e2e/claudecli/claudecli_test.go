package claudecli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepoRootHoldsGoWork(t *testing.T) {
	_, err := os.Stat(filepath.Join(RepoRoot(), "go.work"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(RepoRoot(), ".claude-plugin", "marketplace.json"))
	require.NoError(t, err)
}

func TestMergeEnvLaterWins(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "C=3"}, []string{"B=20", "D=4", "A=10"})
	assert.Equal(t, []string{"C=3", "B=20", "D=4", "A=10"}, got)
}

func TestEnvironIsolatesTheChild(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "leak")
	t.Setenv("CLAUDE_CONFIG_DIR", "/leak")
	t.Setenv("SYNAXI_PROXY_PORT", "1")
	t.Setenv("XDG_STATE_HOME", "/leak")
	t.Setenv("KEEP_ME", "yes")
	e := &Env{Home: "/h", Work: "/w", BaseURL: "http://127.0.0.1:9", Vars: []string{"DISABLE_TELEMETRY=0", "X=y"}}
	env := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		_, dup := env[k]
		require.False(t, dup, "duplicate %s", k)
		env[k] = v
	}
	for _, k := range []string{"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "SYNAXI_PROXY_PORT"} {
		assert.NotContains(t, env, k)
	}
	assert.Equal(t, "yes", env["KEEP_ME"])
	assert.Equal(t, "/h", env["HOME"])
	assert.Equal(t, "/h/.local/state", env["XDG_STATE_HOME"])
	assert.Equal(t, "/h/.config", env["XDG_CONFIG_HOME"])
	assert.Equal(t, "http://127.0.0.1:9", env["ANTHROPIC_BASE_URL"])
	assert.Equal(t, "test", env["ANTHROPIC_API_KEY"])
	assert.Equal(t, "1", env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"])
	assert.Equal(t, "0", env["DISABLE_TELEMETRY"], "Vars win")
	assert.Equal(t, "y", env["X"])
	assert.Equal(t, os.Geteuid() == 0, env["IS_SANDBOX"] == "1")
}

// TestEnsureInstallsThePinnedCLI installs (or finds) the pinned CLI and runs
// it in a fresh Env.
func TestEnsureInstallsThePinnedCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the real CLI")
	}
	bin, err := Ensure()
	require.NoError(t, err)
	again, err := Ensure()
	require.NoError(t, err)
	assert.Equal(t, bin, again)

	e := NewEnv(t, "")
	out, err := exec.Command("git", "-C", e.Work, "rev-parse", "--is-inside-work-tree").Output()
	require.NoError(t, err)
	assert.Equal(t, "true", strings.TrimSpace(string(out)))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "--version")
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, res.Stdout, Version)
}

func TestRunReportsExitCodeAndContext(t *testing.T) {
	e := &Env{Home: t.TempDir(), Work: t.TempDir()}
	res, err := e.RunProgram(context.Background(), "sh", "-c", "echo out; echo err >&2; exit 3")
	require.NoError(t, err)
	assert.Equal(t, Result{Stdout: "out\n", Stderr: "err\n", ExitCode: 3}, *res)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = e.RunProgram(ctx, "sh", "-c", "sleep 30 & sleep 30")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 15*time.Second, "the process group is killed")
}

func TestRunKillsStragglers(t *testing.T) {
	e := &Env{Home: t.TempDir(), Work: t.TempDir()}
	marker := filepath.Join(e.Work, "straggler-wrote")
	start := time.Now()
	res, err := e.RunProgram(context.Background(), "sh", "-c", "(sleep 2; touch "+marker+") & echo started")
	require.NoError(t, err)
	assert.Equal(t, "started\n", res.Stdout)
	assert.Less(t, time.Since(start), 2*time.Second, "Run does not wait for a child holding the output open")
	time.Sleep(3 * time.Second)
	assert.NoFileExists(t, marker, "the leftover child was killed with the group")
}

// TestAwaitStragglers: a process left running with the Env's HOME is
// waited for, and killed once the wait is over; a process with another
// HOME is left alone.
func TestAwaitStragglers(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	home, other := t.TempDir(), t.TempDir()
	start := func(h, d string) *exec.Cmd {
		cmd := exec.Command("sleep", d)
		cmd.Env = append(os.Environ(), "HOME="+h)
		require.NoError(t, cmd.Start())
		return cmd
	}
	short, long, unrelated := start(home, "0.3"), start(home, "30"), start(other, "30")
	done := make(chan error, 1)
	go func() { done <- long.Wait() }()
	t.Cleanup(func() { _ = unrelated.Process.Kill(); _ = unrelated.Wait() })
	go func() { _ = short.Wait() }()
	began := time.Now()
	awaitStragglers(t, home, time.Second)
	assert.GreaterOrEqual(t, time.Since(began), time.Second, "it waited for the process that did not end")
	select {
	case err := <-done:
		assert.Error(t, err, "the straggler was killed")
	case <-time.After(5 * time.Second):
		t.Fatal("the straggler is still running")
	}
	assert.Empty(t, withHome(home))
	assert.Equal(t, []int{unrelated.Process.Pid}, withHome(other), "another HOME's process is left alone")
}
