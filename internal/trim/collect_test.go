package trim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/transcript"
)

// script builds transcript lines: the helpers append records in order.
type script struct{ lines []string }

func (s *script) add(rec map[string]any) {
	rec["sessionId"] = "s1"
	if _, ok := rec["cwd"]; !ok {
		rec["cwd"] = "/w"
	}
	b, _ := json.Marshal(rec)
	s.lines = append(s.lines, string(b))
}

func (s *script) typed(text string) {
	s.add(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
}

func (s *script) said(text string) {
	s.add(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": text}}}})
}

// tool adds a tool call and its result; tur is the structured result (nil
// for none).
func (s *script) tool(id, name string, input map[string]any, result string, isErr bool, tur any) {
	s.add(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
	rec := map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": isErr}}}}
	if tur != nil {
		rec["toolUseResult"] = tur
	} else {
		rec["toolUseResult"] = result
	}
	s.add(rec)
}

func (s *script) set(t *testing.T) Set {
	t.Helper()
	set, err := Collect(transcript.NewReader(strings.NewReader(strings.Join(s.lines, "\n")+"\n")), nil)
	require.NoError(t, err)
	return set
}

func TestCollectFiles(t *testing.T) {
	var s script
	s.tool("r1", "Read", map[string]any{"file_path": "/w/a.go"}, "…", false, nil)
	s.tool("r2", "Read", map[string]any{"file_path": "/w/b.go", "offset": 40, "limit": 20}, "…", false, nil)
	s.tool("e1", "Edit", map[string]any{"file_path": "/w/a.go"}, "ok", false,
		map[string]any{"structuredPatch": []any{map[string]any{"newStart": 10, "newLines": 5}, map[string]any{"newStart": 30, "newLines": 1}}})
	s.tool("r3", "Read", map[string]any{"file_path": "/w/missing.go"}, "<tool_use_error>File does not exist.</tool_use_error>", true, nil)
	s.tool("w1", "Write", map[string]any{"file_path": "/elsewhere/c.md"}, "ok", false, nil)
	got := s.set(t)
	require.Len(t, got.Files, 3, "the failed read is not carried")
	assert.Equal(t, File{Path: "/elsewhere/c.md", Edited: true, seq: 5}, got.Files[0])
	assert.Equal(t, File{Path: "/w/a.go", Edited: true, Ranges: []Range{{10, 14}, {30, 30}}, seq: 4}, got.Files[1])
	assert.Equal(t, File{Path: "/w/b.go", Ranges: []Range{{40, 59}}, seq: 2}, got.Files[2])

	out := Render(got, 0)
	assert.Contains(t, out, "- /elsewhere/c.md\n- a.go: 10-14, 30\n")
	assert.Contains(t, out, "## Files read (most recent first; lines read)\n- b.go: 40-59\n")
}

func TestCollectOpenError(t *testing.T) {
	fail := "Exit code 1\ncompiling\n--- FAIL: TestX (0.00s)\n    x_test.go:9: expected 2, got 3\nok other"
	tests := []struct {
		name string
		run  func(*script)
		want *Failure
	}{
		{"failing run stays open", func(s *script) {
			s.tool("b1", "Bash", map[string]any{"command": "go test ./x -run TestX"}, fail, true, nil)
		}, &Failure{Command: "go test ./x -run TestX", Lines: []string{"Exit code 1", "--- FAIL: TestX (0.00s)", "    x_test.go:9: expected 2, got 3"}}},
		{"a pass of the same program closes it", func(s *script) {
			s.tool("b1", "Bash", map[string]any{"command": "go test ./x -run TestX"}, fail, true, nil)
			s.tool("b2", "Bash", map[string]any{"command": "cd /w && go test ./..."}, "ok", false, nil)
		}, nil},
		{"another program's pass does not", func(s *script) {
			s.tool("b1", "Bash", map[string]any{"command": "go test ./x"}, fail, true, nil)
			s.tool("b2", "Bash", map[string]any{"command": "go build ./..."}, "", false, nil)
		}, &Failure{Command: "go test ./x", Lines: []string{"Exit code 1", "--- FAIL: TestX (0.00s)", "    x_test.go:9: expected 2, got 3"}}},
		{"the user's refusal is no error", func(s *script) {
			s.tool("b1", "Bash", map[string]any{"command": "rm -rf build"},
				"The user doesn't want to proceed with this tool use.", true, nil)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s script
			tt.run(&s)
			assert.Equal(t, tt.want, s.set(t).Error)
		})
	}
}

func TestCollectTodosAndDecisions(t *testing.T) {
	var s script
	s.typed("Port the parser. Never touch the vendored code.")
	s.tool("t1", "TodoWrite", map[string]any{"todos": []any{
		map[string]any{"content": "write the lexer", "status": "completed"},
		map[string]any{"content": "write the parser", "status": "in_progress"},
		map[string]any{"content": "fuzz it", "status": "pending"},
	}}, "ok", false, nil)
	s.tool("k1", "TaskCreate", map[string]any{"subject": "docs"}, "ok", false, map[string]any{"task": map[string]any{"id": "7"}})
	s.tool("k2", "TaskCreate", map[string]any{"subject": "bench"}, "ok", false, map[string]any{"task": map[string]any{"id": "8"}})
	s.tool("k3", "TaskUpdate", map[string]any{"taskId": "7", "status": "completed"}, "ok", false, nil)
	q := "Which error style should the parser use?"
	s.tool("q1", "AskUserQuestion", map[string]any{"questions": []any{map[string]any{"question": q}}}, "answered", false,
		map[string]any{"questions": []any{map[string]any{"question": q}}, "answers": map[string]any{q: "wrapped, with the line"}})
	s.said("The lexer is done. Shall I also keep the old API around?")
	s.typed("no, drop it")
	s.add(map[string]any{"type": "user", "isSidechain": true, "message": map[string]any{"role": "user", "content": "a subagent's prompt"}})
	s.add(map[string]any{"type": "user", "isCompactSummary": true, "message": map[string]any{"role": "user",
		"content": "This session is being continued from a previous conversation that ran out of context."}})

	got := s.set(t)
	assert.Equal(t, []string{"Port the parser. Never touch the vendored code.", "no, drop it"}, got.Instructions)
	assert.Equal(t, []Todo{{Text: "write the parser", Status: "in_progress"}, {Text: "fuzz it", Status: "pending"},
		{Text: "bench", Status: "pending", id: "8"}}, got.Todos)
	assert.Equal(t, []Decision{{Question: q, Answer: "wrapped, with the line"},
		{Question: "Shall I also keep the old API around?", Answer: "no, drop it"}}, got.Decisions)
	assert.Equal(t, "s1", got.Session)
	assert.Equal(t, "/w", got.Cwd)
}

func TestCommandKey(t *testing.T) {
	for in, want := range map[string]string{
		"go test ./... -run X":           "go test",
		"cd /w/sub && go test ./...":     "go test",
		"cd a && cd b && npm run build":  "npm run",
		"CGO_ENABLED=0 go build ./cmd/x": "go build",
		"ls -la":                         "ls",
		"make":                           "make",
		"git status 2>&1\necho done":     "git status",
		"mix test | tail":                "mix test",
		"   ":                            "",
		"sudo apt-get install -y tmux":   "apt-get install",
		"grep -rn foo . | head":          "grep",
	} {
		assert.Equal(t, want, CommandKey(in), in)
	}
}

func TestRenderBudget(t *testing.T) {
	var s script
	for i := range 40 {
		s.typed(strings.Repeat("please keep the API stable and the tests green ", 30) + string(rune('a'+i%26)))
		s.tool("r"+string(rune('A'+i)), "Read", map[string]any{"file_path": "/w/pkg/file" + strings.Repeat("x", i) + ".go"}, "…", false, nil)
		s.tool("b"+string(rune('A'+i)), "Bash", map[string]any{"command": "go test ./pkg/" + strings.Repeat("y", i)}, "ok", false, nil)
	}
	set := s.set(t)
	for _, budget := range []int{2500, 4000, MaxChars} {
		out := Render(set, budget)
		assert.LessOrEqual(t, len(out), budget)
		assert.Equal(t, out, Render(set, budget), "deterministic")
		assert.Contains(t, out, "1. please keep", "the first turn is always carried")
		assert.True(t, strings.HasSuffix(out, directives))
	}
}

func TestQuestion(t *testing.T) {
	for text, want := range map[string]string{
		"Done. Shall I also keep the old API?":                               "Shall I also keep the old API?",
		"Use `/watchlist?x=1` or the batch? I think batch.":                  "Use `/watchlist?x=1` or the batch?",
		"The file is at a/b.go. Should `market_data_batch` stay as it is?":   "Should `market_data_batch` stay as it is?",
		"Which one?\n\nI will wait.":                                         "",
		"Options:\n1. fast\n2. safe\n\nWhich approach do you want (1 or 2)?": "Which approach do you want (1 or 2)?",
		"No question here.": "",
	} {
		assert.Equal(t, want, question(text), text)
	}
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "git commit -m x …", oneLine("git commit -m x\nbody", 100))
	assert.Equal(t, "abcde…", oneLine("abcdefgh\nmore", 8), "8 bytes with the mark")
	assert.Equal(t, "abcdefgh", oneLine("abcdefgh", 8))
}
