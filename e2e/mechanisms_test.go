package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// Claude Code's own mechanisms in a routed main session (docs/projection.md,
// "Claude Code's own mechanisms"), each driven through the real client
// with the reading agent, sixteen module reads long so the engine serves
// its own projection (see readingSession's budget).

// foldNote is in the note that lists what a projected request dropped.
const foldNote = "the results of these earlier calls were dropped from it"

// syntheticID opens the ids of the exchanges the engine re-emits: a body
// holding one was served as the engine's projection.
const syntheticID = `"toolu_syn`

// servedProjection reports whether body was served as the engine's
// projection: it re-emits an exchange, or its fold note says what it
// dropped (a rebuild whose snapshot keeps no entry re-emits none; the
// first call of a stubbed tool, such as TaskUpdate, can be one).
func servedProjection(body []byte) bool {
	return strings.Contains(string(body), syntheticID) || strings.Contains(string(body), foldNote)
}

var (
	outputFileRE = regexp.MustCompile(`<output-file>([^<]+)</output-file>`)
	taskCreated  = regexp.MustCompile(`Task #(\d+) created successfully: (.+)`)
	taskLine     = regexp.MustCompile(`#(\d+) \[(\w+)\] (.+)`)
	// noteCreation is a fold note's line for a task creation, in a body.
	noteCreation = regexp.MustCompile(`- TaskCreate \{.{0,300}?\} → Task #\d+ created successfully: Read m\d\d to m\d\d`)
)

// mechanismAgent is the reading agent with one behaviour per mechanism,
// chosen by the typed turn: a background count, task tracking, a plan.
type mechanismAgent struct {
	*ttyPersonAgent
	slow  string // the background command: it counts once flag exists
	flag  string
	loads []string // the tools it loaded with ToolSearch (under mu)
}

func (a *mechanismAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	typed, since := v.TypedTurn()
	switch {
	case strings.Contains(typed, "in the background"):
		return a.background(v, since)
	case strings.Contains(typed, "as two tasks"):
		return a.tasks(v, since)
	case strings.Contains(typed, "Plan how to"):
		return a.plan(v, since)
	case strings.Contains(typed, "Which codeword"):
		if m := codewordRE.FindStringSubmatch(v.VisibleText()); m != nil {
			return fakeapi.Reply{Text: "The codeword in view is " + m[1] + "."}
		}
		return fakeapi.Reply{Text: "No codeword in view."}
	}
	return a.ttyPersonAgent.Respond(v)
}

// answered is the latest answered call of since that matches.
func answered(since []fakeapi.Call, match func(fakeapi.Call) bool) (fakeapi.Call, bool) {
	for i := len(since) - 1; i >= 0; i-- {
		if since[i].Answered && match(since[i]) {
			return since[i], true
		}
	}
	return fakeapi.Call{}, false
}

// background starts the slow command in the background, reads the
// modules, lets the command finish (it waits for a flag file) and ends the
// turn; Claude Code's task notification then names the command's output
// file, which the agent reads, and it reports the count.
func (a *mechanismAgent) background(v *fakeapi.View, since []fakeapi.Call) fakeapi.Reply {
	if len(since) == 0 {
		return fakeapi.Reply{Text: "Starting the count.", ToolUses: []fakeapi.ToolUse{{Name: "Bash",
			Input: map[string]any{"command": a.slow, "description": "slow count", "run_in_background": true}}}}
	}
	var out fakeapi.Call
	if m := outputFileRE.FindStringSubmatch(v.VisibleText()); m != nil {
		var ok bool
		out, ok = answered(since, func(c fakeapi.Call) bool { return c.Name == "Read" && c.Input["file_path"] == m[1] })
		if !ok {
			return fakeapi.Reply{Text: "The count finished.", ToolUses: []fakeapi.ToolUse{readUse(m[1])}}
		}
	}
	r := a.ttyPersonAgent.Respond(v)
	if len(r.ToolUses) > 0 {
		return r
	}
	touch := "touch " + a.flag
	if _, ok := answered(since, func(c fakeapi.Call) bool { return c.Name == "Bash" && c.Input["command"] == touch }); !ok {
		return fakeapi.Reply{Text: "Letting the count finish.", ToolUses: []fakeapi.ToolUse{bashUse(touch)}}
	}
	if !out.Answered {
		return fakeapi.Reply{Text: r.Text + " Waiting for the count."}
	}
	total := wcTotalRE.FindString(out.Result)
	return fakeapi.Reply{Text: r.Text + " Background count: " + total}
}

