package reads

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"
)

type env struct {
	t         testing.TB
	s         *Store
	work      string
	sess      string
	agent     string
	agentType string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state")}
	cfg := config.Default().NoReread
	work := filepath.Join(root, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	return &env{t: t, s: New(d, cfg), work: work, sess: "sess-1"}
}

// file writes a file of n lines of about 60 bytes each (n lines ≈ 15n tokens).
func (e *env) file(name string, n int) string {
	p := filepath.Join(e.work, name)
	require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %04d of %s: some representative source text here\n", i, name)
	}
	require.NoError(e.t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func (e *env) input(event, tool string, toolInput map[string]any, resp map[string]any) *hookio.Input {
	m := map[string]any{"session_id": e.sess, "cwd": e.work, "hook_event_name": event,
		"tool_name": tool, "tool_input": toolInput}
	if e.agent != "" {
		m["agent_id"] = e.agent
	}
	if e.agentType != "" {
		m["agent_type"] = e.agentType
	}
	if resp != nil {
		m["tool_response"] = resp
	}
	raw, err := json.Marshal(m)
	require.NoError(e.t, err)
	in, err := hookio.Parse(raw)
	require.NoError(e.t, err)
	return in
}

// read runs a Read through Pre and, if allowed, Post; it reports denial.
func (e *env) read(path string, offset, limit int) (bool, string) {
	e.t.Helper()
	ti := map[string]any{"file_path": path}
	if offset > 0 {
		ti["offset"] = offset
	}
	if limit > 0 {
		ti["limit"] = limit
	}
	d, err := e.s.Pre(e.input("PreToolUse", "Read", ti, nil))
	require.NoError(e.t, err)
	if !d.Deny {
		require.NoError(e.t, e.s.Post(e.input("PostToolUse", "Read", ti, map[string]any{"type": "text"})))
	}
	return d.Deny, d.Reason
}

// bash runs a command through Pre and, if allowed, Post.
func (e *env) bash(cmd string) (bool, string) {
	e.t.Helper()
	ti := map[string]any{"command": cmd}
	d, err := e.s.Pre(e.input("PreToolUse", "Bash", ti, nil))
	require.NoError(e.t, err)
	if !d.Deny {
		e.post(e.input("PostToolUse", "Bash", ti, map[string]any{"stdout": "…", "stderr": ""}))
	}
	return d.Deny, d.Reason
}

// post runs what the post hook runs: Post, then Govern.
func (e *env) post(in *hookio.Input) {
	e.t.Helper()
	require.NoError(e.t, e.s.Post(in))
	_, _, err := e.s.Govern(in)
	require.NoError(e.t, err)
}

func (e *env) edit(tool, path string) {
	key := "file_path"
	if tool == "NotebookEdit" {
		key = "notebook_path"
	}
	e.post(e.input("PostToolUse", tool, map[string]any{key: path}, map[string]any{}))
}

func (e *env) counters() ledger.Counters {
	c, err := ledger.ReadCounters(e.s.Dirs, e.sess)
	if err != nil {
		return ledger.Counters{}
	}
	return *c
}

func TestDenySecondReadAndEscape(t *testing.T) {
	e := newEnv(t)
	p := e.file("pkg/a.go", 100)

	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied, "first read")
	denied, reason := e.read(p, 0, 0)
	require.True(t, denied, "unchanged re-read")
	assert.Contains(t, reason, p)
	assert.Contains(t, reason, "the whole file")
	assert.Contains(t, reason, "unchanged")
	assert.Contains(t, reason, "re-issue")
	c := e.counters()
	assert.Equal(t, int64(1), c.Blocked)
	assert.Equal(t, int64(1), c.Denials)
	saved := c.TokensSaved
	assert.InDelta(t, EstimateTokens(mustRead(t, p)), saved, 0)

	denied, _ = e.read(p, 0, 0)
	assert.False(t, denied, "re-issued read passes through the escape grant")
	c = e.counters()
	assert.Equal(t, int64(0), c.Blocked, "refunded")
	assert.Equal(t, int64(0), c.TokensSaved, "refunded")
	assert.Equal(t, int64(1), c.Refunds)

	denied, _ = e.read(p, 0, 0)
	assert.True(t, denied, "a later re-read is judged afresh")
}

func TestConditions(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(e *env, p string) // after the first read of p (100 lines)
		offset int
		limit  int
		deny   bool
	}{
		{name: "unchanged whole file", deny: true},
		{name: "sub-range of what was read", offset: 10, limit: 50, deny: true},
		{name: "five lines are below the token floor", offset: 1, limit: 5},
		{name: "thirty lines are above it", offset: 1, limit: 30, deny: true},
		{name: "content changed", setup: func(e *env, p string) {
			require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("changed content line here\n", 100)), 0o644))
		}},
		{name: "mtime changed only", setup: func(e *env, p string) {
			later := time.Now().Add(time.Hour)
			require.NoError(t, os.Chtimes(p, later, later))
		}},
		{name: "file removed", setup: func(e *env, p string) { require.NoError(t, os.Remove(p)) }},
		{name: "edited with Edit", setup: func(e *env, p string) { e.edit("Edit", p) }},
		{name: "edited with Write", setup: func(e *env, p string) { e.edit("Write", p) }},
		{name: "edited with MultiEdit", setup: func(e *env, p string) { e.edit("MultiEdit", p) }},
		{name: "edited with NotebookEdit", setup: func(e *env, p string) { e.edit("NotebookEdit", p) }},
		{name: "edited with sed -i", setup: func(e *env, p string) { e.bash("sed -i 's/x/y/' " + p) }},
		{name: "redirect onto it", setup: func(e *env, p string) { e.bash("echo >> " + filepath.Base(p)) }},
		{name: "git checkout", setup: func(e *env, p string) { e.bash("git checkout -- .") }},
		{name: "mv onto it", setup: func(e *env, p string) { e.bash("mv other.go " + p) }},
		{name: "session reset (compaction)", setup: func(e *env, p string) { require.NoError(t, e.s.ResetSession(e.sess)) }},
		{name: "evicted by the proxy", setup: func(e *env, p string) {
			require.NoError(t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Updated: time.Now(),
				Files: map[string]visibility.File{p: {Evicted: true}}}))
		}},
		{name: "proxy shows it fully", setup: func(e *env, p string) {
			require.NoError(t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Updated: time.Now(),
				Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 0}}}}}))
		}, deny: true},
		{name: "proxy shows only part", setup: func(e *env, p string) {
			require.NoError(t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Updated: time.Now(),
				Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 20}}}}}))
		}},
		{name: "projection served after the read without it", setup: func(e *env, p string) {
			require.NoError(t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Updated: time.Now().Add(time.Second),
				Files: map[string]visibility.File{"/other": {}}}))
		}},
		{name: "projection export older than the read", setup: func(e *env, p string) {
			require.NoError(t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Updated: time.Now().Add(-time.Hour),
				Files: map[string]visibility.File{"/other": {}}}))
		}, deny: true},
		{name: "another agent's context", setup: func(e *env, p string) { e.agent = "worker-1" }},
		{name: "disabled", setup: func(e *env, p string) { e.s.Cfg.Enabled = false }},
		{name: "floor raised above the file", setup: func(e *env, p string) { e.s.Cfg.MinTokens = 100000 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.file("a.go", 100)
			e.file("other.go", 3)
			denied, _ := e.read(p, 0, 0)
			require.False(t, denied)
			if c.setup != nil {
				c.setup(e, p)
			}
			denied, _ = e.read(p, c.offset, c.limit)
			assert.Equal(t, c.deny, denied)
		})
	}
}

