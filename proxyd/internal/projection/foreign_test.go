package projection

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/recall"
	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// foreignConversation opens with calls of tools outside the world — two
// task creations, a failed update, a long web fetch, an MCP call, three
// rewrites of the todo list, a ToolSearch that finds nothing and one that
// loads ExitPlanMode — then
// reads modules until the engine has folded them all several times over.
func foreignConversation(reads int) []obj {
	msgs := []obj{user(text("Plan the refactor of /w, then read every module."))}
	pair := func(id, name string, in obj, res any, isErr bool) {
		msgs = append(msgs, assistant(toolUse(id, name, in)), user(toolResult(id, res, isErr)))
	}
	pair("toolu_t1", "TaskCreate", obj{"subject": "Write the tests", "description": "Cover the parser"}, "Task #1 created successfully: Write the tests\n\n<system-reminder>\nThe task list changed.\n</system-reminder>\n", false)
	pair("toolu_t2", "TaskCreate", obj{"subject": "Fix the parser", "description": "Make the tests pass"}, "Task #2 created successfully: Fix the parser", false)
	pair("toolu_t3", "TaskUpdate", obj{"taskId": "9", "status": "completed"}, "Task not found", true)
	pair("toolu_w1", "WebFetch", obj{"url": "https://example.test/spec", "prompt": "Summarise the grammar"},
		"The grammar has three rules.\n"+strings.Repeat("A rule of the grammar, explained at length. ", 120), false)
	pair("toolu_m1", "mcp__x__y", obj{}, []obj{text("")}, false)
	for i, step := range []string{"plan", "read", "refactor"} {
		pair(fmt.Sprintf("toolu_d%d", i), "TodoWrite", obj{"todos": []obj{{"content": step, "status": "in_progress"}}},
			"Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.", false)
	}
	pair("toolu_s1", "ToolSearch", obj{"query": "select:NoSuchTool"}, "No matching deferred tools found", false)
	msgs = append(msgs,
		assistant(text("Loading ExitPlanMode."), toolUse("toolu_s2", "ToolSearch", obj{"query": "select:ExitPlanMode"})),
		user(toolResult("toolu_s2", []obj{{"type": "tool_reference", "tool_name": "ExitPlanMode"}}, false), text("Tool loaded.")))
	for i := range reads {
		msgs = append(msgs, readPair(fmt.Sprintf("toolu_r%03d", i), fmt.Sprintf("/w/m%02d.go", i), fileLines(fmt.Sprint("m", i), 150))...)
	}
	return msgs
}

// foreignNote is the fold note of a served body that lists calls of other
// tools, or "".
func foreignNote(body []byte) string {
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		for _, b := range m.Get("content").Array() {
			if s := b.Get("text").Str; strings.Contains(s, "A line with → is a call that took effect") {
				return s
			}
		}
	}
	return ""
}

