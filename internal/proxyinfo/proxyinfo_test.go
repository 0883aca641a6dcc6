package proxyinfo

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestLive(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	_, err := Live(d)
	require.ErrorIs(t, err, ErrNotRunning)
	assert.Contains(t, err.Error(), "no record")

	require.NoError(t, statefile.WriteJSON(Path(d), Info{PID: os.Getpid(), Port: 4242, Addr: "127.0.0.1:4242"}))
	info, err := Live(d)
	require.NoError(t, err)
	assert.Equal(t, 4242, info.Port)

	// A record left behind by a proxy that died.
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.NoError(t, statefile.WriteJSON(Path(d), Info{PID: cmd.Process.Pid, Port: 4242}))
	_, err = Live(d)
	require.ErrorIs(t, err, ErrNotRunning)
	assert.Contains(t, err.Error(), "has exited")

	require.NoError(t, os.WriteFile(Path(d), []byte("{"), 0o600))
	_, err = Live(d)
	require.Error(t, err, "a record that does not decode")
}

// TestPIDAliveZombie: a process that exited but was not reaped (the state a
// proxy started by a still-running parent is left in) is not alive.
func TestPIDAliveZombie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are told apart through /proc")
	}
	assert.True(t, PIDAlive(os.Getpid()))
	assert.False(t, PIDAlive(0))
	assert.False(t, PIDAlive(-1))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err == nil && strings.Contains(string(stat), ") Z")
	}, 10*time.Second, 5*time.Millisecond, "the child became a zombie")
	assert.False(t, PIDAlive(pid), "a zombie is not alive")
	require.NoError(t, cmd.Wait())
	assert.False(t, PIDAlive(pid), "a reaped process is not alive")
}

func TestRoutedPort(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	require.NoError(t, statefile.WriteBytes(PortPath(d), []byte("41234\n")))
	for _, c := range []struct {
		url  string
		cfg  int
		port int
		ok   bool
	}{
		{"http://127.0.0.1:41234", 0, 41234, true},
		{"http://localhost:41234/", 0, 41234, true},
		{"http://127.0.0.1:5555", 5555, 5555, true},
		{"http://127.0.0.1:5555", 0, 0, false},
		{"https://api.anthropic.com", 0, 0, false},
		{"http://10.0.0.2:41234", 0, 0, false},
		{"", 0, 0, false},
		{"::bad", 0, 0, false},
	} {
		port, ok := RoutedPort(d, c.url, c.cfg)
		assert.Equal(t, c.ok, ok, c.url)
		assert.Equal(t, c.port, port, c.url)
	}
}

func TestCloud(t *testing.T) {
	for env, want := range map[string]string{
		"":                            "",
		"CLAUDE_CODE_USE_BEDROCK=1":   "CLAUDE_CODE_USE_BEDROCK",
		"CLAUDE_CODE_USE_VERTEX=true": "CLAUDE_CODE_USE_VERTEX",
		"CLAUDE_CODE_USE_FOUNDRY=0":   "",
		"CLAUDE_CODE_USE_BEDROCK=no":  "",
	} {
		k, v, _ := strings.Cut(env, "=")
		assert.Equal(t, want, Cloud(func(name string) string {
			if name == k {
				return v
			}
			return ""
		}), env)
	}
}
