package governor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cmd(c string, failed bool, out string) Call {
	return Call{Kind: Command, Command: c, Failed: failed, Output: out}
}

func edit(path, old, new string) Call {
	return Call{Kind: Edit, Path: path, Pairs: []Pair{{Old: old, New: new}}}
}

func write(path, content string) Call {
	return Call{Kind: Edit, Path: path, Whole: true, Pairs: []Pair{{New: content}}}
}

func read(path string) Call { return Call{Kind: Read, Path: path} }

// run feeds calls to a fresh state and returns the rule each call fired
// ("" for none).
func run(th Thresholds, calls ...Call) []Rule {
	var s State
	out := make([]Rule, len(calls))
	for i, c := range calls {
		if f, ok := s.Observe(c, th); ok {
			out[i] = f.Rule
			// The state survives a JSON round trip between hook calls.
			data, err := json.Marshal(&s)
			if err != nil {
				panic(err)
			}
			s = State{}
			if err := json.Unmarshal(data, &s); err != nil {
				panic(err)
			}
		}
	}
	return out
}

func TestRules(t *testing.T) {
	th := Thresholds{Repeat: 3, Unchanged: 3, Revert: 1, Reread: 3, StallCalls: 3, StallTokens: 1000}
	fail := func(out string) Call { return cmd("go test ./...", true, out) }
	tests := []struct {
		name  string
		calls []Call
		want  []Rule
	}{
		{"repeat with no edit between", []Call{cmd("ls  -l", false, "a"), cmd("ls -l", false, "a"), cmd("ls -l\n", false, "a"), cmd("ls -l", false, "a")},
			[]Rule{"", "", Repeat, ""}},
		{"a different output breaks it (the world changed)", []Call{cmd("git status", false, "dirty"), cmd("git status", false, "dirty"), cmd("git commit -m x", false, ""), cmd("git status", false, "clean")},
			[]Rule{"", "", "", ""}},
		{"an edit breaks the repeat streak", []Call{cmd("ls", false, ""), cmd("ls", false, ""), edit("/a", "x", "y"), cmd("ls", false, ""), cmd("ls", false, "")},
			[]Rule{"", "", "", "", ""}},
		{"a shell edit breaks it too", []Call{cmd("ls", false, ""), cmd("ls", false, ""), {Kind: Command, Command: "sed -i s/a/b/ f", Edits: []string{"/f"}}, cmd("ls", false, "")},
			[]Rule{"", "", "", ""}},
		{"same failure across edits", []Call{fail("FAIL x 0.03s"), edit("/a", "1", "2"), fail("FAIL x 0.05s"), edit("/a", "2", "3"), fail("FAIL x 1.10s")},
			[]Rule{"", "", "", "", Unchanged}},
		{"a different failure restarts the count", []Call{fail("FAIL 3 tests"), edit("/a", "1", "2"), fail("FAIL 2 tests"), edit("/a", "2", "3"), fail("FAIL 2 tests")},
			[]Rule{"", "", "", "", ""}},
		{"a success restarts the count", []Call{fail("F"), edit("/a", "1", "2"), fail("F"), edit("/a", "2", "3"), cmd("go test ./...", false, "ok"), edit("/a", "3", "4"), fail("F")},
			[]Rule{"", "", "", "", "", "", ""}},
		{"repeat wins over unchanged on the same call", []Call{fail("F"), fail("F"), fail("F")},
			[]Rule{"", "", Repeat}},
		{"edit then its inverse", []Call{edit("/a", "x := 1", "x := 2"), edit("/a", "x := 2", "x := 1")},
			[]Rule{"", Revert}},
		{"the inverse on another file is no revert", []Call{edit("/a", "x := 1", "x := 2"), edit("/b", "x := 2", "x := 1")},
			[]Rule{"", ""}},
		{"a write back to the old content", []Call{write("/w", "A"), write("/w", "B"), write("/w", "A")},
			[]Rule{"", "", Revert}},
		{"the same write twice is no revert", []Call{write("/w", "A"), write("/w", "A")},
			[]Rule{"", ""}},
		{"reread of the same lines", []Call{read("/r"), read("/r"), read("/r")},
			[]Rule{"", "", Reread}},
		{"other lines are another read", []Call{read("/r"), {Kind: Read, Path: "/r", Lines: "10+5"}, read("/r")},
			[]Rule{"", "", ""}},
		{"an edit of the file forgets its reads", []Call{read("/r"), read("/r"), edit("/r", "a", "b"), read("/r")},
			[]Rule{"", "", "", ""}},
		{"a read of changed content is no reread", []Call{{Kind: Read, Path: "/log", Output: "a"}, {Kind: Read, Path: "/log", Output: "ab"}, {Kind: Read, Path: "/log", Output: "abc"}},
			[]Rule{"", "", ""}},
		{"an edit elsewhere keeps them", []Call{read("/r"), read("/r"), edit("/q", "a", "b"), read("/r")},
			[]Rule{"", "", "", Reread}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, run(th, tt.calls...))
		})
	}
}

