package projection

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

func project(t testing.TB, cfg Config, msgs []obj) *Result {
	t.Helper()
	r, err := New(cfg).ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	return r
}

// TestRandomConversationsProjectValid is the property test: every request
// of random conversations projects to a valid request, deterministically,
// and consecutive requests re-serve the previous prefix byte-identical
// except at re-projection points.
func TestRandomConversationsProjectValid(t *testing.T) {
	budgets := []int{8000, 20000}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		msgs := randomConversation(r, 10+r.IntN(50))
		cfg := Config{BudgetTokens: budgets[seed%2], AlwaysEngage: true}
		var prev []byte
		reprojections := 0
		warm := New(cfg) // memoises the conversation as a running proxy does
		for n := 3; n <= len(msgs); n++ {
			if msgs[n-1]["role"] != "user" {
				continue
			}
			body := reqBody(msgs[:n])
			require.NoError(t, validate.Request(body), "seed %d: the generated request itself", seed)
			res, err := warm.ProjectBody(context.Background(), body, "")
			require.NoError(t, err)
			require.NoError(t, validate.Request(res.Body), "seed %d request %d", seed, n)
			again := project(t, cfg, msgs[:n])
			require.Equal(t, string(again.Body), string(res.Body), "seed %d request %d: a fresh engine (a restarted proxy) serves the same bytes", seed, n)
			assert.LessOrEqual(t, res.Breakpoints, 4)
			if res.Reprojected {
				reprojections++
			} else if prev != nil {
				assert.Equal(t, -1, validate.PrefixBreak(prev, res.Body), "seed %d request %d: unsanctioned prefix change", seed, n)
			}
			prev = res.Body
		}
		if cfg.BudgetTokens == 8000 && len(msgs) > 60 {
			assert.Positive(t, reprojections, "seed %d: a long conversation over a small budget re-projects", seed)
		}
	}
}

func readPair(id, path, content string) []obj {
	return []obj{assistant(toolUse(id, "Read", obj{"file_path": path})), user(toolResult(id, content, false))}
}

func TestWorldKeepsGoalLatestPairAndMemory(t *testing.T) {
	msgs := []obj{user(text("Fix the bug in /w/a.go"))}
	content := numbered(strings.Split(strings.Repeat("package a\n", 400), "\n"))
	for i := range 30 {
		id := "toolu_r" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		msgs = append(msgs, readPair(id, "/w/f"+id+".go", content)...)
	}
	msgs = append(msgs,
		assistant(toolUse("toolu_py", "Bash", obj{"command": "python t.py"})),
		user(toolResult("toolu_py", "bash: python: command not found", true)))
	res := project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs)
	require.NoError(t, validate.Request(res.Body))
	ms := gjson.GetBytes(res.Body, "messages").Array()
	assert.Equal(t, "Fix the bug in /w/a.go", ms[0].Get("content.0.text").String(), "goal first, verbatim")
	last := ms[len(ms)-1]
	assert.Equal(t, "toolu_py", last.Get("content.0.tool_use_id").String(), "latest pair verbatim with its real id")
	assert.Equal(t, "toolu_py", ms[len(ms)-2].Get("content.0.id").String())
	reminder := last.Get("content.1.text").String()
	assert.Contains(t, reminder, "<system-reminder>")
	assert.Contains(t, reminder, "python3")
	assert.True(t, res.Reprojected || strings.Contains(string(res.Body), "toolu_syn"), "the world is re-emitted as synthetic exchanges")
	assert.Contains(t, string(res.Body), "were dropped from it", "evictions leave a trace")
	assert.Less(t, res.Stats.ServedBytes, res.Stats.OriginalBytes/2)
}

// projectUntilReprojected appends commands with 40 lines of output each
// until the engine re-projects, and returns that projection.
func projectUntilReprojected(t *testing.T, msgs []obj) *Result {
	t.Helper()
	var res *Result
	for i := 0; res == nil || !strings.Contains(res.Stats.Note, "reprojections=1"); i++ {
		require.Less(t, i, 200, "no re-projection")
		id := fmt.Sprintf("toolu_b%03d", i)
		msgs = append(msgs, assistant(toolUse(id, "Bash", obj{"command": "echo " + id})), user(toolResult(id, fileLines(id, 40), false)))
		res = project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs)
	}
	return res
}

