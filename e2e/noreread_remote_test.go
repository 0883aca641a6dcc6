package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/visibility/remote"
)

// TestNoRereadAsksRemoteProxyThroughSynaxi: the built hook, which links no
// net/http, asks a proxy on another machine for visibility through the
// `synaxi visibility` beside it, and denies only on that proxy's word.
func TestNoRereadAsksRemoteProxyThroughSynaxi(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	bin := filepath.Join(claudecli.RepoRoot(), "plugin", "bin")
	home := t.TempDir()
	work := filepath.Join(home, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	file := filepath.Join(work, "a.go")
	var src bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&src, "line %d of a file the worker read once already\n", i)
	}
	require.NoError(t, os.WriteFile(file, src.Bytes(), 0o644))

	var visible atomic.Bool
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != remote.Path || r.Header.Get("X-Synaxi-Token") != "team-token" || !visible.Load() {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(visibility.Export{Session: r.URL.Query().Get("session"), Agent: r.URL.Query().Get("agent"),
			Updated: time.Now().Add(time.Second), Files: map[string]visibility.File{file: {Visible: []visibility.Range{{Start: 1, End: 0}}}}})
	}))
	t.Cleanup(srv.Close)
	config := filepath.Join(home, "config")
	require.NoError(t, os.MkdirAll(filepath.Join(config, "synaxi"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(config, "synaxi", "config.toml"),
		fmt.Appendf(nil, "[noreread]\nvisibility_url = %q\n", srv.URL), 0o600))

	hook := func(mode, event string, resp any) string {
		t.Helper()
		in := map[string]any{"session_id": "s1", "cwd": work, "hook_event_name": event, "tool_name": "Read",
			"tool_input": map[string]any{"file_path": file}, "agent_id": "a1", "agent_type": "synaxi:synaxi-worker"}
		if resp != nil {
			in["tool_response"] = resp
		}
		raw, err := json.Marshal(in)
		require.NoError(t, err)
		cmd := exec.Command(filepath.Join(bin, "synaxi-noreread"), mode)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + config, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
			"PATH=" + os.Getenv("PATH"), "ANTHROPIC_CUSTOM_HEADERS=X-Synaxi-Token: team-token"}
		cmd.Stdin = bytes.NewReader(raw)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		assert.Empty(t, stderr.String())
		return string(out)
	}
	require.Empty(t, hook("pre", "PreToolUse", nil), "first read")
	hook("post", "PostToolUse", map[string]any{"type": "text"})

	assert.Empty(t, hook("pre", "PreToolUse", nil), "the proxy has no export: allowed")
	assert.Positive(t, asked.Load(), "the proxy was asked")
	visible.Store(true)
	assert.Contains(t, hook("pre", "PreToolUse", nil), `"deny"`, "the proxy says the file is in context")
}
