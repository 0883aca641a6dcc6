package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// The user's correction in the first session, and what it must become.
const (
	correction = "no, don't mock the database in the tests; use the real test database."
	guardText  = "NEVER mock the database in the tests."
)

// whyRE finds the evidence line Render writes under a guard: the user's
// quote (Go-quoted), its session and the message uuid's first 8 characters.
var whyRE = regexp.MustCompile(`why: the user said ("(?:[^"\\]|\\.)*") \(session ([0-9a-f-]+), message ([0-9a-f-]+)\)`)

// TestLearningLoopRealClient is issue 9's first "must show", through the
// real client with the plugin installed and the real hooks: a session in
// which the user corrects the agent ends; synaxi-ingest queues it and its
// detached drain learns a profile entry from the correction; the next
// session's first request to the upstream carries the guard derived from
// it once the user accepted it (`synaxi profile accept`), with the user's
// quote, which is found verbatim in a human-typed turn of the first
// session's transcript. The default path alone delivers it:
// no file of the user's is written until the opt-in AGENTS.md writer is
// turned on before that session ends. The synaxi-worker the session
// delegates to gets the guard at SubagentStart, and the MCP profile tool
// shows it with its evidence. `synaxi profile rollback` removes it, from
// AGENTS.md too: the session after that no longer carries it.
func TestLearningLoopRealClient(t *testing.T) {
	c := newClient(t, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1")
	e := c.e
	d := envXDG(e)
	profiles := store.Open(store.Dir(d))
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")

	// Session 1, turn 1: the agent does what the user will object to.
	mocking := newScript(step{name: "mock", use: bashUse("echo 'writing a mock of the database for the tests'")})
	mocking.final = "I mocked the database in the store tests."
	sess1 := c.run(t, mocking, "Add tests for the store package.")
	first := sessionRequests(c.fake, sess1)
	require.NotEmpty(t, first)
	assert.NotContains(t, requestText(t, first[0].Body), publish.Heading, "nothing learned yet: no guidance")
	before := waitIngested(t, profiles, sess1, 0)

	// Turn 2 of the same session: the user corrects the agent. The session
	// ends; the hook queues it again (the transcript grew) and the drain
	// learns from the correction.
	ack := newScript()
	ack.final = "Understood, I'll use the real test database."
	require.Equal(t, sess1, c.run(t, ack, correction, "--resume", sess1), "the same session goes on")
	learned := waitIngested(t, profiles, sess1, before)
	p, err := profiles.Load()
	require.NoError(t, err)
	var entry *store.Entry
	for i, en := range p.Entries {
		for _, ev := range en.Evidence {
			if ev.Session == sess1 && strings.Contains(ev.Quote, "mock the database") {
				entry = &p.Entries[i]
			}
		}
	}
	require.NotNil(t, entry, "the drain learned the correction: %+v", p.Entries)
	assert.Equal(t, store.Guards, entry.Dimension)
	assert.Equal(t, e.Work, entry.Project, "a project entry of the session's repository root")
	agents := filepath.Join(e.Work, "AGENTS.md")
	assert.NoFileExists(t, agents, "by default nothing is written into the user's files")
	// What was learned is a candidate until the user accepts it.
	assert.Equal(t, store.Candidate, entry.State)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.RunProgram(ctx, synaxi, "profile", "accept", entry.ID)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "synaxi profile accept\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	learned++ // the acceptance is a version of its own
	// Turn the AGENTS.md writer on now: the drain after session 2 writes
	// it, and the rollback below must retract it. (Claude Code also loads
	// AGENTS.md as project instructions, so during session 2 the guard can
	// only come from the SessionStart hook; checked below.)
	require.NoError(t, os.MkdirAll(d.Config, 0o700))
	require.NoError(t, os.WriteFile(d.ConfigFile(), []byte("[guidance]\nwriters = \"agents\"\n"), 0o600))

	// Session 2: its first request to the upstream carries the guard and
	// the user's words, traceable to the first session's transcript.
	// Its agent also asks the MCP profile tool what was learned here, then
	// delegates to the synaxi-worker, which gets the guidance as well.
	ask := newScript(
		step{name: "profile", use: fakeapi.ToolUse{Name: "mcp__plugin_synaxi_synaxi__profile",
			Input: map[string]any{"query": "database"}}},
		step{name: "delegate", use: fakeapi.ToolUse{Name: "Agent", Input: map[string]any{
			"subagent_type": "synaxi:synaxi-worker", "description": "Write the store tests",
			"prompt": "## Goal\nWrite the store tests.\n\n## Proof\n`go test ./store`"}}},
	)
	ask.final = "Noted."
	worker := newScript()
	worker.final = "Done."
	c.mu.Lock()
	c.worker = worker
	c.mu.Unlock()
	sess2 := c.run(t, ask, "What should I keep in mind here?")
	tool := ask.results(t)["profile"]
	assert.False(t, tool.IsError, tool.Result)
	assert.Contains(t, tool.Result, guardText, "the MCP tool shows the guidance")
	assert.Contains(t, tool.Result, "- ["+entry.ID+"] guards, project "+e.Work)
	assert.Contains(t, tool.Result, "(session "+sess1+", message ", "with the evidence behind it")
	reqs := sessionRequests(c.fake, sess2)
	require.NotEmpty(t, reqs)
	text := requestText(t, reqs[0].Body)
	require.Contains(t, text, guardText, "activation: the first request of the next session carries the learned guard")
	assert.NotContains(t, text, "AGENTS.md (project instructions", "delivered by the SessionStart hook, not a file")
	g := text[strings.Index(text, publish.Heading):]
	t.Logf("session 2, first request, the guidance:\n%.1200s", g)
	assert.Contains(t, text, "["+entry.ID+"]", "the guard cites the profile entry")
	var workerReqs []*fakeapi.Request
	for _, r := range reqs {
		if strings.Contains(systemText(t, r.Body), workerSentinel) {
			workerReqs = append(workerReqs, r)
		}
	}
	require.NotEmpty(t, workerReqs, "the worker ran")
	wt := requestText(t, workerReqs[0].Body)
	assert.Contains(t, wt, guardText, "the worker's first request carries the guard too (SubagentStart)")
	assert.NotContains(t, wt, "AGENTS.md (project instructions")
	quote, session, msg := whyOf(t, text, guardText)
	assert.Equal(t, sess1, session, "the evidence names the first session")
	assert.Contains(t, correction, quote, "the quote is the user's words")
	assertHumanTurn(t, e, sess1, quote, msg)
	waitIngested(t, profiles, sess2, learned)
	waitFor(t, "the drain after session 2 writes AGENTS.md", func() bool {
		b, err := os.ReadFile(agents)
		return err == nil && strings.Contains(string(b), guardText) && strings.Contains(string(b), publish.EndMarker)
	})

	// Roll back to the version before the correction: the guard is gone
	// from the published guidance and from AGENTS.md (which synaxi
	// created, so it goes entirely).
	res, err = e.RunProgram(ctx, synaxi, "profile", "rollback", strconv.Itoa(before))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "synaxi profile rollback\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.NoFileExists(t, agents, "the rollback retracts what was published")

	// Session 3 no longer carries it.
	hello := newScript()
	hello.final = "Hello."
	sess3 := c.run(t, hello, "And now?")
	reqs = sessionRequests(c.fake, sess3)
	require.NotEmpty(t, reqs)
	text = requestText(t, reqs[0].Body)
	assert.NotContains(t, text, guardText)
	assert.NotContains(t, text, "mock the database")
	// Let the drain of session 3 finish before the temporary HOME goes.
	p, err = profiles.Load()
	require.NoError(t, err)
	waitIngested(t, profiles, sess3, p.Version-1)
}

// envXDG is synaxi's directories inside the client's temporary HOME.
func envXDG(e *claudecli.Env) xdg.Dirs {
	return xdg.Dirs{State: e.StateDir(), Config: filepath.Join(e.ConfigHome(), "synaxi"),
		Data: filepath.Join(e.DataHome(), "synaxi"), Cache: filepath.Join(e.CacheHome(), "synaxi")}
}

// waitIngested waits until the drain has merged session into the profile
// at a version after since, and returns that version.
func waitIngested(t *testing.T, profiles *store.Store, session string, since int) int {
	t.Helper()
	var v int
	waitFor(t, "the drain ingests session "+session, func() bool {
		p, err := profiles.Load()
		if err != nil || p.Version <= since {
			return false
		}
		if _, ok := p.Ingested[session]; ok {
			v = p.Version
			return true
		}
		return false
	})
	return v
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sessionRequests are the model requests of one session that the scripted
// agent answered (side requests such as title generation left out), in
// order of arrival.
func sessionRequests(f *fakeapi.Server, session string) []*fakeapi.Request {
	var out []*fakeapi.Request
	for _, r := range f.Requests() {
		if r.Kind == "messages" && !r.Side && r.Header.Get("X-Claude-Code-Session-Id") == session {
			out = append(out, r)
		}
	}
	return out
}

// requestText joins every text the model sees in a Messages request: the
// system prompt and each message's text blocks, tool results included.
func requestText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var parts []string
	add := func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			parts = append(parts, s)
			return
		}
		var blocks []struct {
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &blocks)
		for _, b := range blocks {
			parts = append(parts, b.Text)
			if len(b.Content) > 0 {
				var s string
				if json.Unmarshal(b.Content, &s) == nil {
					parts = append(parts, s)
				}
			}
		}
	}
	add(req.System)
	for _, m := range req.Messages {
		add(m.Content)
	}
	return strings.Join(parts, "\n")
}

