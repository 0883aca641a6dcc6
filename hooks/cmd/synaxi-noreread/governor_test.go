package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
)

// failing is the post hook's input for a failed test run, as
// PostToolUseFailure carries it.
func failing(t *testing.T, cwd string) []byte {
	raw := hookJSON(t, "PostToolUseFailure", "Bash", cwd, map[string]any{"command": "pytest -q tests/"})
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	m["error"] = "Exit code 1\nFAILED tests/test_calc.py::test_add - assert 3 == 4\n1 failed in 0.04s"
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	return raw
}

// TestProcessGovernor: the same failing run three times with a no-op edit
// between; the third is told to the model (advise) or also stops the session
// (on), and is counted for the status line.
func TestProcessGovernor(t *testing.T) {
	for _, mode := range []string{"advise", "on", "off"} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			w.env = append(w.env, "SYNAXI_GOVERNOR_MODE="+mode)
			p := filepath.Join(w.work, "calc.py")
			require.NoError(t, os.WriteFile(p, []byte("def add(a, b):\n    return a + b + 1\n"), 0o644))
			edit := hookJSON(t, "PostToolUse", "Edit", w.work, map[string]any{"file_path": p, "old_string": "+ 1", "new_string": "+ 1 "})
			var outs []string
			for i := range 3 {
				out, _, code := w.exec(t, "post", failing(t, w.work))
				require.Equal(t, 0, code)
				outs = append(outs, out)
				if i < 2 {
					out, _, _ = w.exec(t, "post", edit)
					assert.Empty(t, out)
				}
			}
			assert.Empty(t, outs[0])
			assert.Empty(t, outs[1])
			c, err := ledger.ReadCounters(w.dirs(), "bench-session")
			if mode == "off" {
				assert.Empty(t, outs[2])
				assert.Error(t, err, "nothing counted")
				return
			}
			var got struct {
				Continue   *bool  `json:"continue"`
				StopReason string `json:"stopReason"`
				H          struct {
					Event   string `json:"hookEventName"`
					Context string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			require.NoError(t, json.Unmarshal([]byte(outs[2]), &got), outs[2])
			assert.Equal(t, "PostToolUseFailure", got.H.Event)
			assert.Contains(t, got.H.Context, "`pytest -q tests/` has failed 3 times in a row with the same output")
			require.NoError(t, err)
			assert.Equal(t, map[string]int64{"unchanged": 1}, c.Loops)
			require.NotNil(t, c.LastLoop)
			assert.Equal(t, mode, c.LastLoop.Mode)
			assert.Nil(t, got.Continue, "Claude Code ignores continue false after a tool call")
			// The next call, an edit here: in mode on it is denied and
			// Claude is stopped, once; in advise mode it runs.
			next := hookJSON(t, "PreToolUse", "Edit", w.work, map[string]any{"file_path": p, "old_string": "+ 1 ", "new_string": "+ 1"})
			out, _, _ := w.exec(t, "pre", next)
			if mode == "advise" {
				assert.Empty(t, out)
				assert.Zero(t, c.Stops)
				return
			}
			var stop struct {
				Continue   *bool  `json:"continue"`
				StopReason string `json:"stopReason"`
				H          struct {
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &stop), out)
			require.NotNil(t, stop.Continue)
			assert.False(t, *stop.Continue)
			assert.Contains(t, stop.StopReason, "stopped the agent: unchanged loop on pytest -q tests/")
			assert.Equal(t, "deny", stop.H.Decision)
			assert.Contains(t, stop.H.Reason, "has failed 3 times")
			assert.Equal(t, int64(1), c.Stops)
			out, _, _ = w.exec(t, "pre", next)
			assert.Empty(t, out, "the stop is delivered once")
		})
	}
}
