package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

// personAgent plays the model of a routed main session with a person in
// the loop, one behaviour per typed turn: the survey (after a `wc -l` of
// the modules, the command output the user asks about later), noting a
// codeword, re-reading the modules in reverse, answering about both from
// what the request shows (or recovering the count with one `wc -l`), the
// compaction summary, and reading a few modules after compaction.
type personAgent struct {
	dir        string
	survey     fakeapi.Agent
	mu         sync.Mutex
	recoveries int
	answer     string
	issued     map[string]bool // typed turn + path: the reads asked for in that turn
}

// personModules is the size of the person-in-the-loop session's survey:
// about twice the 8K budget it is projected with.
const personModules = 12

var (
	codewordRE = regexp.MustCompile(`codeword ([A-Z]+-\d+)`)
	wcTotalRE  = regexp.MustCompile(`(\d+) total`)
)

func (a *personAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	typed, since := v.TypedTurn()
	wc := "wc -l " + filepath.Join(a.dir, "mods") + "/*.go"
	ran := func(cmd string) (fakeapi.Call, bool) {
		for _, c := range since {
			if c.Name == "Bash" && c.Input["command"] == cmd && c.Answered {
				return c, true
			}
		}
		return fakeapi.Call{}, false
	}
	mod := func(i int) string { return filepath.Join(a.dir, "mods", fmt.Sprintf("m%02d.go", i)) }
	readAll := func(order []int, done string) fakeapi.Reply {
		// The reads of this turn may be folded out of view: the agent
		// remembers what it asked for in it.
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.issued == nil {
			a.issued = map[string]bool{}
		}
		for _, i := range order {
			if key := typed + "\x00" + mod(i); !a.issued[key] {
				a.issued[key] = true
				return fakeapi.Reply{Text: "Reading " + mod(i), ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{"file_path": mod(i)}}}}
			}
		}
		return fakeapi.Reply{Text: done}
	}
	switch {
	case strings.Contains(typed, "Your task is to create a detailed summary"):
		return fakeapi.Reply{Text: "<analysis>Surveyed the modules.</analysis>\n<summary>1. The user asked for a survey of the modules; it is done. The codeword is PELICAN-42.</summary>"}
	case strings.Contains(typed, "Survey every module"):
		if _, ok := ran(wc); !ok {
			return fakeapi.Reply{Text: "Counting lines first.", ToolUses: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]any{"command": wc, "description": "count lines"}}}}
		}
		return a.survey.Respond(v)
	case strings.Contains(typed, "Remember the codeword"):
		return fakeapi.Reply{Text: "Noted."}
	case strings.Contains(typed, "in reverse"):
		order := make([]int, 0, personModules)
		for i := personModules; i >= 1; i-- {
			order = append(order, i)
		}
		return readAll(order, "Re-read them all.")
	case strings.Contains(typed, "What was the codeword"):
		visible := v.VisibleText()
		total := wcTotalRE.FindStringSubmatch(visible)
		if total == nil {
			if _, ok := ran(wc); !ok {
				a.mu.Lock()
				a.recoveries++
				a.mu.Unlock()
				return fakeapi.Reply{Text: "That output is no longer in view; running it again.", ToolUses: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]any{"command": wc, "description": "count lines"}}}}
			}
			total = []string{"", "unknown"}
		}
		word := "unknown"
		if m := codewordRE.FindStringSubmatch(visible); m != nil {
			word = m[1]
		}
		a.mu.Lock()
		a.answer = fmt.Sprintf("The codeword is %s; wc counted %s lines in total.", word, total[1])
		a.mu.Unlock()
		return fakeapi.Reply{Text: a.answer}
	case strings.Contains(typed, "after compaction"):
		return readAll([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "Read the modules after compaction.")
	}
	return fakeapi.Reply{Text: "I do not know what to do with: " + typed}
}