func TestRanges(t *testing.T) {
	e := newEnv(t)
	p := e.file("r.go", 300)
	denied, _ := e.read(p, 1, 100)
	require.False(t, denied)
	denied, _ = e.read(p, 50, 100) // lines 50-149: 100-149 unseen
	assert.False(t, denied, "reaches unseen lines")
	denied, _ = e.read(p, 20, 60)
	assert.True(t, denied, "inside 1-149")
	denied, _ = e.read(p, 140, 3)
	assert.False(t, denied, "3 lines are below the token floor")
	denied, reason := e.read(p, 0, 0)
	assert.False(t, denied, "whole file reaches 150-300")
	assert.Empty(t, reason)
}

func TestTinyFileNeverDenied(t *testing.T) {
	e := newEnv(t)
	p := e.file("tiny.go", 5)
	e.read(p, 0, 0)
	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied)
}

func TestShellReads(t *testing.T) {
	e := newEnv(t)
	a := e.file("a.py", 80)
	b := e.file("b.py", 80)
	denied, _ := e.bash("cat a.py; cat b.py")
	require.False(t, denied)
	denied, reason := e.bash("cat a.py && cat b.py")
	require.True(t, denied, "both unchanged")
	assert.Contains(t, reason, a)
	assert.Contains(t, reason, b)
	denied, _ = e.bash("cat a.py && cat b.py")
	assert.False(t, denied, "re-issue passes for both")
	assert.Equal(t, int64(2), e.counters().Refunds)

	denied, _ = e.bash("sed -n '10,40p' a.py")
	assert.True(t, denied, "sub-range of a whole read")
	denied, _ = e.bash("cat -n a.py | sed -n '10,40p'")
	assert.False(t, denied, "the same lines re-issued another way use the grant")

	e.file("new.py", 80)
	denied, _ = e.bash("cat a.py; cat new.py")
	assert.False(t, denied, "a command that also shows new content passes")
	denied, _ = e.bash("cat a.py; pytest -q")
	assert.False(t, denied, "a command that also runs something passes")

	// A shell read does not satisfy Edit's need for a Read: the Read tool passes.
	denied, _ = e.read(b, 0, 0)
	assert.False(t, denied)
	denied, _ = e.read(b, 0, 0)
	assert.True(t, denied, "after a Read-tool read, a re-read is denied")
}

