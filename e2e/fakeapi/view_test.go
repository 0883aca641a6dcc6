package fakeapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReadResult(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		first int
		lines []string
	}{
		{"whole file with trailing newline", "1\ta\n2\tb\n3\t", 1, []string{"a", "b", ""}},
		{"partial", "8\trow 8\n9\trow 9", 8, []string{"row 8", "row 9"}},
		{"tabs inside content", "1\t\tindented\n2\tx\ty", 1, []string{"\tindented", "x\ty"}},
		{"older arrow format", "     1→package main\n     2→", 1, []string{"package main", ""}},
		{"trailing reminder", "1\ta\n\n<system-reminder>\nnote\n</system-reminder>", 1, []string{"a"}},
		{"empty-file reminder", "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>", 0, nil},
		{"error text", "File does not exist.", 0, nil},
		{"numbers must be consecutive", "1\ta\n3\tc", 1, []string{"a"}},
		{"colon separator", "1:a\n2:b", 1, []string{"a", "b"}},
		{"leading note", "[Truncated: PARTIAL view \u2014 f: showing lines 1-2 of 9 total]\n1\ta\n2\tb", 1, []string{"a", "b"}},
		{"unchanged stub", "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current \u2014 refer to that instead of re-reading.", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, lines := ParseReadResult(tc.in)
			assert.Equal(t, tc.first, first)
			assert.Equal(t, tc.lines, lines)
		})
	}
}

func viewFor(t *testing.T, messages arr) *View {
	t.Helper()
	p, err := parseRequest([]byte(body(t, messages, obj{"tools": arr{tool("Read"), tool("Edit"), tool("Write")}})))
	require.NoError(t, err)
	require.NoError(t, validate(p, false, false))
	return newView(p, http.Header{}, nil)
}

func TestFileContentFromPartialReads(t *testing.T) {
	read := func(id string, in obj, result string) arr {
		return arr{assistant(toolUse(id, "Read", in)), user(toolResult(id, result))}
	}
	msgs := arr{user(text("task"))}
	msgs = append(msgs, read("toolu_1", obj{"file_path": "/f", "offset": 1, "limit": 2}, "1\ta\n2\tb")...)
	v := viewFor(t, msgs)
	got, whole := v.FileContent("/f")
	assert.Equal(t, "a\nb", got)
	assert.False(t, whole, "a limited read that filled its limit may not be the whole file")

	msgs = append(msgs, read("toolu_2", obj{"file_path": "/f", "offset": 3, "limit": 2}, "3\tc\n4\t")...)
	v = viewFor(t, msgs)
	got, whole = v.FileContent("/f")
	assert.Equal(t, "a\nb\nc\n", got)
	assert.False(t, whole)

	msgs = append(msgs, read("toolu_3", obj{"file_path": "/f"}, "1\ta\n2\tB\n3\tc\n4\t")...)
	msgs = append(msgs, assistant(toolUse("toolu_4", "Edit", obj{"file_path": "/f", "old_string": "B", "new_string": "bee"})),
		user(toolResult("toolu_4", "The file /f has been updated successfully.")))
	v = viewFor(t, msgs)
	got, whole = v.FileContent("/f")
	assert.Equal(t, "a\nbee\nc\n", got)
	assert.True(t, whole)

	msgs = append(msgs, assistant(toolUse("toolu_5", "Edit", obj{"file_path": "/f", "old_string": "zzz", "new_string": "y"})),
		user(obj{"type": "tool_result", "tool_use_id": "toolu_5", "content": "String to replace not found", "is_error": true}))
	v = viewFor(t, msgs)
	got, _ = v.FileContent("/f")
	assert.Equal(t, "a\nbee\nc\n", got, "a failed edit changes nothing")
	assert.Equal(t, []string{"/f"}, v.VisibleFiles())
}