// TestRevertPerChange: at threshold 2 the same change must be undone twice;
// adding debug lines and removing them once, in two places, is no loop.
func TestRevertPerChange(t *testing.T) {
	th := Thresholds{Revert: 2}
	got := run(th, edit("/a", "x", "x // debug"), edit("/a", "y", "y // debug"), edit("/a", "x // debug", "x"), edit("/a", "y // debug", "y"))
	assert.Equal(t, []Rule{"", "", "", ""}, got)
	got = run(th, edit("/a", "x", "x2"), edit("/a", "x2", "x"), edit("/a", "x", "x2"), edit("/a", "x2", "x"))
	assert.Equal(t, []Rule{"", "", Revert, ""}, got, "the third edit undoes the change a second time")
}

func TestStall(t *testing.T) {
	th := Thresholds{StallCalls: 3, StallTokens: 1000}
	at := func(c Call, tokens int64) Call { c.Tokens = tokens; return c }
	o := Call{Kind: Other}
	got := run(th, at(read("/a"), 100), at(o, 400), at(o, 800), at(o, 1200), at(o, 2000), at(read("/b"), 2100), at(o, 2200))
	assert.Equal(t, []Rule{"", "", "", Stall, "", "", ""}, got, "fires once per streak, a new file starts a new one")
	got = run(th, read("/a"), o, o, o, o)
	assert.Equal(t, []Rule{"", "", "", "", ""}, got, "never without the context size")
	got = run(th, at(read("/a"), 100), at(o, 200), at(o, 300), at(o, 400), at(o, 500))
	assert.Equal(t, []Rule{"", "", "", "", ""}, got, "calls alone, without growth, are no stall")
}

func TestOffThresholds(t *testing.T) {
	calls := []Call{cmd("x", true, "F"), cmd("x", true, "F"), cmd("x", true, "F"), read("/r"), read("/r"), read("/r"), edit("/a", "1", "2"), edit("/a", "2", "1")}
	assert.Equal(t, make([]Rule, len(calls)), run(Thresholds{}, calls...))
}

// TestAttempt is the loop breaker's alternation, moved here from the hook.
func TestAttempt(t *testing.T) {
	var s State
	for range 3 {
		s.Observe(cmd("make", false, ""), Defaults)
	}
	var got []bool
	for range 4 {
		d, runs := s.Attempt("make ", 3)
		assert.Equal(t, 3, runs)
		got = append(got, d)
	}
	assert.Equal(t, []bool{true, false, true, false}, got)
	d, _ := s.Attempt("make", 0)
	assert.False(t, d, "threshold 0 is off")
	s.Observe(edit("/a", "1", "2"), Defaults)
	d, runs := s.Attempt("make", 3)
	assert.False(t, d)
	assert.Zero(t, runs, "an edit resets the runs")
}

func TestSettle(t *testing.T) {
	tests := map[string]string{
		"1 failed, 2 passed in 0.03s": "1 failed, 2 passed in #s",
		"took 12 ms":                  "took # ms",
		"at 0x7ffd1234 panic":         "at # panic",
		"12:03:44 error":              "# error",
		"line 42: undefined x2":       "line 42: undefined x2",
		"3 seconds, 2 skipped":        "# seconds, 2 skipped",
		"version 1.2.3":               "version #",
		"":                            "",
	}
	for in, want := range tests {
		assert.Equal(t, want, Settle(in), in)
	}
}