func TestNeverBlocked(t *testing.T) {
	e := newEnv(t)
	e.file("a.go", 100)
	e.bash("cat a.go")
	for _, cmd := range []string{
		"pytest tests/ -x 2>&1 | tail -40",
		"cat a.go | grep func",
		"cat a.go > copy.go",
		"curl -s http://x/a.go | sed -n '1,20p'",
		"cat <<EOF > a2.go\nx\nEOF",
	} {
		denied, _ := e.bash(cmd)
		assert.False(t, denied, cmd)
	}
	denied, _ := e.bash("pytest tests/ -x 2>&1 | tail -40")
	assert.False(t, denied, "second identical test run")
}

func TestTailRecorded(t *testing.T) {
	e := newEnv(t)
	p := e.file("log.txt", 200)
	denied, _ := e.bash("tail -n 50 log.txt")
	require.False(t, denied)
	denied, _ = e.bash("sed -n '160,200p' log.txt")
	assert.True(t, denied, "inside the last 50 lines")
	c, err := e.s.Load(e.sess, "")
	require.NoError(t, err)
	assert.Equal(t, []span{{151, 200}}, c.Files[p].Spans)
}

func TestTruncatedBashNotRecorded(t *testing.T) {
	e := newEnv(t)
	p := e.file("big.txt", 1000)
	ti := map[string]any{"command": "cat big.txt"}
	e.post(e.input("PostToolUse", "Bash", ti, map[string]any{"stdout": strings.Repeat("x", BashOutputLimit)}))
	c, err := e.s.Load(e.sess, "")
	require.NoError(t, err)
	assert.NotContains(t, c.Files, p)
}

func TestLoopBreaker(t *testing.T) {
	e := newEnv(t)
	e.file("a.go", 3)
	const cmd = "go   test ./..."
	var got []bool
	for i := 0; i < 7; i++ {
		denied, reason := e.bash(cmd)
		got = append(got, denied)
		if denied {
			assert.Contains(t, reason, "go test ./...")
			assert.Contains(t, reason, "no edit")
		}
	}
	assert.Equal(t, []bool{false, false, false, true, false, true, false}, got)
	assert.Equal(t, int64(2), e.counters().LoopsBroken)

	e.edit("Edit", filepath.Join(e.work, "a.go"))
	for i := 0; i < 3; i++ {
		denied, _ := e.bash(cmd)
		assert.False(t, denied, "an edit resets the count")
	}
	denied, _ := e.bash(cmd)
	assert.True(t, denied)
	e.bash("echo x > a.go")
	denied, _ = e.bash(cmd)
	assert.False(t, denied, "a shell edit resets the count")

	e.s.Cfg.LoopThreshold = 0
	for i := 0; i < 5; i++ {
		denied, _ := e.bash("ls")
		assert.False(t, denied, "loop breaker off")
	}
	e.s.Cfg.LoopThreshold = 3
	e.s.Mode = governor.Off
	for i := 0; i < 5; i++ {
		denied, _ := e.bash("pwd")
		assert.False(t, denied, "governor off: loop breaker off")
	}
}

func TestResetSessionAllContexts(t *testing.T) {
	e := newEnv(t)
	p := e.file("a.go", 100)
	e.read(p, 0, 0)
	e.agent = "w1"
	e.read(p, 0, 0)
	require.NoError(t, e.s.ResetSession(e.sess))
	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied, "worker context reset")
	e.agent = ""
	denied, _ = e.read(p, 0, 0)
	assert.False(t, denied, "main context reset")
}

