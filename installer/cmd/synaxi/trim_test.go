package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/trim"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestTrimStagesForTheProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "claude"))
	work := filepath.Join(home, "my.project")
	require.NoError(t, os.MkdirAll(work, 0o700))
	t.Chdir(work)

	folder := filepath.Join(home, "claude", "projects", projectFolder(work))
	assert.Equal(t, "-", projectFolder(work)[:1])
	require.NoError(t, os.MkdirAll(folder, 0o700))
	line := `{"type":"user","sessionId":"s-9","cwd":%q,"message":{"role":"user","content":"make the parser strict"}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(folder, "s-9.jsonl"), fmt.Appendf(nil, line, work), 0o600))

	code, out, errs := runCLI(t, "trim", "--dry-run")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "1. make the parser strict\n")
	assert.Contains(t, out, "nothing staged (--dry-run)")
	assert.NoFileExists(t, trim.StagePath(xdg.Resolve(), work))

	code, out, errs = runCLI(t, "trim", "--session", "s-9", "--ttl", "10m")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "synaxi trim: staged about ")
	assert.Contains(t, out, "Run /clear within 10m0s")
	st, err := trim.Take(xdg.Resolve(), work, time.Now())
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, "s-9", st.Session)
	assert.Contains(t, st.Block, "make the parser strict")
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), st.Expires, time.Minute)

	code, _, _ = runCLI(t, "trim", "--session", "s-9")
	require.Equal(t, 0, code)
	code, out, _ = runCLI(t, "trim", "--cancel")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "dropped the trim staged for "+work)

	for _, args := range [][]string{
		{"trim", "--session", "nope"},
		{"trim", "--session", "../x"},
		{"trim", "--transcript", filepath.Join(folder, "s-9", "subagents", "agent-1.jsonl")},
	} {
		code, _, errs = runCLI(t, args...)
		assert.Equal(t, 1, code, args)
		assert.NotEmpty(t, errs)
	}
	code, _, _ = runCLI(t, "trim", "--ttl", "0s")
	assert.Equal(t, 2, code)
}
