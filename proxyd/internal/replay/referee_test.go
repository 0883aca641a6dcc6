package replay

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyOf is a request body holding messages, for views.
func bodyOf(t *testing.T, messages []msg) []byte {
	t.Helper()
	var ms []map[string]any
	for _, m := range messages {
		ms = append(ms, map[string]any{"role": m.Role, "content": m.Content})
	}
	b, err := json.Marshal(map[string]any{"messages": ms})
	require.NoError(t, err)
	return b
}

// fold returns messages with the tool result of call id replaced by a
// short note, as a projection that folded it serves it.
func fold(messages []msg, id string) []msg {
	out := clone(messages)
	for _, m := range out {
		for i, c := range m.Content {
			if strings.Contains(string(c), `"tool_use_id":"`+id+`"`) {
				m.Content[i] = json.RawMessage(`{"type":"tool_result","tool_use_id":"` + id + `","content":"(folded: call Read to see it again)"}`)
			}
		}
	}
	return out
}

// TestRefereeAnswer runs the referee on testdata/referee-258c7280.jsonl:
// lines 5, 51, 54, 59, 62, 103, 107, 108, 116, 127, 138 and 142 of
// shared/fixtures/claude-code-sessions/258c7280-….jsonl (the user's
// prompt; two Reads, of annotation.ex and transcripts.ex, and their
// results; three Edits, of annotation.ex, message.ex — never read — and
// transcripts.ex, and their results; the Write that answers them). The
// request the Edits answer is viewed whole (the baseline) and with the
// annotation.ex Read folded (a projection).
func TestRefereeAnswer(t *testing.T) {
	b, _ := build(t, mustRead(t, "testdata/referee-258c7280.jsonl"))
	require.Len(t, b.reqs, 3, "the prompt, the Reads' results, the Edits' results")
	h := b.reqs[1].messages
	resp := b.reqs[2].messages[len(h)]
	require.Len(t, editCalls(resp), 3)
	readID := gjsonString(t, h[1].Content[0], "id")
	tok := func(b []byte) int { return len(b) / 4 }
	whole := newView(bodyOf(t, h))
	folded := newView(bodyOf(t, fold(h, readID)))
	annotation := "/home/USER/projects/spotter-worktrees/spotter-gqc/lib/spotter/transcripts/annotation.ex"

	for _, tc := range []struct {
		name  string
		v     *view
		want  Needed
		edits []need
	}{
		// message.ex was never read, but its old lines ("relationships
		// do", "belongs_to :session, …") are in the files that were.
		{"baseline: every old text shown", whole, Needed{}, nil},
		// Folding annotation.ex hides both: message.ex, never read, is
		// priced at the result that showed its old text.
		{"projection: the folded file's edits", folded, Needed{Edits: 2}, []need{
			{kind: "edit", key: "file " + annotation, size: fileTokens(h, annotation, tok)},
			{kind: "edit", key: "result " + readID, size: fileTokens(h, annotation, tok)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := referee{h, whole, tc.v, tok, nil}.answer(resp)
			var n Needed
			n.count(got)
			var edits []need
			for _, x := range got {
				if x.kind == "edit" {
					edits = append(edits, x)
				}
			}
			assert.Equal(t, tc.edits, edits)
			assert.Equal(t, tc.want.Edits, n.Edits)
			assert.Zero(t, n.Reads+n.Commands+n.Quotes, "no Read, Bash or user quote in this answer")
		})
	}
	assert.Positive(t, fileTokens(h, annotation, tok), "the Read result is the file's size")
}

// TestRefereeKinds checks each kind of hidden-then-needed use on a
// conversation written for it: a Read of a file whose content the
// request folded, a command run again whose earlier call it folded, a
// symbol a call names that only the folded result showed, and a user
// quoting a line of folded output; and that nothing counts when the
// request shows it all.
func TestRefereeKinds(t *testing.T) {
	var x tx
	x.user(text("look at the parser"))
	x.assistant("a1", map[string]any{"type": "tool_use", "id": "r1", "name": "Read", "input": map[string]any{"file_path": "/p.go"}}, call("b1", "go test ./internal/parse/..."))
	x.user(result("r1", "func parseHeaderLine(s string) {}\n"), result("b1", "--- FAIL: TestParseHeaderLine (0.00s)\n    parse_test.go:12: unexpected end of header block\n"+
		"    headerBlockSize in_progress\n"))
	x.assistant("a2", text("found it"))
	x.user(text("why does it say:\n    parse_test.go:12: unexpected end of header block\nagain?"))
	x.assistant("a3", map[string]any{"type": "tool_use", "id": "r2", "name": "Read", "input": map[string]any{"file_path": "/p.go"}},
		call("b2", "go test ./internal/parse/..."), map[string]any{"type": "tool_use", "id": "g1", "name": "Grep", "input": map[string]any{"pattern": "parseHeaderLine|brandNewName|in_progress"}},
		map[string]any{"type": "tool_use", "id": "w1", "name": "TodoWrite", "input": map[string]any{"todos": []any{map[string]any{"content": "shrink headerBlockSize", "status": "in_progress"}}}})
	x.user(result("r2", "func parseHeaderLine(s string) {}\n"), result("b2", "ok"), result("g1", "p.go:1"), result("w1", "ok"))
	x.assistant("a4", text("done"))
	b, _ := build(t, x.bytes())
	require.Len(t, b.reqs, 4)
	tok := func(b []byte) int { return len(b) }
	h := b.reqs[2].messages // ends with the user's quote
	resp := b.reqs[3].messages[len(h)]
	whole := newView(bodyOf(t, h))
	// The projection folded the first answer's calls and results.
	folded := clone(h)
	folded[1].Content = []json.RawMessage{json.RawMessage(`{"type":"text","text":"(two calls folded)"}`)}
	folded[2].Content = []json.RawMessage{json.RawMessage(`{"type":"text","text":"(their results folded)"}`)}
	fv := newView(bodyOf(t, folded))

	got := referee{h, whole, fv, tok, map[string]bool{"in_progress": true}}
	var n Needed
	n.count(got.answer(resp))
	assert.Equal(t, Needed{Reads: 1, Commands: 1, Symbols: 1}, n,
		"brandNewName was never shown, in_progress is the tools' own word, a TodoWrite is the agent's plan: none counted")
	q := got.quotes(b.summaries, lines(whole.prefix), lines(fv.prefix))
	require.Len(t, q, 1)
	assert.Equal(t, need{kind: "quote", key: "result b1", size: int64(len("--- FAIL: TestParseHeaderLine (0.00s)\n    parse_test.go:12: unexpected end of header block\n    headerBlockSize in_progress\n"))}, q[0])
	_, size := got.source("parseHeaderLine", len(h))
	assert.Equal(t, int64(len("func parseHeaderLine(s string) {}\n")), size, "the symbol's source is the latest result that shows it")

	same := referee{h, whole, whole, tok, nil}
	n = Needed{}
	n.count(same.answer(resp))
	n.count(same.quotes(b.summaries, lines(whole.prefix), lines(whole.prefix)))
	assert.Zero(t, n.Total(), "the whole history shows everything")
}

func TestIdentifiers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"call parseHeaderLine and session_live", "parseHeaderLine session_live"},
		{"TestPanel ok", "TestPanel"},
		{"plain english sentence, nothing", ""},
		{"DOCUMENTATION and MAX_SIZE", "MAX_SIZE"},
		{"9lives_here x_1 abc_defgh", "abc_defgh"},
		{"http2client sha256sum", "http2client sha256sum"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, strings.Join(identifiers(tc.in), " "), tc.in)
	}
}