func TestConcurrentHooks(t *testing.T) {
	e := newEnv(t)
	const n = 24
	paths := make([]string, n)
	for i := range paths {
		paths[i] = e.file(fmt.Sprintf("f%02d.go", i), 100)
	}
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ti := map[string]any{"file_path": p}
			assert.NoError(t, e.s.Post(e.input("PostToolUse", "Read", ti, nil)))
		}()
	}
	wg.Wait()
	c, err := e.s.Load(e.sess, "")
	require.NoError(t, err)
	assert.Len(t, c.Files, n, "no recorded read lost")

	// Parallel re-reads of the same file: every denial is counted once and
	// each holds its grant consistently.
	var mu sync.Mutex
	denials := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.s.Pre(e.input("PreToolUse", "Read", map[string]any{"file_path": paths[0]}, nil))
			assert.NoError(t, err)
			if d.Deny {
				mu.Lock()
				denials++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	cs := e.counters()
	assert.Equal(t, int64(denials), cs.Denials)
	assert.Equal(t, cs.Denials-cs.Refunds, cs.Blocked)
	assert.Equal(t, (n+1)/2, denials, "deny, pass, deny, pass …")
}

func TestDescribe(t *testing.T) {
	assert.Equal(t, "the whole file", describe([]span{{1, 50}}, 50))
	assert.Equal(t, "lines 1-20, 30, 40-50", describe([]span{{1, 20}, {30, 30}, {40, 50}}, 60))
}

func TestCovered(t *testing.T) {
	assert.True(t, covered([]span{{3, 9}}, []span{{1, 5}, {6, 10}}))
	assert.False(t, covered([]span{{3, 12}}, []span{{1, 10}}))
	assert.True(t, covered([]span{{1, 2}, {5, 6}}, []span{{1, 2}, {4, 8}}))
	assert.False(t, covered([]span{{1, 2}}, nil))
}

func mustRead(t *testing.T, p string) []byte {
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return data
}

// TestCorruptStateFailsOpen: a log line that does not parse (a writer
// killed mid-append, a file not written by us) counts as no record, and a
// governor file that does not decode is replaced by the next update.
func TestCorruptStateFailsOpen(t *testing.T) {
	e := newEnv(t)
	p := e.file("a.go", 100)
	e.read(p, 0, 0)
	dir := Dir(e.s.Dirs, e.sess, "")
	require.NoError(t, os.WriteFile(logPath(dir), []byte("r 1 2 3 t 4 1-0 \"/a.go\"\n{\"path\":\nr 5"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, governorName), []byte("not json"), 0o600))

	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied, "an unreadable record allows the read")
	denied, _ = e.bash("ls")
	assert.False(t, denied)
	denied, _ = e.read(p, 0, 0)
	assert.True(t, denied, "the read re-recorded the file")
	c, err := e.s.Load(e.sess, "")
	require.NoError(t, err)
	assert.Equal(t, 1, runsOf(c.Governor, "ls"), "the governor's file was replaced")
	assert.Contains(t, c.Files, "/a.go", "the well-formed line before the damage still counts")
}

// TestOldRecordsIgnored: state written before the log (one f-*.json record
// per file) is not trusted: such a file's re-read passes, is recorded in the
// log, and a reset removes the old files.
func TestOldRecordsIgnored(t *testing.T) {
	e := newEnv(t)
	p := e.file("a.go", 100)
	dir := Dir(e.s.Dirs, e.sess, "")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	st, err := os.Stat(p)
	require.NoError(t, err)
	old := fmt.Sprintf(`{"path":%q,"size":%d,"mtime_ns":%d,"spans":[[1,0]],"via_tool":true,"at":"2026-12-01T10:00:00Z"}`, p, st.Size(), st.ModTime().UnixNano())
	oldFile := filepath.Join(dir, "f-0123456789abcdef01234567.json")
	require.NoError(t, os.WriteFile(oldFile, []byte(old), 0o600))

	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied, "an old record does not deny")
	denied, _ = e.read(p, 0, 0)
	assert.True(t, denied, "the read was recorded in the log")
	require.NoError(t, e.s.ResetSession(e.sess))
	assert.NoFileExists(t, oldFile)
	assert.NoFileExists(t, logPath(dir))
}