// tasks tracks the reading as two tasks: it creates them at the turn's
// start, reads the modules, then marks each task completed by the id the
// request shows, from its creation's result (or the fold note's line for
// it) or from a TaskList result.
// When the creations are no longer in view (folded with the reads) it
// does not create them again: it calls TaskList once and takes the ids
// from there. It ends with the list's statuses from a last TaskList.
func (a *mechanismAgent) tasks(v *fakeapi.View, since []fakeapi.Call) fakeapi.Reply {
	subjects := []string{"Read m01 to m08", "Read m09 to m16"}
	created, others := 0, 0
	for _, c := range since {
		if c.Name == "TaskCreate" {
			created++
		} else {
			others++
		}
	}
	if others == 0 && created < len(subjects) { // nothing else done yet this turn
		return fakeapi.Reply{Text: "Tracking it.", ToolUses: []fakeapi.ToolUse{{Name: "TaskCreate",
			Input: map[string]any{"subject": subjects[created], "description": subjects[created] + " of the modules"}}}}
	}
	if r := a.ttyPersonAgent.Respond(v); len(r.ToolUses) > 0 {
		return r
	}
	ids := map[string]string{} // subject → id, from what the request shows
	for _, m := range taskCreated.FindAllStringSubmatch(v.VisibleText(), -1) {
		ids[strings.TrimSpace(m[2])] = m[1]
	}
	list, listed := answered(since, func(c fakeapi.Call) bool { return c.Name == "TaskList" })
	for _, m := range taskLine.FindAllStringSubmatch(list.Result, -1) {
		ids[strings.TrimSpace(m[3])] = m[1]
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range subjects {
		id, ok := ids[s]
		if !ok && listed {
			return fakeapi.Reply{Text: "The task list has no " + s + "."}
		}
		if !ok {
			a.recoveries = append(a.recoveries, "TaskList")
			return fakeapi.Reply{Text: "Looking the tasks up.", ToolUses: []fakeapi.ToolUse{{Name: "TaskList", Input: map[string]any{}}}}
		}
		if _, done := answered(since, func(c fakeapi.Call) bool { return c.Name == "TaskUpdate" && c.Input["taskId"] == id }); !done {
			return fakeapi.Reply{Text: "Done with " + s, ToolUses: []fakeapi.ToolUse{{Name: "TaskUpdate", Input: map[string]any{"taskId": id, "status": "completed"}}}}
		}
	}
	if last, ok := v.LastToolResult(); !ok || last.Name != "TaskList" {
		return fakeapi.Reply{Text: "Checking the list.", ToolUses: []fakeapi.ToolUse{{Name: "TaskList", Input: map[string]any{}}}}
	}
	last, _ := v.LastToolResult()
	tasks := taskLine.FindAllStringSubmatch(last.Result, -1)
	return fakeapi.Reply{Text: fmt.Sprintf("Tasks: %d of %d completed.", strings.Count(last.Result, "[completed]"), len(tasks))}
}

// plan reads the modules (read-only work, allowed in plan mode), then
// proposes the plan with ExitPlanMode and, once it is answered, says
// whether it was approved.
func (a *mechanismAgent) plan(v *fakeapi.View, since []fakeapi.Call) fakeapi.Reply {
	if c, ok := answered(since, func(c fakeapi.Call) bool { return c.Name == "ExitPlanMode" }); ok {
		if c.IsError {
			return fakeapi.Reply{Text: "The plan was not approved: " + c.Result}
		}
		return fakeapi.Reply{Text: "Plan approved; ready to work."}
	}
	if r := a.ttyPersonAgent.Respond(v); len(r.ToolUses) > 0 {
		return r
	}
	if !strings.Contains(v.VisibleText(), "Plan mode is active") {
		return fakeapi.Reply{Text: "Plan mode is not active."}
	}
	if !v.HasTool("ExitPlanMode") {
		return a.load(v, "ExitPlanMode")
	}
	return fakeapi.Reply{Text: "Here is the plan.", ToolUses: []fakeapi.ToolUse{{Name: "ExitPlanMode",
		Input: map[string]any{"plan": "1. Summarise each module read.\n2. Fix what the summary finds."}}}}
}

// deferredHint is how Claude Code 2.1.332 tells the model to load a tool
// it names as deferred (its schema is not in the request's tools).
const deferredHint = `Use ToolSearch with query "select:<name>`

// load loads a tool the request names as deferred with one ToolSearch
// call, the query form the request gives, as a model would before calling
// it; without such a name it says the tool is missing.
func (a *mechanismAgent) load(v *fakeapi.View, name string) fakeapi.Reply {
	visible := v.VisibleText()
	named := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `$`).MatchString(visible)
	if !named || !strings.Contains(visible, deferredHint) || !v.HasTool("ToolSearch") {
		return fakeapi.Reply{Text: name + " is not available."}
	}
	a.mu.Lock()
	a.loads = append(a.loads, name)
	a.mu.Unlock()
	return fakeapi.Reply{Text: "Loading " + name + ".", ToolUses: []fakeapi.ToolUse{{Name: "ToolSearch",
		Input: map[string]any{"query": "select:" + name}}}}
}

// mechanismSession is a reading session of the mechanism agent.
func mechanismSession(t *testing.T) (*claudecli.Env, *mechanismAgent, *fakeapi.Server, *runningProxy) {
	t.Helper()
	a := &mechanismAgent{}
	e, _, fake, proxy := readingSession(t, false, func(r *ttyPersonAgent) fakeapi.Agent {
		a.ttyPersonAgent = r
		a.flag = filepath.Join(r.mods, "..", "reads.done")
		a.slow = "while [ ! -e " + a.flag + " ]; do sleep 0.2; done; sleep 2; " + r.wc + " | tail -1"
		return a
	})
	return e, a, fake, proxy
}

