package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// tx writes transcript lines the way Claude Code does: one record per
// content block of a response, tool results as user records.
type tx struct {
	lines []string
	at    time.Time
}

func (x *tx) add(typ string, message map[string]any) {
	x.at = x.at.Add(7 * time.Second)
	b, _ := json.Marshal(map[string]any{"type": typ, "uuid": fmt.Sprint(len(x.lines)), "timestamp": x.at.Format(time.RFC3339Nano), "message": message})
	x.lines = append(x.lines, string(b))
}

func (x *tx) user(blocks ...any) {
	x.add("user", map[string]any{"role": "user", "content": blocks})
}

func (x *tx) assistant(id string, blocks ...any) {
	x.add("assistant", map[string]any{"id": id, "model": "claude-sonnet-4-5-20250929", "role": "assistant", "content": blocks})
}

// compact writes a compaction boundary: the client starts a new history.
func (x *tx) compact() {
	x.at = x.at.Add(time.Minute)
	b, _ := json.Marshal(map[string]any{"type": "system", "subtype": "compact_boundary", "timestamp": x.at.Format(time.RFC3339Nano)})
	x.lines = append(x.lines, string(b))
}

// broken is a line that does not parse, as in the m-claude fixture (an
// invalid escape in a tool result).
func (x *tx) broken() { x.lines = append(x.lines, `{"type":"user","message":{"content":"M\[x]"}}`) }

func (x *tx) bytes() []byte { return []byte(strings.Join(x.lines, "\n") + "\n") }

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func call(id, cmd string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": cmd}}
}

func result(id, out string) map[string]any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": out}
}

func build(t *testing.T, data []byte) (built, transcript.Stats) {
	t.Helper()
	r := transcript.NewReader(bytes.NewReader(data))
	b, err := requests(r)
	require.NoError(t, err)
	return b, r.Stats()
}

// shape renders a request's history compactly: one element per message,
// its role's initial and its blocks (text, call id, result id with "!"
// for an error result).
func shape(r request) []string {
	var out []string
	for _, m := range r.messages {
		var parts []string
		for _, b := range m.Content {
			g := gjson.ParseBytes(b)
			switch g.Get("type").String() {
			case "text":
				parts = append(parts, g.Get("text").String())
			case "tool_use":
				parts = append(parts, "use:"+g.Get("id").String())
			case "tool_result":
				mark := ""
				if g.Get("is_error").Bool() {
					mark = "!"
				}
				parts = append(parts, "res:"+g.Get("tool_use_id").String()+mark)
			}
		}
		out = append(out, m.Role[:1]+"["+strings.Join(parts, " ")+"]")
	}
	return out
}

func TestRequestsRepairLostResults(t *testing.T) {
	var x tx
	x.user(text("fix the build"))
	x.assistant("m1", text("looking"))
	x.assistant("m1", call("t1", "make"))
	x.user(result("t1", "error: x"))
	x.assistant("m2", call("t2", "cat x.go"))
	x.broken() // t2's result
	x.assistant("m3", text("x.go is wrong"))
	x.assistant("m3", call("t3", "go vet"), call("t4", "go test"))
	x.user(result("t4", "ok")) // t3's result lost without a trace
	x.user(text("also run lint"))
	x.assistant("m4", call("t5", "make lint"))
	x.user(result("t5", "clean"))
	x.assistant("m5", call("t6", "git commit")) // its result is the last, lost, line
	x.broken()
	b, st := build(t, x.bytes())

	assert.Equal(t, 2, st.Skipped(), "the lines that do not parse are counted by the reader")
	require.Len(t, b.reqs, 5, "one request per distinct assistant message")
	assert.Equal(t, 2, b.repaired, "t2 and t3")
	assert.Zero(t, b.dropped)
	assert.Equal(t, []string{"u[fix the build]"}, shape(b.reqs[0]))
	// The request after a lost result ends with the client's answer to the
	// call: an error result standing for it.
	assert.Equal(t, []string{"u[fix the build]", "a[looking use:t1]", "u[res:t1]", "a[use:t2]", "u[res:t2!]"}, shape(b.reqs[2]))
	// A lost result among parallel calls: after the results present,
	// before the user's words.
	assert.Equal(t, []string{"u[fix the build]", "a[looking use:t1]", "u[res:t1]", "a[use:t2]", "u[res:t2!]",
		"a[x.go is wrong use:t3 use:t4]", "u[res:t4 res:t3! also run lint]", "a[use:t5]", "u[res:t5]"}, shape(b.reqs[4]))
	// The last call's result is lost but no request follows it: nothing
	// was sent after the model made the call, so nothing is rebuilt.
	for _, r := range b.reqs {
		assert.Equal(t, "user", r.messages[len(r.messages)-1].Role)
	}
	lost := gjson.ParseBytes(b.reqs[2].messages[4].Content[0])
	assert.True(t, lost.Get("is_error").Bool())
	assert.Contains(t, lost.Get("content").String(), "not recorded in the transcript")

	c, err := loadClient()
	require.NoError(t, err)
	for i, r := range b.reqs {
		require.NoError(t, validate.Request(c.baselineBody(r)), "request %d", i)
	}
}

