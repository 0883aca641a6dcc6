package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
)

const governorMark = "synaxi governor:"

// loopingAgent is a scripted agent stuck in a doom loop: it runs the same
// failing check, makes an edit that changes nothing the check sees (a
// comment, then the comment removed), and runs the check again.
func loopingAgent(work string) *script {
	calc := filepath.Join(work, "calc.py")
	run := bashUse("sh check.sh")
	edit := func(old, new string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "Edit", Input: map[string]any{"file_path": calc, "old_string": old, "new_string": new}}
	}
	return newScript(
		step{name: "run1", use: run},
		step{name: "read", use: readUse(calc)},
		step{name: "edit1", use: edit("return a + b + 1", "return a + b + 1  # check")},
		step{name: "run2", use: run},
		step{name: "edit2", use: edit("return a + b + 1  # check", "return a + b + 1")},
		step{name: "run3", use: run}, // the third identical failure: the governor fires here
		step{name: "run4", use: run},
		step{name: "read2", use: readUse(calc)},
		step{name: "read3", use: readUse(calc)},
		step{name: "read4", use: readUse(calc)}, // the same lines a third time since the last edit: reread
	)
}

func loopWorld(t *testing.T, work string) {
	require.NoError(t, os.WriteFile(filepath.Join(work, "calc.py"), []byte("def add(a, b):\n    return a + b + 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(work, "check.sh"), []byte(
		"echo 'FAIL test_add: add(1, 2) returned 4, expected 3 (0.01s)'\nexit 1\n"), 0o644))
}

// requestsWith returns, for each request the fake upstream received, how
// many tool results it carried and whether it held text.
func requestsWith(c *client, text string) (results []int, marked []bool) {
	for _, rq := range c.fake.Requests() {
		if rq.Kind != "messages" || rq.Side {
			continue
		}
		body := string(rq.Body)
		results = append(results, strings.Count(body, `"type":"tool_result"`))
		marked = append(marked, strings.Contains(body, text))
	}
	return results, marked
}

// TestGovernorAdviseRealClient: in advise mode (the default) the directive
// reaches the model in the request right after the third identical failure,
// the session goes on, and the fire is counted.
func TestGovernorAdviseRealClient(t *testing.T) {
	c := newClient(t)
	loopWorld(t, c.e.Work)
	s := loopingAgent(c.e.Work)
	sess := c.run(t, s, "make test_add pass")

	// After a failed call (PostToolUseFailure) and after a successful one
	// (PostToolUse): the directive is in the first request after the call
	// that completed the loop, and in none before.
	for _, w := range []struct {
		text    string
		results int
	}{
		{"PostToolUseFailure:Bash hook additional context: " + governorMark + " `sh check.sh` has failed 3 times", 6},
		{"PostToolUse:Read hook additional context: " + governorMark + " you have read the same lines of", 10},
	} {
		results, marked := requestsWith(c, w.text)
		first := -1
		for i, m := range marked {
			if m {
				first = results[i]
				break
			}
		}
		assert.Equal(t, w.results, first, "%q: requests %v, marked %v", w.text, results, marked)
	}
	assert.Contains(t, s.results(t)["run4"].Result, "FAIL test_add", "advise does not stop the agent")

	cnt, err := ledger.ReadCounters(envDirs(c.e), sess)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"unchanged": 1, "reread": 1}, cnt.Loops)
	require.NotNil(t, cnt.LastLoop)
	assert.Equal(t, "advise", cnt.LastLoop.Mode)
	assert.Zero(t, cnt.Stops)

	// The status line marks it, from the same counters.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	line, err := runWithStdin(ctx, c.e, filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi-statusline"),
		fmt.Sprintf(`{"session_id":%q,"workspace":{"current_dir":%q},"model":{"display_name":"Opus"}}`, sess, c.e.Work))
	require.NoError(t, err)
	assert.Contains(t, line, "⟳ 2 loops flagged: reread")
}

// runWithStdin runs a program with the Env's environment and stdin, and
// returns its stdout.
func runWithStdin(ctx context.Context, e *claudecli.Env, prog, stdin string) (string, error) {
	cmd := exec.CommandContext(ctx, prog)
	cmd.Env = e.Environ()
	cmd.Dir = e.Work
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	return string(out), err
}

// TestGovernorOnRealClient: in on mode the session stops at the third
// identical failure, with the reason shown, and the stop is counted. Claude
// Code ignores continue false from PostToolUseFailure, so the stop lands on
// the agent's next call (run4), which is denied: the model sees the
// directive once (the request after run3) and nothing is sent after it.
func TestGovernorOnRealClient(t *testing.T) {
	c := newClient(t, "SYNAXI_GOVERNOR_MODE=on")
	loopWorld(t, c.e.Work)
	s := loopingAgent(c.e.Work)
	c.mu.Lock()
	c.cur = s
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := c.e.Run(ctx, "-p", "--permission-mode", "bypassPermissions", "--output-format", "json", "make test_add pass")
	require.NoError(t, err)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)

	results, _ := requestsWith(c, governorMark)
	require.NotEmpty(t, results)
	assert.Equal(t, 6, results[len(results)-1], "the agent's next call after run3 stopped the session; no request followed: %v", results)
	var out struct {
		Terminal  string `json:"terminal_reason"`
		SessionID string `json:"session_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.Equal(t, "hook_stopped", out.Terminal)
	// The reason the user is shown: the client records it as the hook's
	// stopped-continuation message and renders it in the session.
	transcripts, err := filepath.Glob(filepath.Join(c.e.Home, ".claude", "projects", "*", out.SessionID+".jsonl"))
	require.NoError(t, err)
	require.Len(t, transcripts, 1)
	data, err := os.ReadFile(transcripts[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), `"type":"hook_stopped_continuation","message":"synaxi governor (mode on) stopped the agent: unchanged loop on sh check.sh.`)
	assert.Contains(t, string(data), "PreToolUse:Bash hook stopped continuation: synaxi governor (mode on) stopped the agent")

	cnt, err := ledger.ReadCounters(envDirs(c.e), out.SessionID)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"unchanged": 1}, cnt.Loops)
	assert.Equal(t, int64(1), cnt.Stops)
}