func TestFromTool(t *testing.T) {
	c := FromTool("Bash", []byte(`{"command":"sed -i s/a/b/ f.go"}`), "/w", true, "boom", func(cmd, cwd string) ([]string, bool) {
		return []string{cwd + "/f.go"}, false
	})
	assert.Equal(t, Call{Kind: Command, Command: "sed -i s/a/b/ f.go", Edits: []string{"/w/f.go"}, Failed: true, Output: "boom"}, c)
	assert.Equal(t, Call{Kind: Read, Path: "/w/a.go", Lines: "10+20", Output: "x"}, FromTool("Read", []byte(`{"file_path":"a.go","offset":10,"limit":20}`), "/w", false, "x", nil))
	assert.Equal(t, Call{Kind: Edit, Path: "/a", Pairs: []Pair{{"1", "2"}, {"3", "4"}}},
		FromTool("MultiEdit", []byte(`{"file_path":"/a","edits":[{"old_string":"1","new_string":"2"},{"old_string":"3","new_string":"4"}]}`), "", false, "", nil))
	assert.Equal(t, Call{Kind: Edit, Path: "/a", Whole: true, Pairs: []Pair{{New: "x"}}}, FromTool("Write", []byte(`{"file_path":"/a","content":"x"}`), "", false, "", nil))
	assert.Equal(t, Call{Kind: Other}, FromTool("Grep", []byte(`{"pattern":"x"}`), "", false, "", nil))
	assert.Equal(t, Call{Kind: Command}, FromTool("Bash", []byte(`not json`), "", false, "", nil))
}

func TestDirectives(t *testing.T) {
	for _, r := range Rules {
		f := Fire{Rule: r, Count: 3, Subject: "go test ./...", Tokens: 1}
		d := f.Directive()
		require.NotEmpty(t, d, r)
		assert.Less(t, len(d), 400, "one short directive")
		assert.Contains(t, f.StopReason(), string(r))
	}
}

func TestStateBounded(t *testing.T) {
	var s State
	for i := range 5000 {
		s.Observe(cmd(string(rune('a'+i%26))+string(rune(i)), true, "x"), Defaults)
		s.Observe(edit("/f", string(rune(i)), string(rune(i+1))), Defaults)
	}
	assert.LessOrEqual(t, len(s.Runs), maxKeys)
	assert.LessOrEqual(t, len(s.Fails), maxKeys)
	assert.LessOrEqual(t, len(s.Swaps), maxSwaps)
}

func FuzzFromTool(f *testing.F) {
	f.Add("Bash", []byte(`{"command":"ls"}`), "out")
	f.Add("MultiEdit", []byte(`{"file_path":"a","edits":[{"old_string":"1"}]}`), "")
	f.Fuzz(func(t *testing.T, name string, input []byte, out string) {
		var s State
		c := FromTool(name, input, "/w", true, out, nil)
		s.Observe(c, Thresholds{Repeat: 1, Unchanged: 1, Revert: 1, Reread: 1})
		_ = Settle(out)
	})
}

// TestLatest: over a request's messages, only the fires of its last
// message's tool results are this request's.
func TestLatest(t *testing.T) {
	use := func(id, cmd string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"` + cmd + `"}}]}`
	}
	result := func(id, out string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","is_error":true,"content":[{"type":"text","text":"` + out + `"}]}]}`
	}
	msgs := []string{`{"role":"user","content":"fix it"}`}
	for i, id := range []string{"a", "b", "c"} {
		msgs = append(msgs, use(id, "make test"), result(id, "FAIL in 0.0"+string(rune('1'+i))+"s"))
	}
	body := "[" + strings.Join(msgs, ",") + "]"
	fires := Latest([]byte(body), nil, Defaults)
	require.Len(t, fires, 1)
	assert.Equal(t, Repeat, fires[0].Rule)
	assert.Equal(t, "make test", fires[0].Subject)

	withContext := "[" + strings.Join(append(msgs[:len(msgs):len(msgs)], `{"role":"system","content":[{"type":"text","text":"hook context"}]}`), ",") + "]"
	assert.Len(t, Latest([]byte(withContext), nil, Defaults), 1, "a message of Claude Code's own after the results")

	earlier := "[" + strings.Join(append(msgs[:len(msgs)-1:len(msgs)-1], `{"role":"user","content":"go on"}`), ",") + "]"
	assert.Empty(t, Latest([]byte(earlier), nil, Defaults), "a fire of an earlier message is not this request's")
	assert.Empty(t, Latest([]byte(`not json`), nil, Defaults))
}

func FuzzLatest(f *testing.F) {
	f.Add([]byte(`[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"y"}]}]`))
	f.Add([]byte(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":1,"content":{"a":2}}]}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fire := range Latest(body, nil, Thresholds{Repeat: 1, Unchanged: 1, Revert: 1, Reread: 1}) {
			if fire.Rule == "" {
				t.Fatalf("fire without a rule: %+v", fire)
			}
		}
	})
}