// TestFoldNoteListsForeignCalls: once the engine folds the opening turns,
// every call of a tool outside its world is in the fold note, once, with
// its input and its result's first line (a short result whole, a long one
// by a recall reference the request hands to the proxy), calls of one tool
// answered alike as one line, the latest's; the tool search
// that loaded a tool is not in the note but stays served. The note's text
// is golden, and a fresh engine serves the same bytes.
func TestFoldNoteListsForeignCalls(t *testing.T) {
	msgs := foreignConversation(30)
	e := New(Config{BudgetTokens: 4000, AlwaysEngage: true})
	kept := map[string]string{}
	var note string
	for k := 3; k <= len(msgs); k += 2 {
		res, err := e.ProjectBody(context.Background(), reqBody(msgs[:k]), "")
		require.NoError(t, err)
		for _, text := range res.Recall {
			kept[recall.Ref(text)] = text
		}
		if n := foreignNote(res.Body); n != "" {
			note = n
		}
	}
	require.NotEmpty(t, note, "a rebuild folded the opening calls")
	for _, want := range []string{
		`- TaskCreate {"description":"Cover the parser","subject":"Write the tests"} → Task #1 created successfully: Write the tests` + "\n",
		`- TaskCreate {"description":"Make the tests pass","subject":"Fix the parser"} → Task #2 created successfully: Fix the parser` + "\n",
		`- TaskUpdate {"status":"completed","taskId":"9"} → error: Task not found` + "\n",
		`- mcp__x__y → (no output)` + "\n",
		`- ToolSearch {"query":"select:NoSuchTool"} → No matching deferred tools found` + "\n",
		`- TodoWrite {"todos":[{"content":"refactor","status":"in_progress"}]} → Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. (the latest of 3 such calls; the earlier ones: [recall r`,
	} {
		assert.Equal(t, 1, strings.Count(note, want), "the note lists %q once", want)
	}
	assert.NotContains(t, note, "select:ExitPlanMode", "the load is kept, not listed")
	assert.NotContains(t, note, `"content":"plan"`, "calls with the same effect are one line, the latest's")
	refs := recallRE.FindAllStringSubmatch(note, -1)
	require.Len(t, refs, 2, "only the long fetch and the earlier todo rewrites are named by reference")
	assert.True(t, strings.HasPrefix(kept[refs[1][1]], "The grammar has three rules.\n"), "the fetch's result was handed to the proxy")
	assert.Equal(t, `TodoWrite {"todos":[{"content":"read","status":"in_progress"}]} → Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.`+"\n"+
		`TodoWrite {"todos":[{"content":"plan","status":"in_progress"}]} → Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.`,
		kept[refs[0][1]], "what the earlier alike calls did costs one recall, latest first")

	last := reqBody(msgs)
	warm, err := e.ProjectBody(context.Background(), last, "")
	require.NoError(t, err)
	fresh, err := New(Config{BudgetTokens: 4000, AlwaysEngage: true}).ProjectBody(context.Background(), last, "")
	require.NoError(t, err)
	assert.Equal(t, string(warm.Body), string(fresh.Body), "a fresh engine serves the same bytes")

	path := filepath.Join("testdata", "foreign-note.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(note), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), note, "if intended, run with -update")
}

var toolRefRE = regexp.MustCompile(`\{(?:"type":"tool_reference","tool_name":"ExitPlanMode"|"tool_name":"ExitPlanMode","type":"tool_reference")\}`)

// TestToolReferenceStaysServed: the tool_reference that loaded a deferred
// tool is served in every request after the load, through rebuilds under a
// budget smaller than one module, which evict everything else the opening
// read (the reference too, were it not pinned: 35 requests without it); between rebuilds each request
// re-serves the one before it, and every request is valid.
func TestToolReferenceStaysServed(t *testing.T) {
	msgs := foreignConversation(40)
	load := 0
	for i, m := range msgs {
		if strings.Contains(fmt.Sprint(m), "tool_reference") {
			load = i + 1
		}
	}
	e := New(Config{BudgetTokens: 1000, AlwaysEngage: true})
	var prev []byte
	rebuilds := 0
	for k := load; k <= len(msgs); k += 2 {
		res, err := e.ProjectBody(context.Background(), reqBody(msgs[:k]), "")
		require.NoError(t, err)
		require.NoError(t, validate.Request(res.Body), "request of %d messages", k)
		assert.Len(t, toolRefRE.FindAll(res.Body, -1), 1, "request of %d messages: the reference, once", k)
		if res.Reprojected {
			rebuilds++
		} else if prev != nil {
			assert.Equal(t, -1, validate.PrefixBreak(prev, res.Body), "request of %d messages: unsanctioned prefix change", k)
		}
		prev = res.Body
	}
	assert.Greater(t, rebuilds, 2, "rebuilds happened after the load")
}

// FuzzCallLine: any result text gives a line of one line, with no
// reminder in it, whole exactly when it does not end with the result's
// recall reference.
func FuzzCallLine(f *testing.F) {
	for _, s := range []string{
		"Task #1 created successfully: x\n\n<system-reminder>\nnote\n</system-reminder>\n",
		"a<system-reminder>b", "</system-reminder>x<system-reminder>", "", "\n\n", "line\nline\n",
		"<system-reminder>a</system-reminder><system-reminder>b</system-reminder>tail",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, isErr bool) {
		use := block{typ: "tool_use", id: "t1", name: "TaskCreate", input: gjson.Parse(`{"subject":"s"}`)}
		line, _, whole := callLine(use, &block{typ: "tool_result", text: text, isError: isErr}, 1)
		if strings.Contains(line, "\n") {
			t.Fatalf("%q: a line of several lines: %q", text, line)
		}
		if whole == strings.HasSuffix(line, "[recall "+recall.Ref(text)+"]") {
			t.Fatalf("%q: whole=%t but %q", text, whole, line)
		}
		if r := withoutReminders(text); strings.Contains(r, "<system-reminder>") && strings.Contains(r, "</system-reminder>") &&
			strings.Index(r, "<system-reminder>") < strings.LastIndex(r, "</system-reminder>") {
			t.Fatalf("%q: a reminder left in %q", text, r)
		}
	})
}

