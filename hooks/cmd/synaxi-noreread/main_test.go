package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/reads"
	"github.com/synaxi/synaxi/internal/testbin"
)

// bin is the hook built once for the process-level tests and benchmarks.
var bin string

func TestMain(m *testing.M) { testbin.Main(m, "synaxi-noreread", &bin) }

// world is a state dir, a work tree and the environment for the hook.
type world struct {
	work, state string
	env         []string
}

func newWorld(tb testing.TB) *world {
	root := tb.TempDir()
	w := &world{work: filepath.Join(root, "work"), state: filepath.Join(root, "state")}
	require.NoError(tb, os.MkdirAll(w.work, 0o755))
	w.env = append(os.Environ(), "XDG_STATE_HOME="+w.state, "XDG_CONFIG_HOME="+filepath.Join(root, "config"))
	return w
}

func (w *world) dirs() xdg.Dirs { return xdg.Dirs{State: filepath.Join(w.state, "synaxi")} }

func hookJSON(tb testing.TB, event, tool, cwd string, input map[string]any) []byte {
	raw, err := json.Marshal(map[string]any{"session_id": "bench-session", "transcript_path": "/t.jsonl", "cwd": cwd,
		"permission_mode": "bypassPermissions", "hook_event_name": event, "tool_name": tool, "tool_input": input,
		"tool_use_id": "toolu_01"})
	require.NoError(tb, err)
	return raw
}

// exec runs the built hook and returns stdout, stderr and the exit code.
func (w *world) exec(tb testing.TB, mode string, stdin []byte) (string, string, int) {
	cmd := exec.Command(bin, mode)
	cmd.Env = w.env
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(tb, err)
	}
	return out.String(), errb.String(), code
}

func TestProcessDenyThenEscape(t *testing.T) {
	w := newWorld(t)
	p := filepath.Join(w.work, "a.go")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("package a // some text to weigh in tokens\n", 60)), 0o644))
	read := hookJSON(t, "PreToolUse", "Read", w.work, map[string]any{"file_path": p})

	out, _, code := w.exec(t, "pre", read)
	assert.Equal(t, 0, code)
	assert.Empty(t, out, "unknown file: no output")
	_, _, code = w.exec(t, "post", hookJSON(t, "PostToolUse", "Read", w.work, map[string]any{"file_path": p}))
	assert.Equal(t, 0, code)

	out, _, code = w.exec(t, "pre", read)
	assert.Equal(t, 0, code)
	var m map[string]map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	assert.Equal(t, "deny", m["hookSpecificOutput"]["permissionDecision"])
	assert.Equal(t, "PreToolUse", m["hookSpecificOutput"]["hookEventName"])
	assert.Contains(t, m["hookSpecificOutput"]["permissionDecisionReason"], p)

	out, _, _ = w.exec(t, "pre", read)
	assert.Empty(t, out, "re-issued read passes")
}

func TestProcessFailOpen(t *testing.T) {
	w := newWorld(t)
	for name, in := range map[string][]byte{
		"garbage":     []byte("{{{"),
		"empty":       nil,
		"not object":  []byte(`[1]`),
		"no session":  []byte(`{"tool_name":"Read","tool_input":{"file_path":"/etc/hosts"}}`),
		"odd tool":    []byte(`{"session_id":"s","tool_name":"Zap","tool_input":{}}`),
		"input types": []byte(`{"session_id":"s","tool_name":"Read","tool_input":{"file_path":7}}`),
	} {
		t.Run(name, func(t *testing.T) {
			for _, mode := range []string{"pre", "post"} {
				out, _, code := w.exec(t, mode, in)
				assert.Equal(t, 0, code)
				assert.Empty(t, out)
			}
		})
	}
	// A broken config file: allow, say nothing.
	require.NoError(t, os.MkdirAll(filepath.Join(filepath.Dir(w.state), "config", "synaxi"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(w.state), "config", "synaxi", "config.toml"), []byte("[noreread\n"), 0o600))
	out, _, code := w.exec(t, "pre", hookJSON(t, "PreToolUse", "Read", w.work, map[string]any{"file_path": "/etc/hosts"}))
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	// An unwritable state dir: allow, say nothing.
	w2 := newWorld(t)
	require.NoError(t, os.WriteFile(w2.state, []byte("a file, not a dir"), 0o600))
	out, _, code = w2.exec(t, "post", hookJSON(t, "PostToolUse", "Read", w2.work, map[string]any{"file_path": "/etc/hosts"}))
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
}

