package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
)

// recallTool is the synaxi MCP server's recall tool as the installed
// plugin's main session lists it.
const recallTool = "mcp__plugin_synaxi_synaxi__recall"

// compactPrompt opens Claude Code's compaction summary request.
const compactPrompt = "Your task is to create a detailed summary"

var (
	codewordRE = regexp.MustCompile(`codeword ([A-Z]+-\d+)`)
	wcTotalRE  = regexp.MustCompile(`(\d+) total`)
	// readsRE is a typed request to read a range of modules.
	readsRE = regexp.MustCompile(`read m(\d\d)\.py to m(\d\d)\.py`)
)

// recallRef finds the reference the fold note gives the output of cmd.
func recallRef(visible, cmd string) string {
	re := regexp.MustCompile("Bash `" + regexp.QuoteMeta(cmd) + "` \\(~\\d+ tokens\\) \\[recall (r[0-9a-f]{16})\\]")
	if m := re.FindStringSubmatch(visible); m != nil {
		return m[1]
	}
	return ""
}

// ttyPersonAgent plays the model of an interactive routed main session,
// one behaviour per typed turn, acting only on what the request shows: it
// counts the modules' lines with wc, reads the ranges of modules it is
// asked for (one per request), notes a codeword, answers what the
// codeword and the wc total were from the request — recovering a folded
// wc output with one call, the recall tool when the request offers it and
// names the output's reference, else a re-run — and writes the
// compaction summary.
type ttyPersonAgent struct {
	mods, wc   string
	mu         sync.Mutex
	issued     map[string]bool // typed turn + path: the reads asked for in that turn
	recoveries []string        // the tool each recovery called
	answer     string
}

func (a *ttyPersonAgent) mod(i int) string { return filepath.Join(a.mods, fmt.Sprintf("m%02d.py", i)) }