func TestFileContentKeepsEarlierReadAcrossStubsAndTruncation(t *testing.T) {
	stub := "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current \u2014 refer to that instead of re-reading."
	assert.True(t, IsReadStub(stub))
	assert.False(t, IsReadStub("1\tFile unchanged since last read."))
	v := viewFor(t, arr{user(text("task")),
		assistant(toolUse("toolu_1", "Read", obj{"file_path": "/f"})), user(toolResult("toolu_1", "1\tx\n2\t")),
		assistant(toolUse("toolu_2", "Read", obj{"file_path": "/f"})), user(toolResult("toolu_2", stub)),
		assistant(toolUse("toolu_3", "Read", obj{"file_path": "/big"})),
		user(toolResult("toolu_3", "1\ta\n2\tb\n\n[Truncated: PARTIAL view \u2014 big: showing lines 1-2 of 900 total]")),
	})
	got, whole := v.FileContent("/f")
	assert.Equal(t, "x\n", got)
	assert.True(t, whole, "the stub does not hide the earlier content")
	got, whole = v.FileContent("/big")
	assert.Equal(t, "a\nb", got)
	assert.False(t, whole, "a truncated read is partial")
}

func TestFileContentBlockResultsAndUnknownEdits(t *testing.T) {
	v := viewFor(t, arr{user(text("task")),
		assistant(toolUse("toolu_1", "Read", obj{"file_path": "/g"})),
		user(obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": arr{text("1\tx\n2\ty")}}),
		assistant(toolUse("toolu_2", "Edit", obj{"file_path": "/h", "old_string": "a", "new_string": "b"})),
		user(toolResult("toolu_2", "ok")),
	})
	got, whole := v.FileContent("/g")
	assert.Equal(t, "x\ny", got)
	assert.True(t, whole)
	_, whole = v.FileContent("/h")
	assert.False(t, whole, "an edit of a file never seen does not reveal it")
}

func TestDemoAgentReadsThenSummarises(t *testing.T) {
	agent := DemoAgent()
	task := user(text("<system-reminder>x</system-reminder>"), text("look at /src/a.go please"))
	r := agent.Respond(viewFor(t, arr{task}))
	require.Len(t, r.ToolUses, 1)
	assert.Equal(t, "Read", r.ToolUses[0].Name)
	assert.Equal(t, "/src/a.go", r.ToolUses[0].Input["file_path"])

	r = agent.Respond(viewFor(t, arr{task, assistant(toolUse("toolu_1", "Read", obj{"file_path": "/src/a.go"})),
		user(toolResult("toolu_1", "1\tpackage a\n2\t"))}))
	assert.Empty(t, r.ToolUses)
	assert.Contains(t, r.Text, "/src/a.go: 1 lines, first: package a")
}

func FuzzParseReadResult(f *testing.F) {
	for _, s := range []string{"1\ta\n2\tb\n3\t", "     1→x", "<system-reminder>", "", "9\t\n10\tz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		first, lines := ParseReadResult(s)
		if len(lines) > 0 && first < 0 {
			t.Fatalf("negative first line %d", first)
		}
	})
}

// FuzzRequest feeds arbitrary bodies through parsing, validation, the view
// and the cache simulator: nothing may panic.
func FuzzRequest(f *testing.F) {
	for _, c := range loadCaptures(f) {
		if len(c.Body) > 0 && len(c.Body) < 5000 {
			f.Add(c.Body)
		}
	}
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}],"tools":[]}`))
	sim := newCacheSim(1)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseRequest(b)
		if err != nil {
			return
		}
		if validate(p, false, false) != nil {
			return
		}
		v := newView(p, http.Header{}, b)
		_ = v.VisibleText()
		for _, path := range v.VisibleFiles() {
			v.FileContent(path)
		}
		u := sim.account(p, time.Unix(1_800_000_000, 0))
		if u.InputTokens < 0 || u.TotalInput() != p.totalTokens() {
			t.Fatalf("usage %+v does not add up to %d", u, p.totalTokens())
		}
	})
}