// TestStaticBinary: the hook starts on every Read and Bash call, so it must
// not pay for the dynamic loader. It imports net/http (remote visibility),
// whose cgo resolver would make a cgo build dynamically linked: `make
// build`, the release and testbin build it with CGO_ENABLED=0.
func TestStaticBinary(t *testing.T) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF binary here: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "synaxi-noreread is dynamically linked")
	}
}

// TestParallelProcesses runs many hook processes at once on one context, as
// parallel tool calls do: no recorded read may be lost.
func TestParallelProcesses(t *testing.T) {
	w := newWorld(t)
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		p := filepath.Join(w.work, fmt.Sprintf("f%d.go", i))
		require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x\n", 10)), 0o644))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, code := w.exec(t, "post", hookJSON(t, "PostToolUse", "Read", w.work, map[string]any{"file_path": p}))
			assert.Equal(t, 0, code)
		}()
	}
	wg.Wait()
	s := reads.New(w.dirs(), config.Default().NoReread)
	c, err := s.Load("bench-session", "")
	require.NoError(t, err)
	assert.Len(t, c.Files, n)
}

// seed writes a realistic session: files of 1–40 KB, all recorded as read.
func seed(tb testing.TB, w *world, files int) []string {
	s := reads.New(w.dirs(), config.Default().NoReread)
	paths := make([]string, files)
	line := "\tif err := doSomething(ctx, value); err != nil { return fmt.Errorf(\"wrap: %w\", err) }\n"
	for i := range paths {
		dir := filepath.Join(w.work, fmt.Sprintf("pkg%02d", i%25))
		require.NoError(tb, os.MkdirAll(dir, 0o755))
		paths[i] = filepath.Join(dir, fmt.Sprintf("file_%03d.go", i))
		size := 1 + (i*37)%40
		require.NoError(tb, os.WriteFile(paths[i], []byte(strings.Repeat(line, size*1024/len(line))), 0o644))
		in, err := hookio.Parse(hookJSON(tb, "PostToolUse", "Read", w.work, map[string]any{"file_path": paths[i]}))
		require.NoError(tb, err)
		require.NoError(tb, s.Post(in))
	}
	return paths
}

// benchExec times whole hook processes and reports p50 and p99 wall time.
func benchExec(b *testing.B, w *world, mode string, inputs [][]byte) {
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := inputs[i%len(inputs)]
		start := time.Now()
		w.exec(b, mode, in)
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	testbin.ReportPercentiles(b, durs)
}

// BenchmarkHook times synaxi-noreread as Claude Code runs it: one process
// per call, on a session that has read 500 files.
func BenchmarkHook(b *testing.B) {
	w := newWorld(b)
	paths := seed(b, w, 500)
	fresh := filepath.Join(w.work, "fresh.go")
	require.NoError(b, os.WriteFile(fresh, []byte("package fresh\n"), 0o644))
	var reread, newRead, shell, grep, post [][]byte
	for i := 0; i < 50; i++ {
		p := paths[(i*7)%len(paths)]
		reread = append(reread, hookJSON(b, "PreToolUse", "Read", w.work, map[string]any{"file_path": p}))
		newRead = append(newRead, hookJSON(b, "PreToolUse", "Read", w.work, map[string]any{"file_path": fresh, "offset": i + 1, "limit": 10}))
		rel, _ := filepath.Rel(w.work, p)
		shell = append(shell, hookJSON(b, "PreToolUse", "Bash", w.work, map[string]any{"command": "cat -n " + rel + " | sed -n '1,80p'"}))
		grep = append(grep, hookJSON(b, "PreToolUse", "Bash", w.work, map[string]any{"command": fmt.Sprintf("pytest tests/test_%d.py -x 2>&1 | tail -40", i)}))
		post = append(post, hookJSON(b, "PostToolUse", "Read", w.work, map[string]any{"file_path": p, "offset": 1, "limit": 50}))
	}
	b.Run("pre-reread-500", func(b *testing.B) { benchExec(b, w, "pre", reread) })
	b.Run("pre-new-file-500", func(b *testing.B) { benchExec(b, w, "pre", newRead) })
	b.Run("pre-shell-read-500", func(b *testing.B) { benchExec(b, w, "pre", shell) })
	b.Run("pre-test-run-500", func(b *testing.B) { benchExec(b, w, "pre", grep) })
	b.Run("post-read-500", func(b *testing.B) { benchExec(b, w, "post", post) })
	if fi, err := os.Stat(bin); err == nil {
		b.Run("binary-size", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
			}
			b.ReportMetric(float64(fi.Size()), "bin-bytes")
		})
	}
}