// TestProjectedContext: in a context the proxy may project, a re-read is
// denied only when the context's visibility export, written after the read,
// says the lines are still visible; a missing, stale, unreadable or
// unconfirming export allows it (issue 8). Only synaxi's proxy (the port it
// recorded) projects: a context routed through another loopback gateway is
// judged by its transcript, so an unchanged re-read there is denied.
func TestProjectedContext(t *testing.T) {
	const proxy, gateway = "http://127.0.0.1:41234", "http://127.0.0.1:41235"
	fresh := func() time.Time { return time.Now().Add(time.Second) }
	visible := func(rs ...visibility.Range) visibility.File { return visibility.File{Visible: rs} }
	cases := []struct {
		name       string
		agentType  string
		baseURL    string
		projectAll bool
		export     func(e *env, p string) // nil: none written
		denied     bool
	}{
		{"main context, no export", "", proxy, false, nil, true},
		{"worker, direct to the API, no export", "synaxi:synaxi-worker", "", false, nil, true},
		{"worker, first-party base URL, no export", "synaxi:synaxi-worker", "https://api.anthropic.com", false, nil, true},
		{"worker, remote gateway, no export", "synaxi-worker", "https://llm.example.com", false, nil, true},
		{"worker via the proxy, export not written (or in another state dir)", "synaxi:synaxi-worker", proxy, false, nil, false},
		{"worker via localhost, no export", "synaxi:synaxi-worker", "http://localhost:41234/", false, nil, false},
		// A worker through a loopback URL the hook does not know as synaxi's may
		// be synaxi's proxy keeping its state elsewhere: allowed, never denied blind.
		{"worker via another loopback gateway, no export", "synaxi:synaxi-worker", gateway, false, nil, false},
		{"worker via the proxy, export confirms", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(fresh(), map[string]visibility.File{p: visible(visibility.Range{Start: 1, End: 0})})
		}, true},
		{"worker via the proxy, stale export", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(time.Now().Add(-time.Hour), map[string]visibility.File{p: visible(visibility.Range{Start: 1, End: 0})})
		}, false},
		{"worker via the proxy, export shows part", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(fresh(), map[string]visibility.File{p: visible(visibility.Range{Start: 1, End: 20})})
		}, false},
		{"worker via the proxy, export lists no ranges", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(fresh(), map[string]visibility.File{p: {}})
		}, false},
		{"worker via the proxy, export says evicted", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(fresh(), map[string]visibility.File{p: {Evicted: true}})
		}, false},
		{"worker via the proxy, export omits the file", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			e.export(fresh(), map[string]visibility.File{"/elsewhere.go": visible(visibility.Range{Start: 1, End: 0})})
		}, false},
		{"worker via the proxy, corrupt export", "synaxi:synaxi-worker", proxy, false, func(e *env, p string) {
			path := visibility.Path(e.s.Dirs, e.sess, e.agent)
			require.NoError(e.t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(e.t, os.WriteFile(path, []byte(`{"files":`), 0o600))
		}, false},
		{"worker, no base URL, but the session's traffic is exported", "synaxi:synaxi-worker", "", false, func(e *env, p string) {
			require.NoError(e.t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Agent: "other-agent", Updated: fresh(),
				Files: map[string]visibility.File{p: visible(visibility.Range{Start: 1, End: 0})}}))
		}, false},
		{"project_all, main context via the proxy, no export", "", proxy, true, nil, false},
		{"project_all, main context via another loopback gateway, no export", "", gateway, true, nil, true},
		{"project_all, main context via localhost on another port, no export", "", "http://localhost:8080/", true, nil, true},
		{"project_all, main context via another loopback gateway, only the worker exported", "", gateway, true, func(e *env, p string) {
			require.NoError(e.t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Agent: "other-agent", Updated: fresh(),
				Files: map[string]visibility.File{p: visible(visibility.Range{Start: 1, End: 0})}}))
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.agent, e.agentType = "a1", c.agentType
			e.s.BaseURL, e.s.ProjectAll = c.baseURL, c.projectAll
			require.NoError(t, os.MkdirAll(filepath.Dir(proxyinfo.PortPath(e.s.Dirs)), 0o700))
			require.NoError(t, os.WriteFile(proxyinfo.PortPath(e.s.Dirs), []byte("41234\n"), 0o600))
			p := e.file("pkg/a.go", 100)
			denied, _ := e.read(p, 0, 0)
			require.False(t, denied, "first read")
			if c.export != nil {
				c.export(e, p)
			}
			denied, reason := e.read(p, 0, 0)
			assert.Equal(t, c.denied, denied, reason)
		})
	}
}

// export writes the visibility export of e's context.
func (e *env) export(updated time.Time, files map[string]visibility.File) {
	e.t.Helper()
	require.NoError(e.t, visibility.Write(e.s.Dirs, &visibility.Export{Session: e.sess, Agent: e.agent, Updated: updated, Files: files}))
}

func TestLoopback(t *testing.T) {
	for url, want := range map[string]bool{
		"http://127.0.0.1:8787": true, "http://localhost:9": true, "http://[::1]:9/": true, "http://127.0.0.2:80": true,
		"https://api.anthropic.com": false, "http://10.0.0.1:8080": false, "": false, "127.0.0.1:8787": false, "::": false,
	} {
		assert.Equal(t, want, loopback(url), url)
	}
}
