package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/reads"
	"github.com/synaxi/synaxi/hooks/internal/session"
	"github.com/synaxi/synaxi/internal/testbin"
)

// built is the hook, built once.
var built string

// TestMain builds the hook once. Tests put it beside a stand-in
// synaxi-proxyd, the way plugin/bin holds both.
func TestMain(m *testing.M) { testbin.Main(m, "synaxi-session", &built) }

type world struct {
	bin  string // synaxi-session beside a stand-in synaxi-proxyd
	env  []string
	dirs xdg.Dirs
}

// newWorld copies the hook into its own directory with proxyd as the
// stand-in synaxi-proxyd script.
func newWorld(t *testing.T, proxyd string) *world {
	root := t.TempDir()
	binDir := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(binDir, 0o755))
	data, err := os.ReadFile(built)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(binDir, "synaxi-session"), data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(binDir, "synaxi-proxyd"), []byte(proxyd), 0o755))
	w := &world{bin: filepath.Join(binDir, "synaxi-session")}
	w.env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(root, "state"), "XDG_CONFIG_HOME="+filepath.Join(root, "config"),
		"XDG_DATA_HOME="+filepath.Join(root, "data"),
		"STANDIN_PIDFILE="+filepath.Join(root, "standin.pid"))
	w.dirs = xdg.Dirs{State: filepath.Join(root, "state", "synaxi"), Config: filepath.Join(root, "config", "synaxi"),
		Data: filepath.Join(root, "data", "synaxi")}
	t.Cleanup(func() {
		// End the stand-in listener this test started, by its pid.
		if b, err := os.ReadFile(filepath.Join(root, "standin.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return w
}

func (w *world) run(t *testing.T, mode string, input map[string]any, extraEnv ...string) (string, time.Duration) {
	raw, err := json.Marshal(input)
	require.NoError(t, err)
	cmd := exec.Command(w.bin, mode)
	cmd.Env = append(append([]string(nil), w.env...), extraEnv...)
	cmd.Stdin = bytes.NewReader(raw)
	start := time.Now()
	out, err := cmd.Output()
	require.NoError(t, err, "a hook always exits 0")
	return string(out), time.Since(start)
}

// listenerProxyd stands in for synaxi-proxyd: "start -port N" leaves a
// detached process, records its pid for the test and publishes the proxy's
// record (proxyinfo) naming it and port N, as the real one does once it
// listens.
const listenerProxyd = `#!/bin/sh
[ "$1" = start ] && [ "$2" = -port ] || exit 2
sleep 60 </dev/null >/dev/null 2>&1 &
echo $! > "$STANDIN_PIDFILE"
mkdir -p "$XDG_STATE_HOME/synaxi/proxyd"
printf '{"pid":%d,"port":%d,"addr":"127.0.0.1:%d"}' $! "$3" "$3" > "$XDG_STATE_HOME/synaxi/proxyd/proxyd.json"
`

// deadProxyd stands in for a synaxi-proxyd that never comes up.
const deadProxyd = "#!/bin/sh\nexit 1\n"

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

func startInput(source string) map[string]any {
	return map[string]any{"session_id": "sess-7", "transcript_path": "/h/.claude/projects/p/sess-7.jsonl",
		"cwd": "/work", "hook_event_name": "SessionStart", "source": source, "agent_type": "synaxi:synaxi-chat"}
}

func TestStartsProxyOnDemand(t *testing.T) {
	w := newWorld(t, listenerProxyd)
	port := freePort(t)
	require.NoError(t, statefile.WriteBytes(proxyinfo.PortPath(w.dirs), []byte(strconv.Itoa(port))))
	out, _ := w.run(t, "start", startInput("startup"), fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port))
	assert.Empty(t, out, "the proxy came up: nothing to say")
	info, err := proxyinfo.Live(w.dirs)
	require.NoError(t, err, "the proxy runs")
	assert.Equal(t, port, info.Port)

	// Once it runs, a later session finds it up and starts nothing.
	require.NoError(t, os.Remove(filepath.Join(filepath.Dir(w.bin), "synaxi-proxyd")))
	out, _ = w.run(t, "start", startInput("startup"), fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port))
	assert.Empty(t, out, "the proxy is up")
}

func TestProxyThatCannotStart(t *testing.T) {
	w := newWorld(t, deadProxyd)
	port := freePort(t)
	require.NoError(t, statefile.WriteBytes(proxyinfo.PortPath(w.dirs), []byte(strconv.Itoa(port))))
	out, _ := w.run(t, "start", startInput("startup"), fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port))
	var msg struct {
		SystemMessage string `json:"systemMessage"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &msg), out)
	assert.Contains(t, msg.SystemMessage, "not running")

	// Not routed to synaxi's port: never started, nothing said.
	out, _ = w.run(t, "start", startInput("startup"), "ANTHROPIC_BASE_URL=https://api.anthropic.com")
	assert.Empty(t, out)
	out, _ = w.run(t, "start", startInput("startup"), fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", freePort(t)))
	assert.Empty(t, out, "a loopback port that is not synaxi's")
}

func TestSessionLifecycle(t *testing.T) {
	w := newWorld(t, deadProxyd)
	store := reads.New(w.dirs, config.Default().NoReread)
	work := t.TempDir()
	file := filepath.Join(work, "a.go")
	require.NoError(t, os.WriteFile(file, []byte(strings.Repeat("package a // text\n", 50)), 0o644))
	recordRead := func(agent string) {
		raw, _ := json.Marshal(map[string]any{"session_id": "sess-7", "cwd": work, "agent_id": agent,
			"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": file}})
		in, err := hookio.Parse(raw)
		require.NoError(t, err)
		require.NoError(t, store.Post(in))
	}
	recordedIn := func(agent string) bool {
		c, err := store.Load("sess-7", agent)
		return err == nil && c.Files[file] != nil
	}

	out, _ := w.run(t, "start", startInput("startup"))
	assert.Empty(t, out)
	rec := map[string]any{}
	require.NoError(t, statefile.ReadJSON(session.Path(w.dirs, "sess-7"), &rec))
	assert.Equal(t, "startup", rec["source"])
	assert.Equal(t, "synaxi:synaxi-chat", rec["agent_type"])
	started := rec["started"]
	_, err := time.Parse(time.RFC3339, started.(string))
	require.NoError(t, err)

	for _, reset := range []struct {
		mode  string
		input map[string]any
	}{
		{"start", startInput("compact")},
		{"start", startInput("clear")},
		{"precompact", map[string]any{"session_id": "sess-7", "hook_event_name": "PreCompact", "trigger": "auto"}},
	} {
		recordRead("")
		recordRead("worker-1")
		require.True(t, recordedIn("") && recordedIn("worker-1"))
		w.run(t, reset.mode, reset.input)
		assert.False(t, recordedIn(""), "%s %v resets the main context", reset.mode, reset.input["source"])
		assert.False(t, recordedIn("worker-1"), "and every subagent context")
	}
	recordRead("")
	w.run(t, "start", startInput("resume"))
	assert.True(t, recordedIn(""), "resume keeps what the model still has")

	w.run(t, "end", map[string]any{"session_id": "sess-7", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	require.NoError(t, statefile.ReadJSON(session.Path(w.dirs, "sess-7"), &rec))
	assert.Equal(t, started, rec["started"], "later starts keep the first start time")
	assert.Equal(t, "resume", rec["source"])
	assert.Equal(t, "prompt_input_exit", rec["end_reason"])
	assert.NotEmpty(t, rec["ended"])
}

func TestSessionFailsOpen(t *testing.T) {
	w := newWorld(t, deadProxyd)
	for _, mode := range []string{"start", "precompact", "end", "bogus"} {
		cmd := exec.Command(w.bin, mode)
		cmd.Env = w.env
		cmd.Stdin = strings.NewReader("{not json")
		out, err := cmd.Output()
		require.NoError(t, err, mode)
		assert.Empty(t, out, mode)
	}
}

// A session's startup removes what ended contexts and killed writers left
// behind, and nothing else; a resume leaves everything.
func TestStartupHousekeeping(t *testing.T) {
	w := newWorld(t, deadProxyd)
	long := time.Now().Add(-8 * 24 * time.Hour)
	oldExport := visibility.Path(w.dirs, "gone", "")
	freshExport := visibility.Path(w.dirs, "live", "")
	oldTemp := filepath.Join(w.dirs.StatePath("sessions"), ".session.json8674665223082153551")
	freshTemp := filepath.Join(w.dirs.StatePath("sessions"), ".session.json1111111111111111111")
	keep := filepath.Join(w.dirs.StatePath("sessions"), "other.json")
	for _, p := range []string{oldExport, freshExport, oldTemp, freshTemp, keep} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o600))
	}
	for _, p := range []string{oldExport, oldTemp, keep} {
		require.NoError(t, os.Chtimes(p, long, long))
	}

	oldContext := w.dirs.StatePath("noreread", visibility.ContextKey("gone", ""))
	freshContext := w.dirs.StatePath("noreread", visibility.ContextKey("live", ""))
	for _, d := range []string{oldContext, freshContext} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "f-1.json"), []byte("{}"), 0o600))
	}
	require.NoError(t, os.Chtimes(oldContext, long, long))

	w.run(t, "start", startInput("resume"))
	for _, p := range []string{oldExport, freshExport, oldTemp, freshTemp, keep} {
		assert.FileExists(t, p, "resume does no housekeeping")
	}
	assert.DirExists(t, oldContext)
	w.run(t, "start", startInput("startup"))
	assert.NoFileExists(t, oldExport)
	assert.NoFileExists(t, oldTemp)
	assert.NoDirExists(t, oldContext)
	for _, p := range []string{freshExport, freshTemp, keep} {
		assert.FileExists(t, p)
	}
	assert.DirExists(t, freshContext)
}
