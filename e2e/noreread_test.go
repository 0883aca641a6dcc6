package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"
)

// step is one tool call of a scripted agent. before runs in the test process
// just before the call is sent (once), to change the world outside the
// agent: edit a file behind its back, or write the proxy's visibility export.
type step struct {
	name   string
	use    fakeapi.ToolUse
	before func(v *fakeapi.View)
}

// script is an agent that makes one tool call per turn, in order, and ends
// when the steps run out. It decides only from how many tool results the
// request carries, so a denied call (an error result) moves it on like any
// other: that is "the agent proceeds".
type script struct {
	steps []step
	final string // the closing text; "done" when empty
	mu    sync.Mutex
	ran   map[int]bool
	last  *fakeapi.View
}

func newScript(steps ...step) *script { return &script{steps: steps, ran: map[int]bool{}} }

func (s *script) Respond(v *fakeapi.View) fakeapi.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = v
	i := len(v.ToolResults())
	if i >= len(s.steps) {
		if s.final != "" {
			return fakeapi.Reply{Text: s.final}
		}
		return fakeapi.Reply{Text: "done"}
	}
	if st := s.steps[i]; st.before != nil && !s.ran[i] {
		s.ran[i] = true
		st.before(v)
	}
	return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{s.steps[i].use}}
}

// results maps each step's name to its tool result as the model saw it.
func (s *script) results(t *testing.T) map[string]fakeapi.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotNil(t, s.last, "the agent was never called")
	calls := s.last.ToolResults()
	out := map[string]fakeapi.Call{}
	for i, c := range calls {
		if i < len(s.steps) {
			out[s.steps[i].name] = c
		}
	}
	return out
}

func readUse(path string) fakeapi.ToolUse {
	return fakeapi.ToolUse{Name: "Read", Input: map[string]any{"file_path": path}}
}

func bashUse(cmd string) fakeapi.ToolUse {
	return fakeapi.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "run"}}
}

// sourceFile writes a file heavy enough to be worth denying (> 150 tokens).
func sourceFile(t *testing.T, path string, lines int) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "def handler_%03d(request):\n    return process(request, option=%d)  # keep\n", i, i)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

const denialMark = "you already read"

func denied(c fakeapi.Call) bool { return strings.Contains(c.Result, denialMark) }

// runScript installs the plugin in a fresh client, runs one -p session
// against the scripted agent and returns the session id.
func runScript(t *testing.T, e *claudecli.Env, prompt string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := append([]string{"-p", "--permission-mode", "bypassPermissions", "--output-format", "json"}, extra...)
	res, err := e.Run(ctx, append(args, prompt)...)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	var out struct {
		SessionID string `json:"session_id"`
		IsError   bool   `json:"is_error"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.False(t, out.IsError, res.Stdout)
	return out.SessionID
}

func readSessionRecord(t *testing.T, e *claudecli.Env, sess string) map[string]any {
	t.Helper()
	var m map[string]any
	data, err := os.ReadFile(envDirs(e).StatePath("sessions", statefile.SafeName(sess), "session.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// recorded lists the files the no-reread hook holds as read in a session's
// main context: the paths of its log's read lines (noreread/<context>/
// reads.log, docs/noreread.md), less those forgotten since.
func recorded(t *testing.T, e *claudecli.Env, sess string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.StateDir(), "noreread", visibility.ContextKey(sess, ""), "reads.log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	held := map[string]bool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "X" {
			clear(held)
			continue
		}
		i := strings.Index(line, ` "`)
		if i < 0 || line[0] != 'r' && line[0] != 'x' {
			continue
		}
		p, err := strconv.Unquote(line[i+1:])
		require.NoError(t, err, line)
		held[p] = line[0] == 'r'
	}
	var paths []string
	for p, ok := range held {
		if ok {
			paths = append(paths, p)
		}
	}
	return paths
}