func (a *ttyPersonAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	typed, since := v.TypedTurn()
	var last fakeapi.Call // the latest answered call of this turn
	for _, c := range since {
		if c.Answered {
			last = c
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case strings.Contains(typed, compactPrompt):
		return fakeapi.Reply{Text: "<analysis>Read the modules.</analysis>\n<summary>1. The user had the modules counted and read; the codeword is PELICAN-42.</summary>"}
	case strings.Contains(typed, "Remember the codeword"):
		return fakeapi.Reply{Text: "Noted the codeword."}
	case strings.Contains(typed, "What was the codeword"):
		return a.recall(v, since, last)
	}
	m := readsRE.FindStringSubmatch(typed)
	if m == nil {
		return fakeapi.Reply{Text: "I do not know what to do with: " + typed}
	}
	if strings.Contains(typed, "count the lines") && len(since) == 0 {
		return fakeapi.Reply{Text: "Counting lines first.", ToolUses: []fakeapi.ToolUse{bashUse(a.wc)}}
	}
	// The reads of this turn may be folded out of view by now: the agent
	// remembers what it asked for in it.
	from, _ := strconv.Atoi(m[1])
	to, _ := strconv.Atoi(m[2])
	if a.issued == nil {
		a.issued = map[string]bool{}
	}
	for i := from; i <= to; i++ {
		if key := typed + "\x00" + a.mod(i); !a.issued[key] {
			a.issued[key] = true
			return fakeapi.Reply{Text: "Reading " + a.mod(i), ToolUses: []fakeapi.ToolUse{readUse(a.mod(i))}}
		}
	}
	return fakeapi.Reply{Text: fmt.Sprintf("Done: read m%02d to m%02d.", from, to)}
}

// recall answers the question about the codeword and the wc total from
// the request, or recovers the total with one call.
func (a *ttyPersonAgent) recall(v *fakeapi.View, since []fakeapi.Call, last fakeapi.Call) fakeapi.Reply {
	visible := v.VisibleText()
	total := wcTotalRE.FindStringSubmatch(visible)
	if last.Answered {
		total = wcTotalRE.FindStringSubmatch(last.Result)
	}
	if total == nil && len(since) == 0 {
		if ref := recallRef(visible, a.wc); ref != "" && v.HasTool(recallTool) {
			a.recoveries = append(a.recoveries, "recall")
			return fakeapi.Reply{Text: "That output was folded; recalling it.", ToolUses: []fakeapi.ToolUse{{Name: recallTool, Input: map[string]any{"ref": ref}}}}
		}
		a.recoveries = append(a.recoveries, "re-run")
		return fakeapi.Reply{Text: "That output is no longer in view; running it again.", ToolUses: []fakeapi.ToolUse{bashUse(a.wc)}}
	}
	count := "unknown"
	if total != nil {
		count = total[1]
	}
	word := "unknown"
	if m := codewordRE.FindStringSubmatch(visible); m != nil {
		word = m[1]
	}
	a.answer = fmt.Sprintf("The codeword is %s; wc counted %s lines in total.", word, count)
	return fakeapi.Reply{Text: a.answer}
}

// The reading sessions' size: modules of about 3,000 tokens (12 KB)
// against a pinned 4K-token budget, so folding happens within a test-sized
// session (the default budget follows the working set, and the engine
// engages only once its cost model predicts a saving: here after about 14
// requests of a conversation, about 18 after /compact, whose first message
// carries the files Claude Code re-attaches). The history stays under the
// share of the window above which the proxy gates a compaction summary
// request instead of passing it.
const (
	personTTYModules = 24
	personTTYLines   = 160 // sourceFile pairs: 320 lines, about 12 KB
	personTTYBudget  = 4000
)

// readingSession sets up a routed main session of the reading agent: the
// modules in the work tree, the fake upstream, synaxi-proxyd with its
// default scope and the pinned budget in front of it (the client's base
// URL), and, with plugin, the installed plugin with tool search on, as
// `synaxi install --route` and wrap set it: the synaxi MCP server's tools
// are deferred behind ToolSearch but for recall, which it lists with
// anthropic/alwaysLoad, so recall is in the main session's tool list.
// Without plugin, tool search is off: every tool Claude Code has is in
// the list (plan mode's ExitPlanMode is deferred otherwise), since the
// scripted agents call only the tools they see. wrap, when given, makes
// the fake's agent of the reading agent.
func readingSession(t *testing.T, plugin bool, wrap ...func(*ttyPersonAgent) fakeapi.Agent) (*claudecli.Env, *ttyPersonAgent, *fakeapi.Server, *runningProxy) {
	t.Helper()
	e := claudecli.NewEnv(t, "")
	agent := &ttyPersonAgent{mods: filepath.Join(e.Work, "mods")}
	agent.wc = "wc -l " + agent.mods + "/*.py"
	require.NoError(t, os.MkdirAll(agent.mods, 0o755))
	for i := 1; i <= personTTYModules; i++ {
		sourceFile(t, agent.mod(i), personTTYLines)
	}
	var served fakeapi.Agent = agent
	for _, w := range wrap {
		served = w(agent)
	}
	fake := fakeapi.New(fakeapi.Options{Agent: served})
	t.Cleanup(fake.Close)
	e.Vars = append(e.Vars, fmt.Sprintf("ENABLE_TOOL_SEARCH=%t", plugin), fmt.Sprintf("SYNAXI_PROJECTION_BUDGET_TOKENS=%d", personTTYBudget))
	if plugin {
		e.InstallPlugin(t)
	}
	proxy := startProxyd(t, e, fake.URL())
	e.BaseURL = proxy.URL
	return e, agent, fake, proxy
}

// rowMarks is one mark per ledger row, in order: E the engine served its
// own projection, n it forwarded the original (no saving predicted yet),
// p passed as sent (side or compaction request), - anything else.
func rowMarks(rows []ledger.Row) string {
	var sb strings.Builder
	for _, r := range rows {
		switch {
		case engaged(r):
			sb.WriteByte('E')
		case r.Projected:
			sb.WriteByte('n')
		case r.Passed != "":
			sb.WriteByte('p')
		default:
			sb.WriteByte('-')
		}
	}
	return sb.String()
}

// engaged reports whether the engine served its own projection of the
// request (not the original forwarded because no saving was predicted).
func engaged(r ledger.Row) bool {
	return r.Projected && r.Projection != nil && r.Projection.NotEngaged == ""
}

// TestPersonInTheLoopInteractive: a routed main session (real client in
// tmux, the installed plugin with its MCP server, the proxy's default
// scope, the pinned budget above) driven by typing, as a person works: wc
// counts the modules' lines and four modules are read; the user types a
// codeword; twelve more modules are read over two turns; then the user
// asks for the codeword and the wc total. By then the wc output is folded
// out of the request the upstream receives (asserted on its bytes); the
// typed codeword is still there, and the agent recovers the total with
// exactly one call (the recall tool the fold note names). Every request
// passes the fake upstream's strict validation and holds every line typed
// before it. Then /compact: the summary request passes as sent (a
// "compaction" ledger row), and the engine serves its own projection again
// in the turn after it (24 reads).
func TestPersonInTheLoopInteractive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, agent, fake, proxy := readingSession(t, true)
	wantTotal := fmt.Sprintf("%d total", personTTYModules*2*personTTYLines)

	typed := []string{
		"First count the lines of the modules with wc, then read m01.py to m04.py.",
		"Remember the codeword PELICAN-42 for later.",
		"Now read m05.py to m10.py.",
		"Then read m11.py to m16.py.",
		"What was the codeword, and how many lines did wc count in total?",
	}
	ends := []string{"Done: read m01 to m04.", "Noted the codeword.", "Done: read m05 to m10.", "Done: read m11 to m16.", "wc counted"}
	term := startTTY(t, e, e.Work)
	term.waitFor("bypass permissions on", 2*time.Minute)
	for i, line := range typed {
		submit(term, line)
		term.waitFor(ends[i], 3*time.Minute)
		t.Logf("turn %d done at %s", i+1, time.Since(start).Round(time.Second))
	}
	want := "The codeword is PELICAN-42; wc counted " + strings.TrimSuffix(wantTotal, " total") + " lines in total."
	term.waitFor(want, time.Minute)

	agent.mu.Lock()
	recoveries := append([]string(nil), agent.recoveries...)
	agent.mu.Unlock()
	assert.Equal(t, []string{"recall"}, recoveries, "the folded wc output came back with one recall call")

	// On the bytes the upstream received: the wc output is folded out of
	// the question's first request, the typed codeword is not, and no
	// request lacks a line typed before it.
	var question []byte
	held := map[string]bool{}
	before := 0
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
		if r.Side {
			continue
		}
		before++
		for line := range held {
			assert.Contains(t, string(r.Body), fakeapi.JSONText(line), "request %d lost a typed line", before)
		}
		for _, line := range typed {
			if strings.Contains(string(r.Body), fakeapi.JSONText(line)) {
				held[line] = true
			}
		}
		if question == nil && strings.Contains(string(r.Body), fakeapi.JSONText(typed[4])) {
			question = r.Body
		}
	}
	require.NotNil(t, question, "the question reached the upstream")
	assert.NotContains(t, string(question), wantTotal, "the wc output was folded before the question")
	assert.Contains(t, string(question), "[recall r", "the fold note names a recall reference")
	assert.Contains(t, string(question), "PELICAN-42")
	assert.Len(t, held, len(typed))

	// /compact in the same session: the summary request passes as sent,
	// the turn after it is projected again.
	submit(term, "/compact")
	term.waitFor("Compacted", 3*time.Minute)
	after := "Now read m01.py to m24.py again."
	submit(term, after)
	term.waitFor("Done: read m01 to m24.", 3*time.Minute)
	term.stop()

	var compacted, projectedBefore, projectedAfter int
	require.Eventually(t, func() bool {
		compacted, projectedBefore, projectedAfter = 0, 0, 0
		for _, r := range readLedger(t, e) {
			switch {
			case strings.HasPrefix(r.Passed, "compaction"):
				compacted++
			case engaged(r) && compacted == 0:
				projectedBefore++
			case engaged(r):
				projectedAfter++
			}
		}
		return compacted > 0 && projectedAfter > 0
	}, 30*time.Second, 200*time.Millisecond, "a compaction row, then projected rows: %s", rowMarks(readLedger(t, e)))
	n := 0
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
		if !r.Side {
			n++
		}
	}
	h := proxy.health(t)
	assert.Zero(t, h.FailOpens)
	t.Logf("ledger rows %s", rowMarks(readLedger(t, e)))
	t.Logf("%d agent-loop requests (%d before /compact); engaged rows: %d before /compact, %d after; compaction passes %d; recoveries %v; %s; %s",
		n, before, projectedBefore, projectedAfter, compacted, recoveries, want, time.Since(start).Round(time.Second))
}
