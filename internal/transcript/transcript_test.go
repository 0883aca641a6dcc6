package transcript

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	fixtureSession = "258c7280-ae70-4798-800f-63464d01a85d"
	fixturePath    = "testdata/claude-code-sessions/" + fixtureSession + ".jsonl"
)

// The expected counts below were measured on the fixture with jq, e.g.
// `jq -r .type FILE | sort | uniq -c` and
// `jq -r 'select(.type=="assistant")|.message.content[]|select(.type=="tool_use")|.name' FILE | sort | uniq -c`.
func TestReadFixture(t *testing.T) {
	recs, st, err := readAll(fixturePath)
	require.NoError(t, err)

	assert.Len(t, recs, 1863)
	assert.Equal(t, 1863, st.Records)
	assert.Equal(t, 1863, st.Lines)
	assert.Equal(t, map[string]int{
		"assistant": 299, "file-history-snapshot": 28, "progress": 1333,
		"queue-operation": 6, "system": 5, "user": 192,
	}, st.ByType)
	assert.Empty(t, st.Unknown)
	assert.Zero(t, st.Malformed)
	assert.Zero(t, st.Torn)
	assert.Zero(t, st.Mistyped)
	fi, err := os.Stat(fixturePath)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), st.Bytes)

	tools := map[string]int{}
	subtypes := map[string]int{}
	msgIDs := map[string]bool{}
	requestIDs := map[string]bool{}
	var results, withToolUseResult, errorResults, thinking, signed, human int
	var humanTexts []string
	for i, rec := range recs {
		require.Equal(t, i+1, rec.Line)
		require.NotEmpty(t, rec.Raw)
		if rec.Type == TypeSystem {
			subtypes[rec.Subtype]++
		}
		if len(rec.ToolUseResult) > 0 {
			withToolUseResult++
		}
		if isHuman(rec) {
			human++
			humanTexts = append(humanTexts, rec.Message.Blocks()[0].Text)
		}
		if rec.Type == TypeAssistant {
			require.NotNil(t, rec.Message, "line %d", rec.Line)
			require.NotNil(t, rec.Message.Usage, "line %d", rec.Line)
			msgIDs[rec.Message.ID] = true
			requestIDs[rec.RequestID] = true
			assert.Equal(t, "assistant", rec.Message.Role)
		}
		for _, b := range rec.Message.Blocks() {
			switch b.Type {
			case "tool_use":
				tools[b.Name]++
				assert.NotEmpty(t, b.ID)
				assert.NotEmpty(t, b.Input)
			case "tool_result":
				results++
				assert.NotEmpty(t, b.ToolUseID)
				if b.IsError {
					errorResults++
				}
			case "thinking":
				thinking++
				if b.Signature != "" {
					signed++
				}
			}
		}
	}
	assert.Equal(t, map[string]int{
		"Bash": 79, "Read": 42, "Edit": 35, "Write": 13, "Glob": 8, "Grep": 5,
		"TaskOutput": 3, "Task": 1,
	}, tools)
	assert.Equal(t, map[string]int{"compact_boundary": 1, "stop_hook_summary": 3, "turn_duration": 1}, subtypes)
	assert.Equal(t, 186, results)
	assert.Equal(t, 186, withToolUseResult)
	assert.Equal(t, 7, errorResults)
	assert.Equal(t, 19, thinking)
	assert.Equal(t, 19, signed)
	assert.Len(t, msgIDs, 152)
	assert.Len(t, requestIDs, 152)
	// Two typed prompts; the compaction summary, two task notifications and
	// an interruption marker are Claude Code's own.
	assert.Equal(t, 2, human)
	assert.Equal(t, []string{"Implement spotter-gqc", "did you push?"}, humanTexts)
}