// readThenCrowdedOut is a conversation that reads path, then 60 other
// files, enough for an 8,000-token budget to drop path.
func readThenCrowdedOut(path, content string) []obj {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", path, content)...)
	for i := range 60 {
		id := "toolu_c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		msgs = append(msgs, readPair(id, "/w/other"+id+".go", numbered(strings.Split(strings.Repeat("other\n", 200), "\n")))...)
	}
	return msgs
}

// rereadUnchanged is a Read of path that Claude Code answers with its
// "unchanged since last read" stub.
func rereadUnchanged(path string) []obj {
	return []obj{assistant(toolUse("toolu_again", "Read", obj{"file_path": path})),
		user(toolResult("toolu_again", "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.", false))}
}

// lastResult checks that res is a valid request and returns the content
// of its last message's first block.
func lastResult(t *testing.T, res *Result) string {
	t.Helper()
	require.NoError(t, validate.Request(res.Body))
	ms := gjson.GetBytes(res.Body, "messages").Array()
	return ms[len(ms)-1].Get("content.0.content").String()
}

func TestEditAppliedToCachedContent(t *testing.T) {
	content := numbered([]string{"package a", "func A() int { return 1 }"})
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", content)...)
	msgs = append(msgs,
		assistant(toolUse("toolu_2", "Edit", obj{"file_path": "/w/a.go", "old_string": "return 1", "new_string": "return 2"})),
		user(toolResult("toolu_2", "The file /w/a.go has been updated successfully.", false)))
	// Enough growth past the budget for a re-projection to pay: it folds
	// both into the world.
	res := projectUntilReprojected(t, msgs)
	require.NoError(t, validate.Request(res.Body))
	s := string(res.Body)
	assert.Contains(t, s, `func A() int { return 2 }`)
	assert.NotContains(t, s, `func A() int { return 1 }`, "the stale version is not served once folded")
	f := res.Visibility.Files["/w/a.go"]
	assert.Equal(t, 1, f.Visible[0].Start)
	assert.Equal(t, 2, f.Visible[0].End)
}

func TestUnchangedStubRestoredWhenEvicted(t *testing.T) {
	big := numbered(strings.Split(strings.Repeat("some code here\n", 300), "\n"))
	msgs := readThenCrowdedOut("/w/big.go", big)
	msgs = append(msgs, rereadUnchanged("/w/big.go")...)
	last := lastResult(t, project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs))
	assert.Contains(t, last, "some code here", "the model sees the content, not a stub for content it cannot see")
	assert.NotContains(t, last, "File unchanged since last read")
}

// An edit of a file the snapshot had dropped still reaches the content
// kept to restore it: Claude Code's "unchanged" answer to the next Read
// then restores the edited file, not the one before the edit.
func TestUnchangedStubRestoresEditedFile(t *testing.T) {
	lines := strings.Split(strings.Repeat("some code here\n", 300), "\n")
	lines[5] = "the marker line before the edit"
	msgs := readThenCrowdedOut("/w/big.go", numbered(lines))
	msgs = append(msgs,
		assistant(toolUse("toolu_e", "Edit", obj{"file_path": "/w/big.go", "old_string": "the marker line before the edit", "new_string": "the marker line after the edit"})),
		user(toolResult("toolu_e", "The file /w/big.go has been updated successfully.", false)))
	msgs = append(msgs, rereadUnchanged("/w/big.go")...)
	last := lastResult(t, project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs))
	assert.Contains(t, last, "the marker line after the edit", "the restored file has the edit")
	assert.NotContains(t, last, "the marker line before the edit")
}

