package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/review"
	"github.com/synaxi/synaxi/learning/store"
)

// reviewScreenVar names a file the review test writes the terminal
// review's screen to (scripts/screenshots.sh renders it for the README).
const reviewScreenVar = "SYNAXI_E2E_REVIEW_SCREEN"

// TestReviewLoopRealClient is issue 19's loop through the real client
// with the plugin installed: in session 1 the user corrects the agent
// twice; after SessionEnd both corrections wait as candidates, and the
// next session's first request carries only the one-line notice, never
// the rules. `synaxi profile review`, driven through a pseudo-terminal
// (tmux), accepts the first; session 3's first request carries that rule
// with the user's quote, and in it /synaxi:review, through the MCP tools,
// accepts the other. The test fails if publication ignores the candidate
// state (session 2 would carry the rules).
func TestReviewLoopRealClient(t *testing.T) {
	c := newClient(t, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1")
	e := c.e
	d := envXDG(e)
	profiles := store.Open(store.Dir(d))
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")

	// Session 1: the agent mocks the database; the user corrects it, then
	// adds a second rule.
	mocking := newScript(step{name: "mock", use: bashUse("echo 'writing a mock of the database for the tests'")})
	mocking.final = "I mocked the database in the store tests."
	sess1 := c.run(t, mocking, "Add tests for the store package.")
	v := waitIngested(t, profiles, sess1, 0)
	for _, say := range []string{correction, "no, use pnpm instead of npm."} {
		ack := newScript()
		ack.final = "Understood."
		require.Equal(t, sess1, c.run(t, ack, say, "--resume", sess1))
		v = waitIngested(t, profiles, sess1, v)
	}
	p, err := profiles.Load()
	require.NoError(t, err)
	var db, pnpm *store.Entry
	for i, en := range p.Entries {
		switch {
		case strings.Contains(en.Text, "mock the database"):
			db = &p.Entries[i]
		case strings.Contains(en.Text, "pnpm"):
			pnpm = &p.Entries[i]
		}
	}
	require.NotNil(t, db, "the drain learned the database correction: %+v", p.Entries)
	require.NotNil(t, pnpm, "the drain learned the pnpm rule: %+v", p.Entries)
	assert.Equal(t, store.Candidate, db.State)
	assert.Equal(t, store.Candidate, pnpm.State)
	waiting := len(p.Candidates(e.Work))

	// Session 2: only the notice, once; none of the rules.
	hello := newScript()
	hello.final = "Hello."
	sess2 := c.run(t, hello, "Hello?")
	reqs := sessionRequests(c.fake, sess2)
	require.NotEmpty(t, reqs)
	text := requestText(t, reqs[0].Body)
	assert.Contains(t, text, review.NoticeLine(waiting), "the next SessionStart says candidates wait")
	assert.NotContains(t, text, publish.Heading, "a candidate is not published")
	assert.NotContains(t, text, "mock the database")
	assert.NotContains(t, text, "pnpm")
	v = waitIngested(t, profiles, sess2, v)

	// The terminal review, in a pseudo-terminal: accept the database rule.
	term := startInTmux(t, e, e.Work, 100, 34, synaxi, "profile", "review")
	screen := term.waitFor("synaxi review", time.Minute)
	if !strings.Contains(screen, "mock the database") {
		term.key("s")
		screen = term.waitFor("mock the database", 30*time.Second)
	}
	assert.Contains(t, screen, "you said:")
	assert.Contains(t, screen, "the assistant said:", "the message the user answered")
	assert.Contains(t, screen, "[a] accept")
	if out := os.Getenv(reviewScreenVar); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(screen), 0o644))
	}
	term.key("a")
	waitFor(t, "the review accepts the database rule", func() bool {
		p, err := profiles.Load()
		en := (*store.Entry)(nil)
		if err == nil {
			en = p.Find(db.ID)
		}
		return en != nil && en.State == store.Confirmed && en.ConfirmedBy == store.ByUser
	})
	// q ends the review if it still shows the other candidate (it ended by
	// itself if that one came first and was skipped).
	_ = exec.Command(term.tmux, "send-keys", "-t", term.name, "q").Run()
	term.stop()
	p, err = profiles.Load()
	require.NoError(t, err)
	require.Equal(t, store.Candidate, p.Find(pnpm.ID).State, "the other one still waits")

	// Session 3: its first request carries the accepted rule with the
	// user's quote, and no second notice today. In it /synaxi:review lists
	// the candidates and accepts the pnpm rule through the MCP tools.
	walk := newScript(
		step{name: "list", use: mcpUse("review_candidates", nil)},
		step{name: "decide", use: mcpUse("review_decide", map[string]any{"id": pnpm.ID, "verdict": "accept"})},
	)
	walk.final = "Accepted: use pnpm instead of npm."
	sess3 := c.run(t, walk, "/synaxi:review")
	reqs = sessionRequests(c.fake, sess3)
	require.NotEmpty(t, reqs)
	text = requestText(t, reqs[0].Body)
	require.Contains(t, text, guardText, "the accepted rule reaches the next session")
	quote, session, msg := whyOf(t, text, guardText)
	assert.Equal(t, sess1, session)
	assert.Contains(t, correction, quote)
	assertHumanTurn(t, e, sess1, quote, msg)
	assert.NotContains(t, text, "pnpm instead of npm", "the other candidate is not published")
	assert.NotContains(t, text, "it may apply from now on", "the notice comes at most once a day")
	assert.Contains(t, text, "Reviewing what synaxi learned", "the /synaxi:review skill ran")
	res := walk.results(t)
	assert.False(t, res["list"].IsError, res["list"].Result)
	assert.Contains(t, res["list"].Result, "["+pnpm.ID+"]")
	assert.Contains(t, res["list"].Result, `the user said: "no, use pnpm instead of npm."`)
	assert.False(t, res["decide"].IsError, res["decide"].Result)
	assert.Contains(t, res["decide"].Result, "accepted")
	p, err = profiles.Load()
	require.NoError(t, err)
	assert.Equal(t, store.Confirmed, p.Find(pnpm.ID).State)
	assert.Empty(t, p.Candidates(e.Work))
	guide, err := publish.ForSession(d, config.Default().Guidance, e.Work)
	require.NoError(t, err)
	assert.Contains(t, guide, "pnpm", "published for the next session")
	waitIngested(t, profiles, sess3, v)
}

// mcpUse calls one of synaxi's MCP tools as the model sees it.
func mcpUse(tool string, input map[string]any) fakeapi.ToolUse {
	if input == nil {
		input = map[string]any{}
	}
	return fakeapi.ToolUse{Name: "mcp__plugin_synaxi_synaxi__" + tool, Input: input}
}