// printTurn runs one print-mode turn of the client and returns its output.
func printTurn(t *testing.T, e *claudecli.Env, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, append([]string{"-p", "--permission-mode", "bypassPermissions"}, args...)...)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	return res.Stdout
}

// checkServed asserts that every request passed strict validation, that
// the engine projected some (engaged ledger rows), and that the requests
// whose bodies hold mark include one served as the engine's projection;
// it returns the ledger's marks for the log.
func checkServed(t *testing.T, e *claudecli.Env, fake *fakeapi.Server, proxy *runningProxy, mark string) string {
	t.Helper()
	marked, projected := 0, 0
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
		if !r.Side && strings.Contains(string(r.Body), mark) {
			marked++
			if servedProjection(r.Body) {
				projected++
			}
		}
	}
	assert.Positive(t, marked, "requests hold %q", mark)
	assert.Positive(t, projected, "a request holding %q was served as the engine's projection", mark)
	var marks string
	require.Eventually(t, func() bool {
		marks = rowMarks(readLedger(t, e))
		return len(marks) >= len(fake.MessagesRequests())
	}, 30*time.Second, 200*time.Millisecond, "a ledger row per request")
	assert.Contains(t, marks, "E", "the engine projected requests")
	assert.Zero(t, proxy.health(t).FailOpens)
	return fmt.Sprintf("%d requests hold %q, %d of them projected; ledger %s", marked, mark, projected, marks)
}

// TestBackgroundTaskProjectedRealClient: a `run_in_background` Bash
// started at the turn's start finishes only after the agent has read
// sixteen modules and ended its turn; Claude Code's task notification (the
// command's output file) then reaches the model in a projected request,
// and the agent reads the output and reports the count.
func TestBackgroundTaskProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, _, fake, proxy := mechanismSession(t)
	out := printTurn(t, e, "Run the slow count in the background, then read m01.py to m16.py.")
	assert.Contains(t, out, fmt.Sprintf("Background count: %d total", personTTYModules*2*personTTYLines))
	var waited bool // the turn ended before the notification came
	for _, r := range fake.MessagesRequests() {
		if strings.Contains(string(r.Body), "Waiting for the count.") && strings.Contains(string(r.Body), "<output-file>") {
			waited = true
		}
	}
	assert.True(t, waited, "the notification came after the turn ended")
	t.Logf("%s; %s", checkServed(t, e, fake, proxy, "<output-file>"), time.Since(start).Round(time.Second))
}

// TestTaskListProjectedRealClient: the task list (Claude Code 2.1.332's
// TaskCreate/TaskUpdate/TaskList, offered for models such as
// claude-sonnet-4-6; it lists no TodoWrite) written at the turn's start is
// used after sixteen module reads. By then the engine has folded the
// creations' exchanges out of view, and its fold note lists each creation
// with its result ("TaskCreate {…} → Task #1 created successfully: …"),
// so the agent takes the ids from the note with no recovery call, marks
// both tasks completed, and a last TaskList shows exactly the two tasks,
// completed: no task was created twice. On the fake's received bytes the
// requests of the updates hold no creation exchange and both note lines.
func TestTaskListProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, a, fake, proxy := mechanismSession(t)
	out := printTurn(t, e, "--model", "claude-sonnet-4-6", "Track the work as two tasks, then read m01.py to m16.py.")
	assert.Contains(t, out, "Tasks: 2 of 2 completed.")
	a.mu.Lock()
	recoveries := append([]string(nil), a.recoveries...)
	a.mu.Unlock()
	assert.Empty(t, recoveries, "the ids are in the fold note: no TaskList to recover them")
	calls := map[string]string{} // tool_use id → tool name, over every request but re-emitted ones
	updates := 0
	for _, r := range fake.MessagesRequests() {
		body := string(r.Body)
		for _, b := range requestBlocks(t, r.Body) {
			var id, name string
			if string(b["type"]) == `"tool_use"` && json.Unmarshal(b["id"], &id) == nil && json.Unmarshal(b["name"], &name) == nil &&
				!strings.HasPrefix(id, strings.Trim(syntheticID, `"`)) {
				calls[id] = name
			}
		}
		if strings.Contains(body, "Updated task #") {
			updates++
			assert.Len(t, noteCreation.FindAllString(body, -1), 2, "the updates' requests list both creations in the fold note")
			assert.Equal(t, 2, strings.Count(body, "created successfully"), "and hold no creation exchange")
			assert.Contains(t, body, foldNote, "module reads were folded before the update")
		}
	}
	count := map[string]int{}
	for _, name := range calls {
		count[name]++
	}
	assert.Equal(t, 2, count["TaskCreate"], "each task created once")
	assert.Equal(t, 2, count["TaskUpdate"])
	assert.Equal(t, 1, count["TaskList"], "the last check only")
	assert.Positive(t, updates)
	t.Logf("calls %v; %s; %s", count, checkServed(t, e, fake, proxy, "Updated task #"), time.Since(start).Round(time.Second))
}
