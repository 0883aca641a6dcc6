package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopTranscript writes a transcript in which the agent runs the same
// failing check three times with an edit and its revert between.
func loopTranscript(t *testing.T) string {
	var b strings.Builder
	line := func(v map[string]any) {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		b.Write(data)
		b.WriteByte('\n')
	}
	call := func(i int, name string, input map[string]any, result string, failed bool) {
		id := fmt.Sprintf("toolu_%02d", i)
		line(map[string]any{"type": "assistant", "cwd": "/w", "message": map[string]any{"role": "assistant",
			"usage":   map[string]any{"input_tokens": 10, "cache_read_input_tokens": 1000 * i},
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
		line(map[string]any{"type": "user", "cwd": "/w", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": failed}}}})
	}
	check := map[string]any{"command": "sh check.sh"}
	call(1, "Bash", check, "Exit code 1\nFAIL add (0.01s)", true)
	call(2, "Edit", map[string]any{"file_path": "/w/calc.py", "old_string": "+ 1", "new_string": "+ 1 # x"}, "ok", false)
	call(3, "Bash", check, "Exit code 1\nFAIL add (0.02s)", true)
	call(4, "Edit", map[string]any{"file_path": "/w/calc.py", "old_string": "+ 1 # x", "new_string": "+ 1"}, "ok", false)
	call(5, "Bash", check, "Exit code 1\nFAIL add (0.03s)", true)
	path := filepath.Join(t.TempDir(), "loop.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

func TestRun(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-around", "1", loopTranscript(t)}, &out, &errb), errb.String())
	s := out.String()
	assert.Contains(t, s, "| 001/loop | main | 5 | 1 | unchanged #5 |")
	assert.Contains(t, s, "- **001/loop main #5: unchanged** (3)\n  - #4 Edit `calc.py: \"+ 1 # x\" → \"+ 1\"`\n  - #5 Bash ✗ `sh check.sh` ←\n")
	assert.Contains(t, s, "| unchanged | 2 → 1 (1); 3 → 1 (1); 4 → 0 (0) |")

	out.Reset()
	assert.Equal(t, 2, run(context.Background(), nil, &out, &errb), "no file is bad usage")
	assert.Equal(t, 1, run(context.Background(), []string{"/nonexistent.jsonl"}, &out, &errb))
}
