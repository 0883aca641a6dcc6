package reads

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/governor"
)

// TestGovernStall: the hook reads the context size from the end of the
// transcript, so the stall rule fires live: a subagent's calls are sized by
// its own file beside the session's.
func TestGovernStall(t *testing.T) {
	for _, agent := range []string{"", "a1"} {
		t.Run("agent="+agent, func(t *testing.T) {
			e := newEnv(t)
			e.agent = agent
			main := filepath.Join(t.TempDir(), e.sess+".jsonl")
			file := main
			if agent != "" {
				file = filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "agent-"+agent+".jsonl")
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o700))
				require.NoError(t, os.WriteFile(main, []byte(`{"type":"assistant","message":{"usage":{"input_tokens":1}}}`+"\n"), 0o600))
			}
			size := func(tokens int) {
				line := fmt.Sprintf(`{"type":"assistant","message":{"role":"assistant","usage":{"input_tokens":%d}}}`+"\n", tokens)
				require.NoError(t, os.WriteFile(file, []byte(line), 0o600))
			}
			call := func(tool string, input map[string]any, resp map[string]any) (governor.Fire, bool) {
				in := e.input("PostToolUse", tool, input, resp)
				in.TranscriptPath = main
				f, ok, err := e.s.Govern(in)
				require.NoError(t, err)
				return f, ok
			}
			p := e.file("a.go", 3)
			size(10_000)
			_, ok := call("Read", map[string]any{"file_path": p}, map[string]any{"file": map[string]any{"content": "x"}})
			require.False(t, ok)
			var fired []int
			for i := 1; i <= governor.Defaults.StallCalls+5; i++ {
				size(10_000 + 1_500*i)
				if f, ok := call("Bash", map[string]any{"command": fmt.Sprintf("ls dir%d", i)}, map[string]any{"stdout": "x"}); ok {
					assert.Equal(t, governor.Stall, f.Rule)
					fired = append(fired, i)
				}
			}
			assert.Equal(t, []int{governor.Defaults.StallCalls}, fired, "once, when the streak reaches the threshold and the context grew by 60k")
		})
	}
}

// TestGovernorConcurrentUpdates: the governor's file is updated in place
// under its lock, so parallel post hooks lose no observation, and a file
// left torn by a killed writer counts as a fresh state.
func TestGovernorConcurrentUpdates(t *testing.T) {
	e := newEnv(t)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in := e.input("PostToolUse", "Bash", map[string]any{"command": fmt.Sprintf("echo %d", i)}, map[string]any{"stdout": "x"})
			_, _, err := e.s.Govern(in)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	c, err := e.s.Load(e.sess, "")
	require.NoError(t, err)
	for i := range n {
		assert.Equal(t, 1, runsOf(c.Governor, fmt.Sprintf("echo %d", i)), "run %d", i)
	}

	file := filepath.Join(Dir(e.s.Dirs, e.sess, ""), governorName)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, data[:len(data)/2], 0o600))
	data, err = readGovernorBytes(file)
	require.NoError(t, err)
	_, err = decodeState(data)
	require.Error(t, err)
	e.post(e.input("PostToolUse", "Bash", map[string]any{"command": "echo 0"}, map[string]any{"stdout": "x"}))
	c, err = e.s.Load(e.sess, "")
	require.NoError(t, err)
	assert.Equal(t, 1, runsOf(c.Governor, "echo 0"), "started afresh")
	assert.Equal(t, 0, runsOf(c.Governor, "echo 1"))
}

// runsOf is how often cmd ran since the last edit, in a governor state.
func runsOf(st governor.State, cmd string) int { return st.Runs[governor.Key(cmd)].Count }