// A partial Read of a file is dropped once the file is edited, with a
// note, rather than shown as it was before the edit.
func TestPartialReadDroppedAfterEdit(t *testing.T) {
	var part strings.Builder
	for n := 10; n < 15; n++ {
		fmt.Fprintf(&part, "%6d→line %d of a.go\n", n, n)
	}
	msgs := []obj{user(text("goal")),
		assistant(toolUse("toolu_1", "Read", obj{"file_path": "/w/a.go", "offset": 10, "limit": 5})),
		user(toolResult("toolu_1", part.String(), false)),
		assistant(toolUse("toolu_2", "Edit", obj{"file_path": "/w/a.go", "old_string": "line 12 of a.go", "new_string": "line twelve, edited"})),
		user(toolResult("toolu_2", "The file /w/a.go has been updated successfully.", false))}
	res := projectUntilReprojected(t, msgs)
	require.NoError(t, validate.Request(res.Body))
	s := string(res.Body)
	assert.NotContains(t, s, "line 12 of a.go", "the partial read is not served as it was before the edit")
	assert.Contains(t, s, "Read /w/a.go (lines 10-14): edited since it was read")
	assert.True(t, res.Visibility.Files["/w/a.go"].Evicted, "the hook lets the agent read it again")
}

func TestLargeFileNotEvictedTheTurnAfterItIsRead(t *testing.T) {
	huge := numbered(strings.Split(strings.Repeat("a long line of code in a huge file\n", 1500), "\n"))
	msgs := []obj{user(text("goal"))}
	for i := range 20 {
		id := "toolu_d" + string(rune('a'+i))
		msgs = append(msgs, assistant(toolUse(id, "Bash", obj{"command": "echo " + id})), user(toolResult(id, strings.Repeat("z", 3000), false)))
	}
	msgs = append(msgs, readPair("toolu_huge", "/w/huge.go", huge)...)
	msgs = append(msgs, assistant(toolUse("toolu_next", "Bash", obj{"command": "go test"})), user(toolResult("toolu_next", "FAIL", true)))
	res := project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs)
	require.NoError(t, validate.Request(res.Body))
	assert.Contains(t, string(res.Body), "a long line of code in a huge file")
	assert.False(t, res.Visibility.Files["/w/huge.go"].Evicted)
}

func TestSystemToolsAndBreakpoints(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", numbered([]string{"x"}))...)
	body := reqBody(msgs)
	body = []byte(strings.Replace(string(body), `"cache_control":{"type":"ephemeral"}`, `"cache_control":{"type":"ephemeral","ttl":"1h"}`, 1))
	for _, trim := range []bool{false, true} {
		r, err := New(Config{TrimTools: trim, AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
		require.NoError(t, err)
		require.NoError(t, validate.Request(r.Body))
		sys := gjson.GetBytes(r.Body, "system").Array()
		assert.True(t, strings.HasPrefix(sys[0].Get("text").String(), "x-anthropic-billing-header"))
		assert.True(t, strings.HasPrefix(sys[1].Get("text").String(), "You are a Claude agent"), "identity kept first")
		assert.Equal(t, Contract, sys[len(sys)-1].Get("text").String())
		assert.NotContains(t, string(r.Body), "SYNAXI-PROJECTION-WORKER")
		assert.NotContains(t, string(r.Body), `"ttl":"5m"`)
		assert.Contains(t, string(r.Body), `"ttl":"1h"`, "the client's TTL is kept")
		names := gjson.GetBytes(r.Body, "tools.#.name").Array()
		if trim {
			assert.Len(t, names, 7, "core tools kept, WebFetch and the MCP tool trimmed")
		} else {
			assert.Len(t, names, len(testTools))
		}
	}
}

// TestMainSessionKeepsItsSystemPrompt: a conversation that is not the
// synaxi-worker's (the user's main session, a subagent) keeps its system
// prompt, every block verbatim and in order, with the fold notice after
// it — as an array or as a string.
func TestMainSessionKeepsItsSystemPrompt(t *testing.T) {
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", numbered([]string{"x"}))...)
	rules := "You are an agent working with the user toward their goals.\n# Memory\nYou have a persistent file-based memory at /h/memory/."
	base := strings.Replace(string(reqBody(msgs)), `SYNAXI-PROJECTION-WORKER\nworker rules`, strings.ReplaceAll(rules, "\n", `\n`), 1)
	require.NotContains(t, base, "SYNAXI-PROJECTION-WORKER")
	r, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), []byte(base), "")
	require.NoError(t, err)
	require.True(t, r.Engaged)
	require.NoError(t, validate.Request(r.Body))
	var texts []string
	for _, b := range gjson.GetBytes(r.Body, "system").Array() {
		texts = append(texts, b.Get("text").String())
	}
	assert.Equal(t, []string{"x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;",
		"You are a Claude agent, built on Anthropic's Claude Agent SDK.", rules, FoldNotice}, texts)

	str, err := sjson.SetBytes([]byte(base), "system", rules)
	require.NoError(t, err)
	r, err = New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), str, "")
	require.NoError(t, err)
	require.NoError(t, validate.Request(r.Body))
	texts = texts[:0]
	for _, b := range gjson.GetBytes(r.Body, "system").Array() {
		texts = append(texts, b.Get("text").String())
	}
	assert.Equal(t, []string{rules, FoldNotice}, texts)
}