func TestFixtureDetails(t *testing.T) {
	recs, _, err := readAll(fixturePath)
	require.NoError(t, err)

	assert.Equal(t, TypeFileHistorySnapshot, recs[0].Type)
	assert.Empty(t, recs[0].SessionID)
	assert.True(t, recs[0].Timestamp.IsZero(), "the snapshot's timestamp is nested")
	first := recs[1]
	assert.Equal(t, TypeProgress, first.Type)
	assert.Equal(t, "", first.ParentUUID)
	assert.Equal(t, "dd4e7d64-cb8f-47cc-8998-3585601ec2c3", first.UUID)
	assert.Equal(t, fixtureSession, first.SessionID)
	assert.Equal(t, "2.1.39", first.Version)
	assert.Equal(t, time.Date(2026, 2, 11, 20, 31, 53, 375e6, time.UTC), first.Timestamp)
	assert.Nil(t, first.Message)

	var boundary, summary *Record
	for _, r := range recs {
		switch {
		case r.Subtype == "compact_boundary":
			boundary = r
		case r.IsCompactSummary:
			summary = r
		}
	}
	require.NotNil(t, boundary)
	assert.Equal(t, "7c642069-996d-4ae0-a61c-554b35d36fb6", boundary.LogicalParentUUID)
	assert.Equal(t, "", boundary.ParentUUID)
	require.NotNil(t, summary)
	assert.Equal(t, boundary.UUID, summary.ParentUUID)
	assert.False(t, isHuman(summary))

	// The one tool_result whose content is an array of text blocks.
	var flattened string
	for _, r := range recs {
		for _, b := range r.Message.Blocks() {
			if b.Type == "tool_result" && bytes.HasPrefix(bytes.TrimSpace(b.Content), []byte("[")) {
				flattened = b.ResultText()
			}
		}
	}
	assert.True(t, strings.HasPrefix(flattened, "Based on the official Claude Code hooks documentation"), flattened[:min(80, len(flattened))])
	assert.Contains(t, flattened, "\n")

	// Usage of an assistant record adds up.
	for _, r := range recs {
		if r.Type == TypeAssistant {
			u := r.Message.Usage
			assert.Equal(t, u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens, u.PromptTokens())
			assert.Positive(t, u.PromptTokens())
		}
	}
}

func TestSubagentTranscripts(t *testing.T) {
	dir := "testdata/claude-code-sessions/" + fixtureSession + "/subagents/"
	for file, want := range map[string]struct {
		agent  string
		byType map[string]int
	}{
		dir + "agent-a881341.jsonl":         {"a881341", map[string]int{"assistant": 5, "progress": 2, "user": 3}},
		dir + "agent-acompact-fffbd0.jsonl": {"acompact-fffbd0", map[string]int{"assistant": 1, "user": 3}},
	} {
		recs, st, err := readAll(file)
		require.NoError(t, err)
		assert.Equal(t, want.byType, st.ByType, file)
		for _, r := range recs {
			assert.True(t, r.IsSidechain)
			assert.Equal(t, want.agent, r.AgentID)
			assert.Equal(t, fixtureSession, r.SessionID)
			assert.False(t, isHuman(r), "sidechain prompts are not the user's")
		}
	}
}

// readAll reads every record of the transcript at path.
func readAll(path string) ([]*Record, Stats, error) {
	r, err := Open(path)
	if err != nil {
		return nil, Stats{}, err
	}
	defer r.Close()
	var out []*Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Stats(), nil
		}
		if err != nil {
			return out, r.Stats(), err
		}
		out = append(out, rec)
	}
}

func isHuman(r *Record) bool {
	_, ok := HumanText(r)
	return ok
}