// toolAddition is the role:"system" message Claude Code 2.1.332 sends
// under the mid-conversation-tool-changes beta when an MCP server's tools
// arrive late in a conversation.
var toolAddition = obj{"role": "system", "content": []obj{{"type": "tool_addition",
	"tool": obj{"type": "tool_definition", "definition": obj{"name": "mcp__late__find", "description": "Find things.",
		"input_schema": obj{"type": "object", "properties": obj{"q": obj{"type": "string"}}}}}}}}

// TestToolAdditionServedAsSent: a role:"system" message of tool_addition
// blocks is carried as sent, in place while its turn is in the tail and in
// the dialogue once its turn folds, in every later request, through
// rebuilds; every request is valid and a fresh engine serves the same.
func TestToolAdditionServedAsSent(t *testing.T) {
	msgs := []obj{user(text("Read every module."))}
	msgs = append(msgs, readPair("toolu_a", "/w/a.go", fileLines("a", 150))...)
	msgs = append(msgs, toolAddition)
	for i := range 60 {
		msgs = append(msgs, readPair(fmt.Sprintf("toolu_r%03d", i), fmt.Sprintf("/w/m%02d.go", i), fileLines(fmt.Sprint("m", i), 150))...)
	}
	want := string(reqBody([]obj{toolAddition}))
	want = want[strings.Index(want, `{"content":[{"tool":`):]
	want = want[:strings.Index(want, `,"role":"system"}`)]
	e := New(Config{BudgetTokens: 4000, AlwaysEngage: true})
	rebuilds := 0
	for k := 6; k <= len(msgs); k += 2 {
		body := reqBody(msgs[:k])
		res, err := e.ProjectBody(context.Background(), body, "mid-conversation-tool-changes-2026-07-01")
		require.NoError(t, err)
		require.NoError(t, validate.Request(res.Body), "request of %d messages", k)
		if res.Reprojected {
			rebuilds++
		}
		var found int
		for _, m := range gjson.GetBytes(res.Body, "messages").Array() {
			if m.Get("role").Str == "system" && strings.Contains(m.Raw, `"tool_addition"`) {
				found++
				assert.JSONEq(t, gjson.Get(want+`}`, "content").Raw, m.Get("content").Raw, "request of %d messages: as sent", k)
			}
		}
		assert.Equal(t, 1, found, "request of %d messages: the tool_addition message, once", k)
		fresh, err := New(Config{BudgetTokens: 4000, AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
		require.NoError(t, err)
		assert.Equal(t, string(res.Body), string(fresh.Body), "request of %d messages: a fresh engine", k)
	}
	assert.GreaterOrEqual(t, rebuilds, 2, "rebuilds after the tool change")
}
