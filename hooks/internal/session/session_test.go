package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

func input(t *testing.T, src string) *hookio.Input {
	in, err := hookio.Parse([]byte(src))
	require.NoError(t, err)
	return in
}

func TestRecordLifecycle(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	require.NoError(t, Start(d, input(t, `{"session_id":"abc/1","source":"startup","cwd":"/w","transcript_path":"/t.jsonl","agent_type":"synaxi:synaxi-chat"}`), t0))

	var m map[string]any
	require.NoError(t, statefile.ReadJSON(filepath.Join(d.State, "sessions", statefile.SafeName("abc/1"), "session.json"), &m))
	assert.Equal(t, map[string]any{"session_id": "abc/1", "source": "startup", "agent_type": "synaxi:synaxi-chat",
		"cwd": "/w", "transcript_path": "/t.jsonl", "started": "2026-11-29T10:00:00Z"}, m)

	// Another binary adds a field; a later start keeps it and "started".
	m["ingested"] = true
	require.NoError(t, statefile.WriteJSON(Path(d, "abc/1"), m))
	require.NoError(t, Start(d, input(t, `{"session_id":"abc/1","source":"compact","cwd":"/w2","transcript_path":"/t.jsonl"}`), t0.Add(time.Hour)))
	require.NoError(t, End(d, input(t, `{"session_id":"abc/1","reason":"prompt_input_exit"}`), t0.Add(2*time.Hour)))

	require.NoError(t, statefile.ReadJSON(Path(d, "abc/1"), &m))
	assert.Equal(t, true, m["ingested"])
	assert.Equal(t, "2026-11-29T10:00:00Z", m["started"])
	assert.Equal(t, "compact", m["source"])
	assert.Equal(t, "/w2", m["cwd"])
	assert.Equal(t, "2026-11-29T12:00:00Z", m["ended"])
	assert.Equal(t, "prompt_input_exit", m["end_reason"])

	r, err := Read(d, "abc/1")
	require.NoError(t, err)
	assert.Equal(t, "prompt_input_exit", r.EndReason)
}

func TestEndWithoutStart(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	require.NoError(t, End(d, input(t, `{"session_id":"s","reason":"other"}`), time.Now()))
	r, err := Read(d, "s")
	require.NoError(t, err)
	assert.Equal(t, "s", r.SessionID)
	assert.Equal(t, "other", r.EndReason)
}

func TestEnsureProxy(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	const port = 41999
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	ctx := context.Background()
	// The running proxy's record, naming a live process (this one).
	require.NoError(t, statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: os.Getpid(), Port: port, Addr: "127.0.0.1:41999"}))

	assert.Equal(t, NotRouted, EnsureProxy(ctx, d, "https://api.anthropic.com", 0, time.Second))
	assert.Equal(t, NotRouted, EnsureProxy(ctx, d, "http://127.0.0.1:41998", 0, time.Second), "port not synaxi's")
	assert.Equal(t, Up, EnsureProxy(ctx, d, url, port, time.Second))

	// Down (the record names a process that exited), and no synaxi-proxyd
	// beside the test binary: gives up at once.
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	require.NoError(t, statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: dead.Process.Pid, Port: port}))
	exe, _ := os.Executable()
	_, statErr := os.Stat(filepath.Join(filepath.Dir(exe), "synaxi-proxyd"))
	require.Error(t, statErr)
	start := time.Now()
	assert.Equal(t, Down, EnsureProxy(ctx, d, url, port, 300*time.Millisecond))
	assert.Less(t, time.Since(start), time.Second)
}