func readString(t *testing.T, s string) ([]*Record, Stats) {
	t.Helper()
	r := NewReader(strings.NewReader(s))
	var out []*Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, rec)
	}
	// Next keeps returning io.EOF.
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
	return out, r.Stats()
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		types []string
		want  Stats
	}{
		{
			name: "empty",
			in:   "",
			want: Stats{},
		},
		{
			name:  "blank lines and CRLF",
			in:    "\n  \n{\"type\":\"user\"}\r\n\n",
			types: []string{"user"},
			want:  Stats{Lines: 4, Records: 1, Blank: 3},
		},
		{
			name:  "bad json between good lines",
			in:    "{\"type\":\"user\"}\n{\"type\":\"assis\n{\"type\":\"assistant\"}\n",
			types: []string{"user", "assistant"},
			want:  Stats{Lines: 3, Records: 2, Malformed: 1},
		},
		{
			name:  "not objects",
			in:    "[1,2]\n\"s\"\n42\nnull\ntrue\n{\"type\":\"system\"}\n",
			types: []string{"system"},
			want:  Stats{Lines: 6, Records: 1, Malformed: 5},
		},
		{
			name:  "torn final line",
			in:    "{\"type\":\"user\"}\n{\"type\":\"assistant\",\"message\":{\"content\":[{\"ty",
			types: []string{"user"},
			want:  Stats{Lines: 2, Records: 1, Torn: 1},
		},
		{
			name:  "complete final line without newline",
			in:    "{\"type\":\"user\"}\n{\"type\":\"assistant\"}",
			types: []string{"user", "assistant"},
			want:  Stats{Lines: 2, Records: 2},
		},
		{
			name:  "unknown types keep only common fields",
			in:    "{\"type\":\"hologram\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"uuid\":\"u2\"}\n",
			types: []string{"hologram", ""},
			want:  Stats{Lines: 2, Records: 2, Unknown: map[string]int{"hologram": 1, "": 1}},
		},
		{
			name:  "mistyped fields",
			in:    "{\"type\":\"user\",\"uuid\":7,\"isMeta\":\"yes\",\"timestamp\":\"yesterday\",\"message\":{\"role\":\"user\",\"usage\":{\"input_tokens\":\"many\"},\"content\":\"x\"}}\n{\"type\":\"assistant\",\"message\":\"oops\"}\n",
			types: []string{"user", "assistant"},
			want:  Stats{Lines: 2, Records: 2, Mistyped: 2},
		},
		{
			name:  "invalid utf-8 and nul bytes",
			in:    "\xff\xfe\x00\n{\"type\":\"user\",\"message\":{\"content\":\"caf\xe9\"}}\n",
			types: []string{"user"},
			want:  Stats{Lines: 2, Records: 1, Malformed: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, st := readString(t, tt.in)
			var types []string
			for _, r := range recs {
				types = append(types, r.Type)
			}
			assert.Equal(t, tt.types, types)
			want := tt.want
			want.Bytes = int64(len(tt.in))
			want.ByType = map[string]int{}
			for _, typ := range tt.types {
				want.ByType[typ]++
			}
			if want.Unknown == nil {
				want.Unknown = map[string]int{}
			}
			assert.Equal(t, want, st)
		})
	}

	t.Run("unknown type has no message", func(t *testing.T) {
		recs, _ := readString(t, `{"type":"hologram","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"},"toolUseResult":{"a":1}}`+"\n")
		require.Len(t, recs, 1)
		assert.Equal(t, "u1", recs[0].UUID)
		assert.Equal(t, "s", recs[0].SessionID)
		assert.Nil(t, recs[0].Message)
		assert.Nil(t, recs[0].ToolUseResult)
	})
	t.Run("mistyped record keeps good fields", func(t *testing.T) {
		recs, _ := readString(t, `{"type":"user","uuid":7,"sessionId":"s","message":{"role":"user","usage":{"input_tokens":"many","output_tokens":3},"content":"x"}}`+"\n")
		require.Len(t, recs, 1)
		assert.Equal(t, "", recs[0].UUID)
		assert.Equal(t, "s", recs[0].SessionID)
		require.NotNil(t, recs[0].Message)
		assert.Equal(t, int64(3), recs[0].Message.Usage.OutputTokens)
		assert.Equal(t, "x", recs[0].Message.Blocks()[0].Text)
	})
}

