package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	"github.com/synaxi/synaxi/internal/trim"
)

// carriedMark starts every block synaxi trim stages.
const carriedMark = "# Carried over by synaxi trim"

// trimSkillRE finds the command the /synaxi:trim skill tells the model to
// run, as Claude Code expanded the skill into the request.
var trimSkillRE = regexp.MustCompile(`sh (\S+/bin/synaxi-run) synaxi trim --session (\S+)`)

// seenCarried is one request of the agent loop that carried the block:
// its session and how many times the block is in its body.
type seenCarried struct {
	session string
	copies  int
	last    string // the last user text
}

// trimAgent plays the model: a first task (read a file, run a failing
// test), then the /synaxi:trim skill's one command exactly as the
// expanded skill writes it, then, in a conversation that starts with the
// carried block, a reply that says so (recording the request).
type trimAgent struct {
	app  string
	mu   sync.Mutex
	seen []seenCarried
}

func (a *trimAgent) Respond(v *fakeapi.View) fakeapi.Reply {
	text := v.VisibleText()
	m := trimSkillRE.FindStringSubmatch(text)
	switch {
	case m == nil && strings.Contains(text, carriedMark):
		a.mu.Lock()
		defer a.mu.Unlock()
		a.seen = append(a.seen, seenCarried{session: v.Header.Get("X-Claude-Code-Session-Id"),
			copies: strings.Count(string(v.Body), carriedMark), last: v.LastUserText()})
		return fakeapi.Reply{Text: "I have the carried context."}
	case m != nil:
		cmd := "sh " + m[1] + " synaxi trim --session " + m[2]
		for _, c := range v.CallsTo("Bash") {
			if c.Answered && c.Input["command"] == cmd {
				if c.IsError {
					return fakeapi.Reply{Text: "synaxi trim failed:\n" + c.Result}
				}
				return fakeapi.Reply{Text: "Staged. Run /clear now."}
			}
		}
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "synaxi trim"}}}}
	}
	switch len(v.ToolResults()) {
	case 0:
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{readUse(a.app)}}
	case 1:
		return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{bashUse("sh -c 'echo FAIL: test_parse expected 2 got 3; exit 1'")}}
	}
	return fakeapi.Reply{Text: "first turn done: the parser test fails"}
}

// submit types a line and makes sure it was sent: the client may still be
// starting and leave it in the input box, so Enter is pressed again while
// the box (the screen's last prompt line; the history above it echoes
// sent lines with the same prompt) shows it.
func submit(term *tty, text string) {
	term.t.Helper()
	term.typeLine(text)
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		if inputBox(term.screen()) != text {
			return
		}
		term.key("Enter")
	}
}

// inputBox is what the client's input box holds on screen: the text of
// the last line that starts with its prompt.
func inputBox(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(lines[i], "❯"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func (a *trimAgent) carried() []seenCarried {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenCarried(nil), a.seen...)
}

// TestTrimClearResumeRealClient drives the real client interactively
// (slash commands run only there): a task, /synaxi:trim (the skill runs
// the real `synaxi trim` through the launcher and stages the block), /clear
// (the SessionStart hook gives the block once), two turns of the fresh
// session; then, with a new block staged, a resume of that session, which
// must not get it: the stage is still there afterwards. The session is
// routed through synaxi-proxyd with its default configuration.
func TestTrimClearResumeRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux to run the client interactively")
	}
	agent := &trimAgent{}
	fake := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(fake.Close)
	e := claudecli.NewEnv(t, fake.URL())
	e.InstallPlugin(t)
	// Routed through the proxy with its default scope: /clear and the
	// resume happen in a routed session (issue 28).
	proxy := startProxyd(t, e, fake.URL())
	e.BaseURL = proxy.URL
	agent.app = filepath.Join(e.Work, "parser.py")
	require.NoError(t, os.WriteFile(agent.app, []byte("def parse(s):\n    return 3\n"), 0o644))
	stage := trim.StagePath(envDirs(e), e.Work)

	term := startTTY(t, e, e.Work)
	term.waitFor("bypass permissions on", 2*time.Minute)
	submit(term, "Fix the parser so test_parse passes; never touch the vendored code.")
	term.waitFor("first turn done", 3*time.Minute)

	submit(term, "/synaxi:trim")
	s := term.waitTurnOver("Run /clear now", 3*time.Minute)
	require.FileExists(t, stage, "the skill staged the block; screen:\n%s", s)
	assert.Empty(t, agent.carried(), "nothing carried before /clear")

	submit(term, "/clear")
	time.Sleep(2 * time.Second)
	submit(term, "continue")
	term.waitFor("I have the carried context", 2*time.Minute)
	assert.NoFileExists(t, stage, "/clear took the stage")
	submit(term, "and now?")
	term.waitFor("and now?", time.Minute)
	require.Eventually(t, func() bool { return len(agent.carried()) >= 2 }, time.Minute, 300*time.Millisecond)
	term.stop()

	got := agent.carried()
	require.Len(t, got, 2)
	fresh := got[0].session
	assert.NotEmpty(t, fresh)
	for _, c := range got {
		assert.Equal(t, fresh, c.session, "both turns are the session /clear started")
		assert.Equal(t, 1, c.copies, "the block is in the conversation once (%q)", c.last)
	}
	var body string
	for _, r := range fake.MessagesRequests() {
		if strings.Contains(string(r.Body), carriedMark) && r.Header.Get("X-Claude-Code-Session-Id") == fresh {
			body = string(r.Body)
			break
		}
	}
	for _, want := range []string{"Fix the parser so test_parse passes; never touch the vendored code.",
		"FAIL: test_parse expected 2 got 3", "parser.py", "## Standing directives"} {
		assert.Contains(t, body, want)
	}

	// A new stage, then a resume of the fresh session: no second copy, and
	// the stage waits for a /clear.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	synaxi := filepath.Join(claudecli.RepoRoot(), "plugin", "bin", "synaxi")
	res, err := e.RunProgram(ctx, synaxi, "trim", "--session", fresh)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	require.FileExists(t, stage)
	res, err = e.Run(ctx, "-p", "--permission-mode", "bypassPermissions", "--resume", fresh, "after resume")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	got = agent.carried()
	require.Len(t, got, 3, "the resumed conversation still holds the first block: %s", res.Stdout)
	assert.Equal(t, "after resume", got[2].last)
	assert.Equal(t, 1, got[2].copies, "resume gives no second copy")
	assert.FileExists(t, stage, "resume leaves the stage for a /clear")
	t.Logf("carried into session %s: %s", fresh, fmt.Sprint(got))
	for _, r := range fake.MessagesRequests() {
		assert.Empty(t, r.Invalid, "strict validation")
	}
	h := proxy.health(t)
	assert.Positive(t, h.Gated, "the session's requests were handed to the projection")
	assert.Zero(t, h.FailOpens)
}