func TestRequestsStrayResults(t *testing.T) {
	var x tx
	x.user(text("go"))
	x.assistant("m1", text("reading"))
	x.broken() // the call of the next result
	x.user(result("t1", "contents"), text("and?"))
	x.assistant("m2", call("t2", "ls"))
	x.user(result("t2", "a b"))
	x.user(result("t2", "a b")) // written twice
	x.assistant("m3", text("done"))
	x.user(result("t9", "late")) // only a stray result
	x.assistant("m4", text("more"))
	x.user(text("thanks"))
	x.assistant("m5", text("bye"))
	b, _ := build(t, x.bytes())
	assert.Equal(t, 3, b.dropped)
	assert.Zero(t, b.repaired)
	require.Len(t, b.reqs, 4, "m4 has no request of its own: it joins m3")
	assert.Equal(t, []string{"u[go]", "a[reading]", "u[and?]", "a[use:t2]", "u[res:t2]", "a[done more]", "u[thanks]"}, shape(b.reqs[3]))
}

// TestRunCountsRepairs replays a transcript with a lost result and a
// compaction through the engine: both sides valid, the report counts the
// repair and the line that did not parse, and its new content is the
// baseline requests' growth, each history's first request whole.
func TestRunCountsRepairs(t *testing.T) {
	var x tx
	x.user(text("survey the repository"))
	for i := range 12 {
		id := fmt.Sprintf("t%d", i)
		if i == 8 {
			x.compact()
			x.user(text("This session is being continued from a previous conversation. Summary: files 0-7 read."))
		}
		x.assistant(fmt.Sprintf("m%d", i), call(id, fmt.Sprintf("cat file%d.go", i)))
		if i == 5 {
			x.broken()
			continue
		}
		x.user(result(id, strings.Repeat(fmt.Sprintf("line %d of file %d\n", i, i), 200)))
	}
	x.assistant("end", text("done"))
	path := filepath.Join(t.TempDir(), "lost.jsonl")
	require.NoError(t, os.WriteFile(path, x.bytes(), 0o600))
	var dump bytes.Buffer
	var resets []bool
	rep, err := Run(context.Background(), path, Options{Scope: config.ScopeAll, Dump: &dump}, func(b Body) { resets = append(resets, b.Reset) })
	require.NoError(t, err)
	assert.Equal(t, 13, rep.Requests)
	assert.Equal(t, []bool{false, false, false, false, false, false, false, false, true, false, false, false, false}, resets)
	// The compaction comes a minute after the request before it: the
	// baseline reads the tools and system prompt from the cache, so they
	// are not new content.
	c, err := loadClient()
	require.NoError(t, err)
	keep := c.prefixTokens(tokens.EstimateBytes)
	assert.Greater(t, keep, int64(1000))
	var want, prev int64
	i := 0
	for line := range bytes.Lines(dump.Bytes()) {
		var d DumpLine
		require.NoError(t, json.Unmarshal(line, &d))
		if d.Side != "baseline" {
			continue
		}
		if resets[i] {
			assert.Equal(t, keep, d.Usage.Read, "request %d reads the tools and system prompt", i)
			prev = keep
		}
		want += max(0, d.Usage.Total()-prev)
		prev = d.Usage.Total()
		i++
	}
	assert.Equal(t, want, rep.NewContentTokens)
	assert.InDelta(t, 1-float64(want)/float64(rep.Projected.RawTokens), rep.HitCeiling, 1e-12)
	assert.LessOrEqual(t, rep.Baseline.CacheHitRatio, hitCeiling(want, float64(rep.Baseline.RawTokens)))
	assert.LessOrEqual(t, rep.Projected.CacheHitRatio, rep.HitCeiling)
	assert.Equal(t, 1, rep.RepairedResults)
	assert.Equal(t, 1, rep.SkippedLines)
	assert.Zero(t, rep.Baseline.InvalidRequests, rep.Baseline.FirstInvalid)
	assert.Zero(t, rep.Projected.InvalidRequests, rep.Projected.FirstInvalid)

	var out, errb bytes.Buffer
	require.Equal(t, 0, Main([]string{path, "--json"}, &out, &errb), errb.String())
	assert.Equal(t, int64(1), gjson.GetBytes(out.Bytes(), "repaired_results").Int())
	assert.Equal(t, int64(1), gjson.GetBytes(out.Bytes(), "rows.0.skipped_lines").Int())
	out.Reset()
	require.Equal(t, 0, Main([]string{path}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "rebuilt requests: 1 line does not parse; 1 tool call has no result in the transcript")
	out.Reset()
	require.Equal(t, 0, Main([]string{path, path, "--markdown"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "\n- "+filepath.Base(filepath.Dir(path))+"/lost: 1 line does not parse; 1 tool call has no result")
}

// FuzzRequests feeds the request builder arbitrary transcripts: it never
// fails on one, and every request it rebuilds ends with a user message,
// alternates roles and answers each tool call, first thing in the next
// message, exactly once.
func FuzzRequests(f *testing.F) {
	var x tx
	x.user(text("go"))
	x.assistant("m1", call("t1", "ls"), call("t2", "pwd"))
	x.user(result("t2", "/"))
	x.user(result("t7", "stray"))
	x.assistant("m2", call("t3", "make"))
	x.broken()
	x.assistant("m3", text("ok"))
	f.Add(x.bytes())
	data, err := os.ReadFile(fixture(f, mainSession))
	require.NoError(f, err)
	// Lines 5-9, 14, 15, 32 and 33 of the real session: a task, a
	// response in four records, three parallel calls, one of their
	// results (the other two left out: lost), the next call.
	lines := bytes.SplitAfter(data, []byte("\n"))
	var real []byte
	for _, n := range []int{5, 6, 7, 8, 9, 14, 15, 32, 33} {
		real = append(real, lines[n-1]...)
	}
	f.Add(real)
	f.Add([]byte(`{"type":"assistant","message":{"id":"a","content":[{"type":"tool_use","id":"x","input":{}}]}}` + "\n" +
		`{"type":"assistant","message":{"id":"b","content":"hi"}}` + "\n" + `{"type":"system","subtype":"compact_boundary"}`))
	c, err := loadClient()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := requests(transcript.NewReader(bytes.NewReader(in)))
		if err != nil {
			t.Fatalf("requests: %v", err)
		}
		for i, r := range b.reqs {
			if err := paired(r.messages); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if body := c.baselineBody(r); !json.Valid(body) {
				t.Fatalf("request %d: baseline body is not JSON", i)
			}
		}
	})
}

// paired checks the builder's promise about one history.
func paired(h []msg) error {
	if len(h) == 0 || h[len(h)-1].Role != "user" {
		return fmt.Errorf("does not end with a user message")
	}
	var calls []string
	for i, m := range h {
		if i > 0 && h[i-1].Role == m.Role {
			return fmt.Errorf("messages %d and %d are both %s", i-1, i, m.Role)
		}
		if m.Role == "assistant" {
			calls = toolUseIDs(m.Content)
			continue
		}
		pending := map[string]bool{}
		for _, id := range calls {
			pending[id] = true
		}
		other := false
		for _, blk := range m.Content {
			g := gjson.ParseBytes(blk)
			if g.Get("type").String() != "tool_result" {
				other = true
				continue
			}
			id := g.Get("tool_use_id").String()
			if other || !pending[id] {
				return fmt.Errorf("message %d: result %q out of place or unanswering", i, id)
			}
			delete(pending, id)
		}
		if len(pending) > 0 || (len(m.Content) == 0) {
			return fmt.Errorf("message %d: calls unanswered (%v) or empty", i, pending)
		}
		calls = nil
	}
	return nil
}

func TestNewContentAndCeiling(t *testing.T) {
	c := newContent{keep: 300}
	for _, r := range []struct {
		raw   int64
		reset bool
	}{
		{1000, false}, // the first request: all of it is new
		{1500, false},
		{1400, false}, // shorter (never negative)
		{2000, false},
		{800, true}, // a compaction: all but the tools and system prompt
		{1200, false},
		{200, true}, // shorter than the shared prefix
		{900, false},
	} {
		c.add(r.raw, r.reset)
	}
	assert.Equal(t, int64(1000+500+0+600+500+400+0+700), c.n)
	assert.InDelta(t, 0.63, hitCeiling(c.n, 10000), 1e-12)
	// The baseline sent 9,000 tokens: at 3.5× less (2,571) the new
	// content alone does not fit, so no hit ratio is reachable.
	assert.Zero(t, hitCeiling(c.n, 9000/TargetRawReduction))
	assert.InDelta(t, 1-3.5*3700.0/46200, hitCeiling(c.n, 46200/TargetRawReduction), 1e-12)
	assert.Zero(t, hitCeiling(0, 0))
	assert.Equal(t, 1.0, hitCeiling(0, 10))
}

// mark sets a transcript flag (isSidechain, isCompactSummary) on the last
// line written.
func (x *tx) mark(flag string) {
	var m map[string]any
	_ = json.Unmarshal([]byte(x.lines[len(x.lines)-1]), &m)
	m[flag] = true
	b, _ := json.Marshal(m)
	x.lines[len(x.lines)-1] = string(b)
}

// TestRequestsOlderShapes: Claude Code 1.x logs a Task subagent's turns
// inline (left out of the main session's requests, kept in a subagent's
// own file) and marks a compaction by its summary alone (a new history);
// a continued session's file begins with an answer (a placeholder user
// turn stands before it).
func TestRequestsOlderShapes(t *testing.T) {
	placeholder := gjson.GetBytes(orphanText, "text").String()
	for _, tc := range []struct {
		name  string
		write func(x *tx)
		want  [][]string // each request's shape
		count func(b built) int
		n     int
	}{
		{"inline sidechain left out", func(x *tx) {
			x.user(text("go"))
			x.assistant("a1", call("t1", "ls"))
			x.user(text("subagent prompt"))
			x.mark("isSidechain")
			x.assistant("s1", text("subagent answer"))
			x.mark("isSidechain")
			x.user(result("t1", "out"))
			x.assistant("a2", text("done"))
		}, [][]string{{"u[go]"}, {"u[go]", "a[use:t1]", "u[res:t1]"}}, func(b built) int { return b.sidechain }, 2},
		{"a subagent's own file is all sidechain", func(x *tx) {
			x.user(text("task"))
			x.mark("isSidechain")
			x.assistant("s1", text("answer"))
			x.mark("isSidechain")
		}, [][]string{{"u[task]"}}, func(b built) int { return b.sidechain }, 0},
		{"a summary record starts a new history", func(x *tx) {
			x.user(text("first"))
			x.assistant("a1", text("one"))
			x.user(text("Summary: earlier work"))
			x.mark("isCompactSummary")
			x.assistant("a2", text("two"))
		}, [][]string{{"u[first]"}, {"u[Summary: earlier work]"}}, func(b built) int { return len(b.summaries) }, 1},
		{"a continued session begins with an answer", func(x *tx) {
			x.assistant("a0", call("t0", "make"))
			x.user(result("t0", "ok"))
			x.assistant("a1", text("built"))
		}, [][]string{{"u[" + placeholder + "]"}, {"u[" + placeholder + "]", "a[use:t0]", "u[res:t0]"}}, func(b built) int { return b.orphans }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x tx
			tc.write(&x)
			b, _ := build(t, x.bytes())
			var got [][]string
			for _, r := range b.reqs {
				got = append(got, shape(r))
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.n, tc.count(b))
			for _, r := range b.reqs {
				assert.NoError(t, paired(r.messages))
			}
		})
	}
}