func TestHugeLine(t *testing.T) {
	payload := strings.Repeat("0123456789abcdef", 20<<20/16) // 20 MB of text
	var in bytes.Buffer
	in.WriteString(`{"type":"user","uuid":"a"}` + "\n")
	in.WriteString(`{"type":"user","uuid":"big","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`)
	in.WriteString(payload)
	in.WriteString(`"}]}}` + "\n")
	in.WriteString(`{"type":"user","uuid":"c"}` + "\n")

	path := filepath.Join(t.TempDir(), "big.jsonl")
	require.NoError(t, os.WriteFile(path, in.Bytes(), 0o600))
	recs, st, err := readAll(path)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, "big", recs[1].UUID)
	assert.Equal(t, 2, recs[1].Line)
	blocks := recs[1].Message.Blocks()
	require.Len(t, blocks, 1)
	assert.Equal(t, "t1", blocks[0].ToolUseID)
	assert.Equal(t, len(payload), len(blocks[0].ResultText()))
	assert.Equal(t, "c", recs[2].UUID)
	assert.Equal(t, int64(in.Len()), st.Bytes)
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name    string
		content string
		types   []string
		result  string // ResultText of the first block
	}{
		{"string", `"hello"`, []string{"text"}, "hello"},
		{"empty", ``, nil, ""},
		{"null", `null`, nil, ""},
		{"number", `5`, nil, ""},
		{"array", `[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]`, []string{"text", "tool_use"}, "a"},
		{"bad element kept", `[{"type":"text","text":5},{"type":"image"}]`, []string{"text", "image"}, ""},
		{"tool_result string", `[{"type":"tool_result","tool_use_id":"t","content":"out"}]`, []string{"tool_result"}, "out"},
		{"tool_result blocks", `[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]`, []string{"tool_result"}, "a\n[image]\nb"},
		{"tool_result no content", `[{"type":"tool_result","tool_use_id":"t","is_error":true}]`, []string{"tool_result"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Message{Content: []byte(tt.content)}
			blocks := m.Blocks()
			var types []string
			for _, b := range blocks {
				types = append(types, b.Type)
				assert.NotEmpty(t, b.Raw)
			}
			assert.Equal(t, tt.types, types)
			if len(blocks) > 0 {
				assert.Equal(t, tt.result, blocks[0].ResultText())
			}
		})
	}
	var nilMsg *Message
	assert.Nil(t, nilMsg.Blocks())
}

func TestHumanTurns(t *testing.T) {
	user := func(content string, mods ...func(*Record)) *Record {
		r := &Record{Type: TypeUser, Message: &Message{Role: "user", Content: []byte(content)}}
		for _, m := range mods {
			m(r)
		}
		return r
	}
	tests := []struct {
		name string
		rec  *Record
		want bool
	}{
		{"typed string", user(`"fix the bug"`), true},
		{"typed blocks", user(`[{"type":"text","text":"fix it"}]`), true},
		{"pasted image", user(`[{"type":"image","source":{}}]`), true},
		{"prompt with reminder", user(`[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"go"}]`), true},
		{"reminder only", user(`"<system-reminder>\nctx\n</system-reminder>\n"`), false},
		{"unclosed reminder", user(`"<system-reminder>ctx"`), false},
		{"tool result", user(`[{"type":"tool_result","tool_use_id":"t","content":"x"}]`), false},
		{"tool use result field", user(`"x"`, func(r *Record) { r.ToolUseResult = []byte(`{}`) }), false},
		{"meta", user(`"x"`, func(r *Record) { r.IsMeta = true }), false},
		{"compact summary", user(`"This session is being continued"`, func(r *Record) { r.IsCompactSummary = true }), false},
		{"sidechain", user(`"x"`, func(r *Record) { r.IsSidechain = true }), false},
		{"slash command", user(`"<command-name>/clear</command-name>\n<command-message>clear</command-message>"`), false},
		{"local stdout", user(`"<local-command-stdout></local-command-stdout>"`), false},
		{"caveat", user(`"Caveat: The messages below were generated by the user while running local commands. DO NOT respond."`), false},
		{"task notification", user(`"<task-notification>\n<task-id>b</task-id>"`), false},
		{"teammate", user(`"<teammate-message teammate_id=\"a\">never do X</teammate-message>"`), false},
		{"bash mode", user(`"<bash-input>ls</bash-input>"`), false},
		{"prompt hook output", user(`"<user-prompt-submit-hook>always say yes</user-prompt-submit-hook>"`), false},
		{"stop hook feedback", user(`"Stop hook feedback:\nrun the tests"`), false},
		{"unflagged compaction summary", user(`"This session is being continued from a previous conversation that ran out of context."`), false},
		{"interrupt", user(`[{"type":"text","text":"[Request interrupted by user for tool use]"}]`), false},
		{"empty", user(`""`), false},
		{"assistant", &Record{Type: TypeAssistant, Message: &Message{Role: "assistant", Content: []byte(`"x"`)}}, false},
		{"no message", &Record{Type: TypeUser}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isHuman(tt.rec))
		})
	}
}

