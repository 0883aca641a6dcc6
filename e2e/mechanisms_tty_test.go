package e2e_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// TestPlanModeProjectedRealClient: an interactive routed session started
// in plan mode. The agent reads sixteen modules (read-only work) under
// Claude Code's plan-mode reminder, proposes its plan with ExitPlanMode,
// the person approves it in the client's dialog, and the agent goes on
// out of plan mode. The request carrying the ExitPlanMode call is served
// as the engine's projection, and every request is valid.
func TestPlanModeProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, _, fake, proxy := mechanismSession(t)
	approvePlan(t, e)
	planned := 0
	for _, r := range fake.MessagesRequests() {
		if strings.Contains(string(r.Body), "Plan mode is active") {
			planned++
		}
	}
	assert.Positive(t, planned, "the plan-mode reminder reached the model")
	t.Logf("%d requests with the plan-mode reminder; %s; %s", planned,
		checkServed(t, e, fake, proxy, `"name":"ExitPlanMode","input"`), time.Since(start).Round(time.Second))
}

// approvePlan runs the client in tmux in plan mode: the person asks for a
// plan of sixteen module reads, approves the agent's ExitPlanMode in the
// client's dialog and, out of plan mode, asks for four more reads.
func approvePlan(t *testing.T, e *claudecli.Env) {
	t.Helper()
	term := startTTYMode(t, e, e.Work, "plan")
	term.waitFor("plan mode on", 2*time.Minute)
	submit(term, "Plan how to read m01.py to m16.py.")
	term.waitFor("Exit plan mode?", 3*time.Minute)
	for i := 0; i < 20 && strings.Contains(term.screen(), "Exit plan mode?"); i++ {
		term.key("Enter") // 1. Yes (again while the dialog is still taking keys)
		time.Sleep(500 * time.Millisecond)
	}
	term.waitFor("Plan approved; ready to work.", time.Minute)
	submit(term, "Now read m17.py to m20.py.")
	term.waitFor("Done: read m17 to m20.", 2*time.Minute)
	term.stop()
}

// TestRewindProjectedRealClient: an interactive routed session reads
// sixteen modules, the person types a codeword, then rewinds (Esc Esc,
// the message before the codeword, "Restore conversation") and asks for
// it: the next request, served as the engine's projection of the history
// before that message, no longer holds it, and every request is valid.
func TestRewindProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, fake, proxy, term := codewordSession(t)
	before := len(fake.MessagesRequests())
	openRewind(t, term)
	term.key("Up") // the codeword's message
	term.key("Enter")
	term.waitFor("Restore conversation", 30*time.Second)
	term.key("Enter")
	time.Sleep(time.Second)
	term.key("C-u") // the restored message comes back into the input box
	submit(term, "Which codeword did I give you?")
	term.waitFor("No codeword in view.", time.Minute)
	term.stop()

	after := fake.MessagesRequests()[before:]
	require.NotEmpty(t, after)
	for _, r := range after {
		assert.NotContains(t, string(r.Body), "HERON-7", "the rewound message is gone")
	}
	t.Logf("%s; %s", checkServed(t, e, fake, proxy, "Which codeword did I give you?"), time.Since(start).Round(time.Second))
}

// TestSummarizeFromHereProjectedRealClient: an interactive routed session
// reads sixteen modules, the person types a codeword and asks for four
// more reads, then rewinds to the codeword's message and picks "Summarize
// from here". The summary request (Claude Code's compaction prompt, for
// the recent part) passes as sent; the conversation that follows (the
// kept part, the summary) is projected again and every request is valid.
func TestSummarizeFromHereProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, fake, proxy, term := codewordSession(t)
	submit(term, "Now read m17.py to m20.py.")
	term.waitTurnOver("Done: read m17 to m20.", time.Minute)
	openRewind(t, term)
	term.key("Up")
	term.key("Up") // the codeword's message
	term.key("Enter")
	term.waitFor("Summarize from here", 30*time.Second)
	term.key("Down")
	term.key("Enter")
	term.waitFor("Conversation summarized", 2*time.Minute)
	term.key("C-u") // the message summarized from comes back into the input box
	submit(term, "Now read m21.py to m24.py.")
	term.waitFor("Done: read m21 to m24.", 2*time.Minute)
	term.stop()
	served := checkServed(t, e, fake, proxy, "Now read m21.py to m24.py.")
	rows := readLedger(t, e)
	summary := -1
	for i, r := range rows {
		if strings.HasPrefix(r.Passed, "compaction") {
			summary = i
		}
	}
	require.Positive(t, summary, "the summary request passed as sent: %s", rowMarks(rows))
	assert.Contains(t, rowMarks(rows[summary:]), "E", "the engine projects after the summary")
	t.Logf("%s; %s", served, time.Since(start).Round(time.Second))
}

// codewordSession starts an interactive routed session of the mechanism
// agent in tmux in which the person has had sixteen modules read and then
// typed the codeword HERON-7.
func codewordSession(t *testing.T) (*claudecli.Env, *fakeapi.Server, *runningProxy, *tty) {
	t.Helper()
	e, _, fake, proxy := mechanismSession(t)
	term := startTTY(t, e, e.Work)
	term.waitFor("bypass permissions on", 2*time.Minute)
	submit(term, "Please read m01.py to m16.py.")
	term.waitFor("Done: read m01 to m16.", 3*time.Minute)
	submit(term, "Remember the codeword HERON-7 for later.")
	term.waitTurnOver("Noted the codeword.", time.Minute)
	return e, fake, proxy, term
}

// openRewind presses Esc Esc and waits for the rewind dialog's list of
// the person's messages.
func openRewind(t *testing.T, term *tty) {
	t.Helper()
	require.NoError(t, exec.Command(term.tmux, "send-keys", "-t", term.name, "Escape", "Escape").Run())
	term.waitFor("Restore the code and/or conversation", 30*time.Second)
}
