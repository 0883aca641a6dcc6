package e2e_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
)

// TestClearResumeContinueProjectedRealClient: a routed main session (real
// client, the proxy's default scope, the reading sessions' pinned budget)
// typed in tmux: three modules read, then /clear and sixteen modules read
// in the fresh conversation; then, in print mode, `--resume` of that
// conversation and `--continue` (the directory's latest conversation),
// each reading six modules. The engine serves its own projection (an
// engaged ledger row, not only a gated one) after /clear, after --resume
// and after --continue, and every request passes the fake upstream's
// strict validation.
func TestClearResumeContinueProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, _, fake, proxy := readingSession(t, false)

	term := startTTY(t, e, e.Work)
	term.waitFor("bypass permissions on", 2*time.Minute)
	submit(term, "Please read m01.py to m03.py.")
	term.waitTurnOver("Done: read m01 to m03.", 3*time.Minute)
	first := lastSession(fake)
	submit(term, "/clear")
	time.Sleep(2 * time.Second)
	submit(term, "Now read m01.py to m16.py.")
	term.waitFor("Done: read m01 to m16.", 3*time.Minute)
	term.stop()
	fresh := lastSession(fake)
	require.NotEqual(t, first, fresh, "/clear started a new conversation")

	resumed := time.Now()
	printTurn(t, e, "--resume", fresh, "Now read m01.py to m06.py.")
	continued := time.Now()
	printTurn(t, e, "--continue", "Now read m07.py to m12.py.")

	// Rows per phase: the cleared conversation's, the resumed one's and
	// the continued one's (by when the proxy received them).
	phases := []string{"before /clear", "after /clear", "after --resume", "after --continue"}
	var count, engagedRows [4]int
	sessions := map[string]bool{}
	require.Eventually(t, func() bool {
		count, engagedRows = [4]int{}, [4]int{}
		rows := readLedger(t, e)
		for _, r := range rows {
			i := phase(r, first, resumed, continued)
			sessions[r.Session] = true
			count[i]++
			if engaged(r) {
				engagedRows[i]++
			}
		}
		return len(rows) >= len(fake.MessagesRequests())
	}, 30*time.Second, 200*time.Millisecond, "a ledger row per request")
	for i, name := range phases[1:] {
		assert.Positive(t, engagedRows[i+1], "a projected request %s", name)
	}
	t.Logf("ledger rows %s", rowMarks(readLedger(t, e)))
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
	}
	assert.Zero(t, proxy.health(t).FailOpens)
	t.Logf("rows (engaged/all): before /clear %d/%d, after /clear %d/%d, after --resume %d/%d, after --continue %d/%d; sessions %d; %s",
		engagedRows[0], count[0], engagedRows[1], count[1], engagedRows[2], count[2], engagedRows[3], count[3], len(sessions), time.Since(start).Round(time.Second))
}

// phase places a ledger row: 0 the first conversation, 1 the one /clear
// started, 2 from the resume on, 3 from the continue on.
func phase(r ledger.Row, first string, resumed, continued time.Time) int {
	switch {
	case !r.Time.Before(continued):
		return 3
	case !r.Time.Before(resumed):
		return 2
	case r.Session == first:
		return 0
	}
	return 1
}

// lastSession is the conversation of the latest agent-loop request the
// fake upstream received.
func lastSession(fake *fakeapi.Server) string {
	rs := fake.MessagesRequests()
	for i := len(rs) - 1; i >= 0; i-- {
		if !rs[i].Side {
			return rs[i].Header.Get("X-Claude-Code-Session-Id")
		}
	}
	return ""
}