func TestHumanText(t *testing.T) {
	rec := &Record{Type: TypeUser, Message: &Message{Role: "user", Content: []byte(
		`[{"type":"text","text":"<system-reminder>never X</system-reminder>\n no, use pnpm "},{"type":"image"},{"type":"text","text":"thanks"}]`)}}
	text, ok := HumanText(rec)
	require.True(t, ok)
	assert.Equal(t, "no, use pnpm\nthanks", text)
	_, ok = HumanText(&Record{Type: TypeUser, Message: &Message{Content: []byte(`"<task-notification>x"`)}})
	assert.False(t, ok)
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = readAll(filepath.Join(t.TempDir(), "nope.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzReader(f *testing.F) {
	data, err := os.ReadFile(fixturePath)
	require.NoError(f, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, i := range []int{0, 1, 50, 200, 400, 1000, len(lines) - 2} {
		f.Add(lines[i])
	}
	f.Add([]byte("{\"type\":\"user\"}\n{\"type\":\"assis"))
	f.Add([]byte("[1]\n\n\xff{}"))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"image"}]}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in))
		n := 0
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("read error from a bytes.Reader: %v", err)
			}
			n++
			isHuman(rec)
			for _, b := range rec.Message.Blocks() {
				b.ResultText()
			}
		}
		st := r.Stats()
		if st.Records != n {
			t.Fatalf("Stats.Records %d, returned %d", st.Records, n)
		}
		if st.Records+st.Malformed+st.Torn+st.Blank != st.Lines {
			t.Fatalf("lines do not add up: %+v", st)
		}
		if st.Bytes != int64(len(in)) {
			t.Fatalf("Stats.Bytes %d, input %d", st.Bytes, len(in))
		}
	})
}

func BenchmarkReadFixture(b *testing.B) {
	fi, err := os.Stat(fixturePath)
	require.NoError(b, err)
	b.SetBytes(fi.Size())
	for b.Loop() {
		if _, _, err := readAll(fixturePath); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLastPromptTokens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	lines := `{"type":"assistant","message":{"role":"assistant","usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20}}}
{"type":"user","message":{"role":"user","content":"x"}}
{"type":"assistant","message":{"role":"assistant","usage":{"input_tokens":7,"cache_read_input_tokens":300,"cache_creation_input_tokens":1}}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"usage"}]}}
`
	require.NoError(t, os.WriteFile(path, []byte(lines), 0o600))
	n, err := LastPromptTokens(path)
	require.NoError(t, err)
	assert.Equal(t, int64(308), n, "the last assistant record's prompt")

	big := strings.Repeat(`{"type":"user","message":{"role":"user","content":"`+strings.Repeat("y", 1000)+`"}}`+"\n", 300)
	require.NoError(t, os.WriteFile(path, []byte(lines+big), 0o600))
	n, err = LastPromptTokens(path)
	require.NoError(t, err)
	assert.Zero(t, n, "none within the window")

	// Past the first window, within the whole one; and a record cut by the
	// first window is read whole from the second.
	mid := strings.Repeat(`{"type":"user","message":{"role":"user","content":"`+strings.Repeat("y", 1000)+`"}}`+"\n", 40)
	require.NoError(t, os.WriteFile(path, []byte(lines+mid), 0o600))
	n, err = LastPromptTokens(path)
	require.NoError(t, err)
	assert.Equal(t, int64(308), n)
	long := `{"type":"assistant","message":{"role":"assistant","content":"` + strings.Repeat("z", 20000) +
		`","usage":{"input_tokens":9,"cache_read_input_tokens":1,"cache_creation_input_tokens":0}}}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(lines+long), 0o600))
	n, err = LastPromptTokens(path)
	require.NoError(t, err)
	assert.Equal(t, int64(10), n)

	_, err = LastPromptTokens(filepath.Join(dir, "missing.jsonl"))
	assert.Error(t, err)
}

// BenchmarkLastPromptTokens is the post hook's read of the context size:
// the end of a real 2.7 MB transcript.
func BenchmarkLastPromptTokens(b *testing.B) {
	for b.Loop() {
		if n, err := LastPromptTokens(fixturePath); err != nil || n == 0 {
			b.Fatal(n, err)
		}
	}
}
