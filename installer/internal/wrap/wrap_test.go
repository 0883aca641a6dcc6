package wrap

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/fakes"
	"github.com/synaxi/synaxi/installer/internal/proxyctl"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestMain(m *testing.M) {
	fakes.Main(map[string]func([]string) int{
		// The wrap itself, as a separate process that a test can kill.
		"wrap": func(args []string) int {
			code, err := Run(context.Background(), Options{
				Claude: os.Getenv("FAKE_CLAUDE"), ProxyBin: os.Getenv("FAKE_PROXYD"), Args: args,
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			})
			if err != nil {
				return 1
			}
			return code
		},
	})
	os.Exit(m.Run())
}

type fixture struct {
	claude, proxyd, record string
	d                      xdg.Dirs
}

func setup(t *testing.T) *fixture {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	binDir, claude := fakes.Bins(t)
	f := &fixture{claude: claude, proxyd: filepath.Join(binDir, "synaxi-proxyd"), record: filepath.Join(home, "record.json"), d: xdg.Resolve()}
	t.Cleanup(func() { _ = exec.Command(f.proxyd, "stop").Run() })
	return f
}

func (f *fixture) recorded(t *testing.T) (args, env []string) {
	t.Helper()
	data, err := os.ReadFile(f.record)
	require.NoError(t, err)
	var r struct{ Args, Env []string }
	require.NoError(t, json.Unmarshal(data, &r))
	return r.Args, r.Env
}

func (f *fixture) proxyRunning() bool { return proxyctl.Inspect(context.Background(), f.d).Running }

func TestWrapRoutesOneLaunchAndRestores(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		proxyBefore bool
		wantArgs    []string
		wantCeiling bool
	}{
		{"print mode", []string{"-p", "fix the bug", "--model", "opus"}, false,
			[]string{"--agent", Agent, "-p", "fix the bug", "--model", "opus"}, true},
		{"interactive, proxy already running", []string{"--continue"}, true,
			[]string{"--agent", Agent, "--continue"}, false},
		{"user's own agent", []string{"--agent", "mine", "--print", "x"}, false,
			[]string{"--agent", "mine", "--print", "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			if tt.proxyBefore {
				_, err := proxyctl.Start(context.Background(), f.proxyd, f.d, nil)
				require.NoError(t, err)
			}
			var stderr bytes.Buffer
			env := append(os.Environ(), "SYNAXI_FAKE_RECORD="+f.record, "SYNAXI_FAKE_EXIT=3", "ANTHROPIC_BASE_URL=http://elsewhere.invalid")
			code, err := Run(context.Background(), Options{Claude: f.claude, ProxyBin: f.proxyd, Args: tt.args, Env: env, Stderr: &stderr})
			assert.Contains(t, stderr.String(), "instead of ANTHROPIC_BASE_URL=http://elsewhere.invalid")
			require.NoError(t, err, stderr.String())
			assert.Equal(t, 3, code, "the exit code is forwarded")

			args, got := f.recorded(t)
			assert.Equal(t, tt.wantArgs, args)
			base := ""
			for _, kv := range got {
				if v, ok := strings.CutPrefix(kv, "ANTHROPIC_BASE_URL="); ok {
					assert.Empty(t, base, "ANTHROPIC_BASE_URL set once")
					base = v
				}
			}
			assert.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)
			assert.Contains(t, got, "ENABLE_TOOL_SEARCH=true")
			if tt.wantCeiling {
				assert.Contains(t, got, "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS="+PrintWaitCeilingMS)
			} else {
				assert.NotContains(t, strings.Join(got, "\n"), "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS")
			}

			ms, err := Markers(f.d)
			require.NoError(t, err)
			assert.Empty(t, ms, "no marker left")
			assert.Equal(t, tt.proxyBefore, f.proxyRunning(), "a proxy the wrap started is stopped; one it found is left")
		})
	}
}

// startWrapProcess runs a wrap in its own process around a fake Claude Code
// that sleeps, and waits until the wrap has launched it.
func startWrapProcess(t *testing.T, f *fixture) (*exec.Cmd, *Marker) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-p", "work")
	cmd.Env = append(os.Environ(), "SYNAXI_TEST_FAKE=wrap", "FAKE_CLAUDE="+f.claude, "FAKE_PROXYD="+f.proxyd,
		"SYNAXI_FAKE_SLEEP=60s", "SYNAXI_FAKE_RECORD="+f.record)
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for {
		ms, _ := Markers(f.d)
		_, err := os.Stat(f.record)
		if len(ms) == 1 && ms[0].ChildPID > 0 && err == nil {
			return cmd, ms[0]
		}
		require.True(t, time.Now().Before(deadline), "wrap did not launch claude")
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWrapRestoresAfterKill9(t *testing.T) {
	f := setup(t)
	cmd, m := startWrapProcess(t, f)
	require.True(t, f.proxyRunning())

	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no chance to restore
	_ = cmd.Wait()

	// Claude Code outlived the wrap: it still needs the proxy.
	n, err := Repair(context.Background(), f.d, f.proxyd, nil)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.True(t, f.proxyRunning(), "the proxy stays while the wrapped claude runs")

	require.NoError(t, syscall.Kill(m.ChildPID, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !proxyctl.PIDAlive(m.ChildPID) }, 10*time.Second, 20*time.Millisecond)

	n, err = Repair(context.Background(), f.d, f.proxyd, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, f.proxyRunning(), "the proxy the crashed wrap started is stopped")
	ms, _ := Markers(f.d)
	assert.Empty(t, ms)
	_, err = os.Stat(ownerPath(f.d))
	assert.True(t, os.IsNotExist(err))
}

func TestWrapForwardsSignals(t *testing.T) {
	f := setup(t)
	cmd, _ := startWrapProcess(t, f)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 100+int(syscall.SIGTERM), ee.ExitCode(), "claude got SIGTERM and its code came back")
	assert.False(t, f.proxyRunning())
	ms, _ := Markers(f.d)
	assert.Empty(t, ms)
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=1", "ENABLE_TOOL_SEARCH=false", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5"}, "http://127.0.0.1:9", []string{"-p"})
	assert.Equal(t, []string{"A=1", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ENABLE_TOOL_SEARCH=true", "SYNAXI_WRAPPED=1"}, got)
}