// TestRoutedSessionWithPersonInTheLoop: a routed main session (real
// client, proxy with the default scope and an 8K budget so it folds
// early) over several typed turns resumed with --resume: the survey after
// a `wc -l`, a codeword typed by the user, a long re-read, then a
// question about both. The agent answers the codeword from what it sees
// and recovers the folded command output with at most one call; every
// line the user typed is in every later request of the session the
// upstream received. Then /compact (its summary request passes as sent)
// and a turn after it whose requests are projected again; every request
// passes the fake upstream's strict validation.
func TestRoutedSessionWithPersonInTheLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	env := claudecli.NewEnv(t, "")
	writeSurveyRepoN(t, env.Work, personModules, 6)
	var mu sync.Mutex
	agent := &personAgent{dir: env.Work, survey: surveyAgentN(env.Work, personModules, map[string]int{}, &mu)}
	fake := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(fake.Close)
	base, logPath := startProxy(t, append(env.Environ(), fmt.Sprintf("SYNAXI_PROJECTION_BUDGET_TOKENS=%d", surveyBudget)), fake.URL())
	env.BaseURL = base
	session := "5e55f0a1-28e1-4c0d-9a7e-000000000028"

	typed := []string{
		surveyTaskN(env.Work, personModules),
		"Remember the codeword PELICAN-42 for later.",
		"Now read every module again in reverse order.",
		"What was the codeword, and how many lines did wc count in total?",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		res, err := env.Run(ctx, append([]string{"-p", "--permission-mode", "bypassPermissions"}, args...)...)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s\nproxy log: %s", res.Stdout, res.Stderr, logPath)
		return res.Stdout
	}
	run("--session-id", session, typed[0])
	var out string
	for _, line := range typed[1:] {
		out = run("--resume", session, line)
	}
	assert.Contains(t, out, "The codeword is PELICAN-42", "answered from what the request shows")
	assert.Regexp(t, `wc counted \d+ lines in total`, out)
	agent.mu.Lock()
	assert.LessOrEqual(t, agent.recoveries, 1, "the folded output came back with at most one call")
	t.Logf("answer: %s (recovery calls: %d)", agent.answer, agent.recoveries)
	agent.mu.Unlock()

	// Every line the user typed is in every later request of the session.
	var seen []int // for each request, how many of the typed lines it holds: never fewer than before
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
		if r.Side || r.Header.Get("X-Claude-Code-Session-Id") != session {
			continue
		}
		n := 0
		for _, line := range typed {
			if strings.Contains(string(r.Body), fakeapi.JSONText(line)) {
				n++
			}
		}
		if len(seen) > 0 {
			require.GreaterOrEqual(t, n, seen[len(seen)-1], "a typed line went missing from a later request")
		}
		seen = append(seen, n)
	}
	require.Equal(t, len(typed), seen[len(seen)-1])

	rows, err := ledger.Rows(xdg.Dirs{State: env.StateDir()})
	require.NoError(t, err)
	before := 0
	for _, r := range rows {
		if r.Projected {
			before++
		}
	}
	require.Positive(t, before, "the session was projected before compaction")

	// /compact: the summary request passes as sent; the turn after it is
	// projected again from the compacted history.
	run("--resume", session, "/compact")
	n := len(fake.MessagesRequests())
	run("--resume", session, "Now, after compaction, read the modules again.")
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
	}
	rows, err = ledger.Rows(xdg.Dirs{State: env.StateDir()})
	require.NoError(t, err)
	passed, after := 0, 0
	for _, r := range rows {
		if strings.HasPrefix(r.Passed, "compaction") {
			passed++
		}
		if r.Projected {
			after++
		}
	}
	assert.Positive(t, passed, "the compaction summary request passed as sent")
	t.Logf("%d requests after /compact; projected rows before %d, after %d, compaction passes %d; typed lines per request %v",
		len(fake.MessagesRequests())-n, before, after, passed, seen)
	assert.Greater(t, after, before, "requests after compaction are projected again")
}