func envDirs(e *claudecli.Env) xdg.Dirs {
	return xdg.Dirs{State: e.StateDir(), Config: filepath.Join(e.ConfigHome(), "synaxi")}
}

// client is the real Claude Code CLI with the plugin installed, talking to
// a fake upstream whose model is the current script.
type client struct {
	e      *claudecli.Env
	fake   *fakeapi.Server
	mu     sync.Mutex
	cur    *script
	worker *script // answers requests of the synaxi-worker subagent
}

func newClient(t *testing.T, vars ...string) *client {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	c := &client{}
	c.fake = fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		c.mu.Lock()
		s := c.cur
		if c.worker != nil && strings.Contains(v.System, workerSentinel) {
			s = c.worker
		}
		c.mu.Unlock()
		return s.Respond(v)
	})})
	t.Cleanup(func() {
		if t.Failed() {
			for i, rq := range c.fake.Requests() {
				if rq.Invalid != "" {
					t.Logf("request %d rejected by the fake: %s\n%.2000s", i, rq.Invalid, rq.Body)
				}
			}
		}
		c.fake.Close()
	})
	c.e = claudecli.NewEnv(t, c.fake.URL())
	c.e.Vars = append(c.e.Vars, vars...)
	c.e.InstallPlugin(t)
	return c
}

// run runs one -p session with s as the model and returns the session id.
func (c *client) run(t *testing.T, s *script, prompt string, extra ...string) string {
	c.mu.Lock()
	c.cur = s
	c.mu.Unlock()
	return runScript(t, c.e, prompt, extra...)
}