// TestUserTypedHidden: every user-typed block (text, a command or skill
// expansion, an image) must be shown; tool results, system reminders and
// compaction summaries are not the user's.
func TestUserTypedHidden(t *testing.T) {
	img := json.RawMessage(`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg"}}`)
	h := []msg{
		{Role: "user", Content: []json.RawMessage{
			json.RawMessage(`{"type":"text","text":"<system-reminder>\nctx\n</system-reminder>"}`),
			json.RawMessage(`{"type":"text","text":"<command-name>/review</command-name>"}`),
			json.RawMessage(`{"type":"text","text":"Summary of the earlier conversation"}`), img}},
		{Role: "assistant", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"ok"}`)}},
		{Role: "user", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"please never push to main"}`)}},
	}
	summaries := map[string]bool{"Summary of the earlier conversation": true}
	for _, tc := range []struct {
		name   string
		served []msg
		want   int
	}{
		{"all served", h, 0},
		{"nothing but the last message", h[2:], 2},
		{"the image dropped", []msg{{Role: "user", Content: h[0].Content[:3]}, h[1], h[2]}, 1},
		{"reminder and summary dropped: not the user's", []msg{{Role: "user", Content: []json.RawMessage{h[0].Content[1], img}}, h[1], h[2]}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l loss
			l.userTypedHidden(h, summaries, newView(bodyOf(t, tc.served)))
			assert.Len(t, l.userHidden, tc.want)
			assert.Equal(t, tc.want > 0, l.first != "")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func gjsonString(t *testing.T, raw json.RawMessage, key string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	s, _ := m[key].(string)
	return s
}

// FuzzView reads any bytes as a request body: the view never panics, its
// text holds every string it lists, and identifiers are code-shaped.
func FuzzView(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"parseHeaderLine here"}]},{"role":"user","content":"x"}]}`))
	f.Add(mustReadF(f, "testdata/referee-258c7280.jsonl"))
	f.Add([]byte(`{"messages":"not an array"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v := newView(body)
		for s := range v.strs {
			if !v.shows(s) {
				t.Fatalf("a listed string is not shown: %q", s)
			}
		}
		if !strings.HasPrefix(v.text, v.prefix) {
			t.Fatal("the prefix is not the text's beginning")
		}
		for id := range v.idents {
			if len(id) < minIdent || !isCode(id) || !strings.Contains(v.text, id) {
				t.Fatalf("identifier %q", id)
			}
		}
	})
}

func mustReadF(f *testing.F, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