func TestTrimNeverDropsACalledTool(t *testing.T) {
	msgs := []obj{user(text("goal")),
		assistant(toolUse("toolu_1", "mcp__x__y", obj{})), user(toolResult("toolu_1", "ok", false))}
	r, err := New(Config{TrimTools: true, AlwaysEngage: true}).ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	require.NoError(t, validate.Request(r.Body))
	assert.Contains(t, gjson.GetBytes(r.Body, "tools.#.name").String(), "mcp__x__y")
}

func TestThinkingSignatureAndSystemMessageCarried(t *testing.T) {
	body := capturedBody(t, "worker-thinking")
	r, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
	require.NoError(t, err)
	require.NoError(t, validate.Request(r.Body))
	ms := gjson.GetBytes(r.Body, "messages").Array()
	require.Len(t, ms, 4)
	assert.Equal(t, "system", ms[1].Get("role").String())
	assert.Equal(t, gjson.GetBytes(body, "messages.1.output_config").Raw, ms[1].Get("output_config").Raw, "extra message fields travel")
	assert.Equal(t, gjson.GetBytes(body, "messages.2.content.0.signature").String(), ms[2].Get("content.0.signature").String())
}

func TestMalformedBodiesFail(t *testing.T) {
	for _, b := range []string{``, `{`, `{"messages":[]}`, `{"messages":"x"}`, `{"messages":[{"role":"assistant","content":"hi"}]}`, `{"messages":[{"content":"x"}]}`} {
		_, err := New(Config{AlwaysEngage: true}).ProjectBody(context.Background(), []byte(b), "")
		assert.Error(t, err, b)
	}
}

func TestEmptySystemMessageAfterCompactCarried(t *testing.T) {
	msgs := []obj{user(text("This session is being continued from a previous conversation. Summary: ...")),
		{"role": "system", "content": ""},
		assistant(toolUse("toolu_1", "Bash", obj{"command": "ls"})), user(toolResult("toolu_1", "a.go", false))}
	r := project(t, Config{AlwaysEngage: true}, msgs)
	require.NoError(t, validate.Request(r.Body))
	assert.Equal(t, `{"role":"system","content":""}`, gjson.GetBytes(r.Body, "messages.1").Raw)
}

// An invalid body is folded beside its validation (the fold reads it
// without failing) but never served or memoised: truncated and corrupted
// copies of a long conversation each return the invalid-body error, and
// the engine remembers nothing of them.
func TestInvalidBodyNotServedNorMemoised(t *testing.T) {
	body := reqBody(benchConversation()[:80])
	require.NoError(t, validate.Request(body))
	eng := New(Config{AlwaysEngage: true})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		bad := bytes.Clone(body)
		if i%2 == 0 {
			bad = bad[:len(bad)/4+r.IntN(len(bad)*3/4)]
		} else {
			bad[len(bad)/4+r.IntN(len(bad)*3/4)] = '"'
		}
		if json.Valid(bad) {
			continue
		}
		_, err := eng.ProjectBody(context.Background(), bad, "")
		require.Error(t, err, "case %d", i)
	}
	assert.Empty(t, eng.memo.m, "nothing of an invalid body is memoised")
	_, err := eng.ProjectBody(context.Background(), body, "")
	require.NoError(t, err)
	assert.Len(t, eng.memo.m, 1)
}
