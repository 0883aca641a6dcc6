package e2e_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
)

// Claude Code 2.1.332's auto-compact, driven through the real client. Its
// threshold is the auto-compact window (CLAUDE_CODE_AUTO_COMPACT_WINDOW,
// at least 100k tokens; the model's window otherwise) less the output
// reserve (20k) and a 13k buffer, lowered further by
// CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; the size it compares is the usage the
// last answer reported, which a routed session gets for the projected
// request (docs/projection.md, "What the client sees of its context").

// compactingModules is how many 12 KB modules the auto-compact sessions
// can read (about 5.3k tokens each as the fake upstream counts them).
const compactingModules = 40

// compactingAgent reads the modules of the last range the request asks
// for, one per request, remembers what it read (reads may be folded out
// of view), and writes the compaction summary Claude Code asks for: the
// task, the codeword the user gave and how far the reading got, so a
// session compacted mid-turn goes on from the summary.
type compactingAgent struct {
	*ttyPersonAgent
	read map[int]bool
}

func (a *compactingAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	typed, _ := v.TypedTurn()
	visible := v.VisibleText()
	a.mu.Lock()
	defer a.mu.Unlock()
	word := "unknown"
	if m := codewordRE.FindStringSubmatch(visible); m != nil {
		word = m[1]
	}
	ranges := readsRE.FindAllStringSubmatch(visible, -1)
	if ranges == nil {
		return fakeapi.Reply{Text: "I do not know what to do with: " + typed}
	}
	m := ranges[len(ranges)-1]
	from, _ := strconv.Atoi(m[1])
	to, _ := strconv.Atoi(m[2])
	if strings.Contains(typed, compactPrompt) {
		last := from - 1
		for last < to && a.read[last+1] {
			last++
		}
		return fakeapi.Reply{Text: fmt.Sprintf("<analysis>Reading modules.</analysis>\n<summary>1. The user gave the codeword %s and asked me to read m%02d.py to m%02d.py; read so far up to m%02d.</summary>", word, from, to, last)}
	}
	for i := from; i <= to; i++ {
		if !a.read[i] {
			a.read[i] = true
			return fakeapi.Reply{Text: "Reading " + a.mod(i), ToolUses: []fakeapi.ToolUse{readUse(a.mod(i))}}
		}
	}
	return fakeapi.Reply{Text: fmt.Sprintf("Done: read m%02d to m%02d; the codeword is %s.", from, to, word)}
}

// compactingSession is a reading session of the compacting agent with
// Claude Code's auto-compact window pinned to window tokens: routed
// through synaxi-proxyd (default scope, the reading sessions' budget), or
// straight to the fake upstream.
func compactingSession(t *testing.T, routed bool, window int) (*claudecli.Env, *fakeapi.Server, *runningProxy) {
	t.Helper()
	a := &compactingAgent{read: map[int]bool{}}
	e, _, fake, proxy := readingSession(t, false, func(r *ttyPersonAgent) fakeapi.Agent {
		a.ttyPersonAgent = r
		return a
	})
	for i := personTTYModules + 1; i <= compactingModules; i++ {
		sourceFile(t, a.mod(i), personTTYLines)
	}
	e.Vars = append(e.Vars, fmt.Sprintf("CLAUDE_CODE_AUTO_COMPACT_WINDOW=%d", window))
	if !routed {
		e.BaseURL = fake.URL()
	}
	return e, fake, proxy
}

// compactions are the compaction summary requests the fake upstream
// received; every request it received must have passed strict validation.
func compactions(t *testing.T, fake *fakeapi.Server) []*fakeapi.Request {
	t.Helper()
	var out []*fakeapi.Request
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
		if !r.Side && strings.Contains(string(r.Body), compactPrompt) {
			out = append(out, r)
		}
	}
	return out
}

// largestRequest is the largest input, in tokens, the fake upstream
// reported usage for; with served, only among the requests the engine
// served as its own projection.
func largestRequest(fake *fakeapi.Server, served bool) int64 {
	var most int64
	for _, r := range fake.MessagesRequests() {
		if !served || strings.Contains(string(r.Body), syntheticID) {
			most = max(most, r.Usage.TotalInput())
		}
	}
	return most
}