// whyOf returns the quote, session and message prefix of the evidence line
// right under the guard.
func whyOf(t *testing.T, text, guard string) (quote, session, msg string) {
	t.Helper()
	i := strings.Index(text, guard)
	require.GreaterOrEqual(t, i, 0)
	m := whyRE.FindStringSubmatch(text[i:])
	require.NotNil(t, m, "the guard is followed by its evidence: %.600s", text[i:])
	q, err := strconv.Unquote(m[1])
	require.NoError(t, err)
	return q, m[2], m[3]
}

// assertHumanTurn checks that quote occurs in a user record of session's
// transcript whose content the user typed (a plain string, not a tool
// result or an injected block), and that the record's uuid starts with msg.
func assertHumanTurn(t *testing.T, e *claudecli.Env, session, quote, msg string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(e.ClaudeDir(), "projects", "*", session+".jsonl"))
	require.NoError(t, err)
	require.Len(t, paths, 1, "the first session's transcript")
	f, err := os.Open(paths[0])
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	found := false
	for sc.Scan() {
		var rec struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			IsMeta  bool   `json:"isMeta"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Type != "user" || rec.IsMeta {
			continue
		}
		var typed string
		if json.Unmarshal(rec.Message.Content, &typed) != nil {
			var blocks []struct{ Type, Text string }
			_ = json.Unmarshal(rec.Message.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "text" && !strings.HasPrefix(b.Text, "<") {
					typed += b.Text
				}
			}
		}
		if strings.Contains(typed, quote) && strings.HasPrefix(rec.UUID, msg) {
			found = true
		}
	}
	require.NoError(t, sc.Err())
	assert.True(t, found, "the quote %q is in a human-typed turn %s… of %s", quote, msg, paths[0])
}