// TestNoRereadRealClient drives the real client through the installed
// plugin: the hooks that run are the real binaries behind the launcher.
func TestNoRereadRealClient(t *testing.T) {
	c := newClient(t)
	e := c.e

	app := filepath.Join(e.Work, "app.py")
	other := filepath.Join(e.Work, "other.py")
	evicted := filepath.Join(e.Work, "evicted.py")
	sourceFile(t, app, 40)
	sourceFile(t, other, 40)
	sourceFile(t, evicted, 40)
	pytest := filepath.Join(e.Work, "bin", "pytest")
	require.NoError(t, os.MkdirAll(filepath.Dir(pytest), 0o755))
	require.NoError(t, os.WriteFile(pytest, []byte("#!/bin/sh\nfor i in $(seq 1 60); do echo \"test_$i PASSED\"; done\necho '60 passed'\n"), 0o755))

	s := newScript(
		step{name: "read", use: readUse(app)},
		step{name: "reread", use: readUse(app)},
		step{name: "proceed", use: bashUse("echo proceeding")},
		step{name: "reissue", use: readUse(app)},
		step{name: "reread-again", use: readUse(app)},
		step{name: "edit", use: fakeapi.ToolUse{Name: "Edit", Input: map[string]any{"file_path": app,
			"old_string": "def handler_001(request):", "new_string": "def handler_one(request):"}}},
		step{name: "read-after-edit", use: readUse(app)},
		step{name: "read-other", use: readUse(other)},
		step{name: "read-other-after-external-change", use: readUse(other), before: func(*fakeapi.View) {
			f, err := os.OpenFile(other, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("# changed behind the agent's back\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		step{name: "shell-read", use: bashUse("cat -n evicted.py | sed -n '1,80p'")},
		step{name: "read-evicted", use: readUse(evicted)},
		step{name: "reread-evicted", use: readUse(evicted), before: func(v *fakeapi.View) {
			sess := v.Header.Get("X-Claude-Code-Session-Id")
			require.NotEmpty(t, sess)
			require.NoError(t, visibility.Write(envDirs(e), &visibility.Export{Session: sess, Updated: time.Now(),
				Files: map[string]visibility.File{evicted: {Evicted: true}}}))
		}},
		step{name: "reread-visible", use: readUse(evicted), before: func(v *fakeapi.View) {
			sess := v.Header.Get("X-Claude-Code-Session-Id")
			require.NoError(t, visibility.Write(envDirs(e), &visibility.Export{Session: sess, Updated: time.Now(),
				Files: map[string]visibility.File{evicted: {Visible: []visibility.Range{{Start: 1, End: 0}}}}}))
		}},
		step{name: "pytest", use: bashUse("PATH=$PWD/bin:$PATH pytest -q tests 2>&1 | tail -40")},
		step{name: "pytest-again", use: bashUse("PATH=$PWD/bin:$PATH pytest -q tests 2>&1 | tail -40")},
		step{name: "loop-1", use: bashUse("git status --short")},
		step{name: "loop-2", use: bashUse("git status --short")},
		step{name: "loop-3", use: bashUse("git  status --short")},
		step{name: "loop-4", use: bashUse("git status --short")},
		step{name: "loop-5", use: bashUse("git status --short")},
		step{name: "loop-6", use: bashUse("git status --short")},
	)
	sess := c.run(t, s, "Work on app.py.")
	r := s.results(t)
	for _, st := range s.steps {
		t.Logf("%-34s error=%-5v %.110q", st.name, r[st.name].IsError, r[st.name].Result)
	}

	assert.False(t, denied(r["read"]), "first read")
	assert.True(t, denied(r["reread"]), "unchanged re-read is denied: %s", r["reread"].Result)
	assert.Contains(t, r["reread"].Result, app)
	assert.Contains(t, r["proceed"].Result, "proceeding", "the agent proceeds after a denial")
	assert.False(t, denied(r["reissue"]), "re-issuing the same read passes")
	assert.Contains(t, r["reissue"].Result, "handler_040")
	assert.True(t, denied(r["reread-again"]), "a later re-read is judged afresh")
	assert.False(t, r["edit"].IsError, "Edit after a denied re-read works: %s", r["edit"].Result)
	assert.False(t, denied(r["read-after-edit"]), "after an Edit the read is allowed")
	assert.Contains(t, r["read-after-edit"].Result, "handler_one")
	assert.False(t, denied(r["read-other"]))
	assert.False(t, denied(r["read-other-after-external-change"]), "an external change allows the read")
	assert.Contains(t, r["read-other-after-external-change"].Result, "behind the agent")
	assert.False(t, denied(r["shell-read"]))
	assert.False(t, denied(r["read-evicted"]), "a Read after only a shell read passes (Edit needs it)")
	assert.False(t, denied(r["reread-evicted"]), "content the proxy evicted may be re-read")
	assert.True(t, denied(r["reread-visible"]), "the same re-read is denied while the proxy shows the file")
	assert.Contains(t, r["pytest"].Result, "60 passed")
	assert.Contains(t, r["pytest-again"].Result, "60 passed", "a test run piped into tail is never blocked")

	var loops []bool
	for i := 1; i <= 6; i++ {
		loops = append(loops, strings.Contains(r[fmt.Sprintf("loop-%d", i)].Result, "with no edit in between, so its result cannot change"))
	}
	assert.Equal(t, []bool{false, false, false, true, false, true}, loops, "the loop breaker denies alternate attempts after 3 runs")
	assert.Contains(t, r["loop-4"].Result, "`git status --short` has run 3 times")

	counts, err := ledger.ReadCounters(envDirs(e), sess)
	require.NoError(t, err)
	assert.Equal(t, int64(3), counts.Denials)
	assert.Equal(t, int64(1), counts.Refunds)
	assert.Equal(t, int64(2), counts.Blocked)
	assert.Positive(t, counts.TokensSaved)
	assert.Equal(t, int64(2), counts.LoopsBroken)
	assert.Equal(t, map[string]int64{"repeat": 1}, counts.Loops, "the governor told the agent at the third run (docs/governor.md)")

	// The status line shows the session's counters (the JSON shape Claude
	// Code sends, platform-facts §3.2; stdin left open like Claude Code may).
	status := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"version":%q,
		"model":{"id":"claude-opus-4-7","display_name":"Opus 4.7"},
		"workspace":{"current_dir":%q,"project_dir":%q,"added_dirs":[]},
		"output_style":{"name":"default"},"cost":{"total_cost_usd":0.01,"total_duration_ms":1000},
		"context_window":{"total_input_tokens":1000,"context_window_size":200000,"used_percentage":null}}`,
		sess, e.Work, claudecli.Version, e.Work, e.Work)
	line := runStatusLine(t, e, status)
	assert.Equal(t, fmt.Sprintf("Opus 4.7 · %s · ⌁ synaxi 2 re-reads blocked (~%s tok) · 2 loops broken · ⟳ 1 loop flagged: repeat · not routed\n",
		filepath.Base(e.Work), tokensText(counts.TokensSaved)), line)
}

// runStatusLine runs the built status line with stdin that is never closed.
func runStatusLine(t *testing.T, e *claudecli.Env, input string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi-statusline"))
	cmd.Env, cmd.Dir = append(e.Environ(), "NO_COLOR=1"), e.Work
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	_, err = w.Write([]byte(input))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the status line waited for EOF")
	}
	w.Close()
	return out.String()
}

// tokensText formats like the status line: 950, 4.1k.
func tokensText(n int64) string {
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

// TestNoRereadAfterCompaction compacts a real session (`/compact` in -p
// mode, resuming it) and checks that the read denied before compaction is
// allowed after it, in the same session resumed once more.
func TestNoRereadAfterCompaction(t *testing.T) {
	c := newClient(t)
	e := c.e
	app := filepath.Join(e.Work, "app.py")
	sourceFile(t, app, 40)

	s := newScript(step{name: "read", use: readUse(app)}, step{name: "reread", use: readUse(app)},
		step{name: "reissue", use: readUse(app)})
	sess := c.run(t, s, "Read app.py.")
	r := s.results(t)
	require.True(t, denied(r["reread"]), "precondition: the re-read is denied before compaction")
	require.False(t, denied(r["reissue"]), "precondition: the escape grant is used up")
	require.Contains(t, recorded(t, e, sess), app, "precondition: the read is recorded")

	// Claude Code asks the model for the summary and keeps what is inside
	// <summary> tags, so the scripted model answers with one.
	s = newScript()
	s.final = "<analysis>Read app.py.</analysis>\n<summary>1. The user asked to read app.py; it was read.</summary>"
	c.run(t, s, "/compact", "--resume", sess)
	assert.Equal(t, "compact", readSessionRecord(t, e, sess)["source"], "SessionStart fired with source compact")
	assert.NotContains(t, recorded(t, e, sess), app, "compaction reset the session's records")

	// The content is gone from the compacted context: reading it again must
	// pass, through the real client and its hooks.
	s = newScript(step{name: "after", use: readUse(app)})
	c.run(t, s, "Read app.py again.", "--resume", sess)
	r = s.results(t)
	assert.False(t, denied(r["after"]), "after compaction the read is allowed")
	assert.Contains(t, recorded(t, e, sess), app, "the read after compaction is recorded again")
}

// TestNoRereadSubagentContext checks that a subagent has its own context:
// a file the main agent read is new to the worker, while a re-read inside
// the worker (once the proxy's export confirms it) and the main agent's own
// re-read are denied.
func TestNoRereadSubagentContext(t *testing.T) {
	c := newClient(t, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1")
	app := filepath.Join(c.e.Work, "app.py")
	sourceFile(t, app, 40)
	// The worker is the context the proxy projects, and the fake upstream
	// listens on loopback where synaxi's proxy would: its re-read is denied
	// only once a visibility export written after the read confirms the
	// content is still visible (written here as the proxy would).
	c.worker = newScript(step{name: "worker-read", use: readUse(app)},
		step{name: "worker-reread-unexported", use: readUse(app)},
		step{name: "worker-reread", use: readUse(app), before: func(v *fakeapi.View) {
			require.NoError(t, visibility.Write(envDirs(c.e), &visibility.Export{
				Session: v.Header.Get("X-Claude-Code-Session-Id"), Agent: v.Header.Get("X-Claude-Code-Agent-Id"), Updated: time.Now(),
				Files: map[string]visibility.File{app: {Visible: []visibility.Range{{Start: 1, End: 0}}}}}))
		}})
	c.worker.final = "worker finished"
	main := newScript(
		step{name: "read", use: readUse(app)},
		step{name: "delegate", use: fakeapi.ToolUse{Name: "Agent", Input: map[string]any{
			"subagent_type": "synaxi:synaxi-worker", "description": "Read app.py",
			"prompt": "## Goal\nRead app.py.\n\n## Proof\n`cat app.py`"}}},
		step{name: "reread", use: readUse(app)},
	)
	sess := c.run(t, main, "Read app.py, then have a worker read it.")
	m, w := main.results(t), c.worker.results(t)

	// The hook's context for the worker is keyed by the same agent id the
	// proxy sees in x-claude-code-agent-id, so the visibility export and the
	// hook's records meet.
	var agentIDs []string
	for _, r := range c.fake.Requests() {
		if id := r.Header.Get("X-Claude-Code-Agent-Id"); r.Kind == "messages" && id != "" {
			agentIDs = append(agentIDs, id)
		}
	}
	require.NotEmpty(t, agentIDs, "the worker's requests carry its agent id")
	assert.DirExists(t, filepath.Join(c.e.StateDir(), "noreread", visibility.ContextKey(sess, agentIDs[0])))
	assert.False(t, denied(m["read"]))
	assert.Contains(t, m["delegate"].Result, "worker finished")
	assert.False(t, denied(w["worker-read"]), "the main agent's read is not in the worker's context: %s", w["worker-read"].Result)
	assert.False(t, denied(w["worker-reread-unexported"]), "no export confirms the worker still sees it: %s", w["worker-reread-unexported"].Result)
	assert.True(t, denied(w["worker-reread"]), "a re-read inside the worker the export confirms is denied: %s", w["worker-reread"].Result)
	assert.True(t, denied(m["reread"]), "the main agent still has its read")
}

// TestStatusLineInRealClient runs the real client interactively under tmux
// (the status line only runs there) with synaxi's status line configured,
// and reads it off the screen: first "watching", then the denial the
// session's no-reread hook counted.
func TestStatusLineInRealClient(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux to run the client interactively")
	}
	c := newClient(t)
	e := c.e
	app := filepath.Join(e.Work, "app.py")
	sourceFile(t, app, 40)
	script := newScript(step{name: "read", use: readUse(app)}, step{name: "cat", use: bashUse("cat app.py")})
	c.mu.Lock()
	c.cur = script
	c.mu.Unlock()

	// The user's settings: synaxi's status line.
	statusBin := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi-statusline")
	mergeJSON(t, filepath.Join(e.ClaudeDir(), "settings.json"), map[string]any{
		"statusLine": map[string]any{"type": "command", "command": statusBin}})
	term := startTTY(t, e, e.Work)
	s := term.waitFor("⌁ synaxi", time.Minute)
	assert.Contains(t, s, fmt.Sprintf("· %s · ⌁ synaxi watching · not routed", filepath.Base(e.Work)))

	term.typeLine("Read app.py, then cat it.")
	s = term.waitFor("re-read blocked", 2*time.Minute)
	assert.Regexp(t, `⌁ synaxi 1 re-read blocked \(~\d+ tok\) · not routed`, s)
	r := script.results(t)
	assert.True(t, denied(r["cat"]), "a shell re-read of a file read with Read is denied")
}

// mergeJSON sets top-level keys of a JSON object file (created if missing).
func mergeJSON(t *testing.T, path string, set map[string]any) {
	t.Helper()
	m := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		require.NoError(t, json.Unmarshal(data, &m), path)
	}
	for k, v := range set {
		m[k] = v
	}
	data, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, data, 0o600))
}