// checkCompactionsPassed asserts that each compaction request reached the
// upstream as Claude Code sent it (none of the engine's fold notes or
// re-emitted exchanges in it, a `compaction` passed ledger row for each)
// and returns the ledger's rows, one per request.
func checkCompactionsPassed(t *testing.T, e *claudecli.Env, fake *fakeapi.Server, proxy *runningProxy, summaries []*fakeapi.Request) []ledger.Row {
	t.Helper()
	for _, r := range summaries {
		assert.NotContains(t, string(r.Body), syntheticID, "the summary request is not the engine's projection")
		assert.NotContains(t, string(r.Body), foldNote, "nothing was folded out of the summary request")
	}
	var rows []ledger.Row
	require.Eventually(t, func() bool {
		rows = readLedger(t, e)
		return len(rows) >= len(fake.MessagesRequests())
	}, 30*time.Second, 200*time.Millisecond, "a ledger row per request")
	passed := 0
	for _, r := range rows {
		if strings.HasPrefix(r.Passed, "compaction") {
			passed++
		}
	}
	assert.Equal(t, len(summaries), passed, "a compaction passed row per summary request")
	assert.Zero(t, proxy.health(t).FailOpens)
	return rows
}

// TestAutoCompactProjectedRealClient: a routed main session (real client
// in print mode, the proxy's default scope, the pinned 4K budget) reads
// eleven 12 KB modules under a 100k auto-compact window (threshold 67k), so
// Claude Code auto-compacts before the engine engages; the summary
// request passes as sent. The conversation is then continued
// (`--continue`, auto-compact off so it cannot compact again) reading
// thirty-one more modules: the engine serves its own projection of the
// compacted conversation again (engaged rows after the compaction row),
// every request passes strict validation, and the codeword given before
// the compaction comes back through the summary.
func TestAutoCompactProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, fake, proxy := compactingSession(t, true, 100_000)
	out := printTurn(t, e, "Remember the codeword PELICAN-42, then read m01.py to m11.py and tell me the codeword.")
	assert.Contains(t, out, "Done: read m01 to m11; the codeword is PELICAN-42.")
	first := len(compactions(t, fake))
	require.Positive(t, first, "Claude Code auto-compacted the first turn")

	e.Vars = append(e.Vars, "DISABLE_AUTO_COMPACT=1")
	out = printTurn(t, e, "--continue", fmt.Sprintf("Now read m12.py to m%02d.py and tell me the codeword.", compactingModules))
	assert.Contains(t, out, fmt.Sprintf("Done: read m12 to m%02d; the codeword is PELICAN-42.", compactingModules))
	summaries := compactions(t, fake)
	assert.Len(t, summaries, first, "no compaction with auto-compact off")
	rows := checkCompactionsPassed(t, e, fake, proxy, summaries)
	lastCompaction, after := -1, 0
	for i, r := range rows {
		switch {
		case strings.HasPrefix(r.Passed, "compaction"):
			lastCompaction, after = i, 0
		case lastCompaction >= 0 && engaged(r):
			after++
		}
	}
	assert.Positive(t, after, "engaged rows after the auto-compaction")
	assert.Equal(t, strings.Count(rowMarks(rows), "p"), first, "the summary requests are the only passed rows")
	t.Logf("auto-compactions %d; engaged rows after the last %d; ledger %s; %s", first, after, rowMarks(rows), time.Since(start).Round(time.Second))
}

// TestAutoCompactDirectVsRoutedRealClient: the same scripted print-mode
// session (a codeword, then forty 12 KB modules read) under the same
// auto-compact window, once straight to the fake upstream and once
// routed. Claude Code compacts on the usage it gets back, which for a
// routed request is the projected request's: routed never triggers more
// auto-compacts than direct, each summary request passes as sent, every
// request passes strict validation and both sessions finish their task.
// The counts go to the log (docs/projection.md, "Claude Code's own
// mechanisms"): under a 150k window the engine engages before the
// threshold and the routed session does not compact; under a 100k window
// the threshold comes first, and after each compaction again before the
// engine engages, so both compact alike.
func TestAutoCompactDirectVsRoutedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	task := fmt.Sprintf("Remember the codeword PELICAN-42, then read m01.py to m%02d.py and tell me the codeword.", compactingModules)
	done := fmt.Sprintf("Done: read m01 to m%02d; the codeword is PELICAN-42.", compactingModules)
	for _, window := range []int{150_000, 100_000} {
		e, fake, _ := compactingSession(t, false, window)
		assert.Contains(t, printTurn(t, e, task), done)
		direct := len(compactions(t, fake))
		directLargest := largestRequest(fake, false)

		e, fake, proxy := compactingSession(t, true, window)
		assert.Contains(t, printTurn(t, e, task), done)
		summaries := compactions(t, fake)
		rows := checkCompactionsPassed(t, e, fake, proxy, summaries)
		assert.LessOrEqual(t, len(summaries), direct, "routed never auto-compacts more than direct")
		if window == 150_000 {
			assert.Positive(t, direct, "the window makes the direct session auto-compact")
		}
		t.Logf("window %d: auto-compactions direct %d, routed %d; largest request direct %d tokens, largest the engine served %d; routed ledger %s",
			window, direct, len(summaries), directLargest, largestRequest(fake, true), rowMarks(rows))
	}
	t.Logf("%s", time.Since(start).Round(time.Second))
}
