package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/e2e/marketplace"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
)

// claudeOwn are the paths (relative to HOME) Claude Code itself writes as
// sessions run: they are the user's, not synaxi's, and uninstall leaves
// them alone, so the listings below leave them out. Its plugin store and
// the sweep marker beside it come with any session, any plugin command.
var claudeOwn = []string{".claude/projects", ".claude.json", ".claude.json.lock", ".claude/todos", ".claude/statsig",
	".claude/shell-snapshots", ".claude/debug", ".claude/session-env", ".claude/history.jsonl", ".claude/file-history",
	".claude/sessions", ".claude/backups", ".claude/.last-cleanup", ".claude/plugins/store", ".claude/plugins/.last_inuse_sweep",
	".claude/state"}

// homeListing lists every file, symlink and empty directory under home
// by path, leaving out skip: what a user sees with `find ~`.
func homeListing(t *testing.T, home string, skip ...string) []string {
	t.Helper()
	var out []string
	for p := range homeSnapshot(t, home, skip...) {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestSetupTellsTheTruthThenPurge is #28's set-up and uninstall path with
// the real CLI, offline: a marketplace install, then /synaxi:setup on a
// HOME with no sessions (it says there is too little history, quotes no
// figure and does not offer to route), then on the same HOME with twenty
// earlier sessions (copies of the fixture transcripts: it quotes the
// median and worst and asks; yes routes), then an ordinary routed main
// session whose status line shows what the projection measured, then
// `synaxi uninstall --purge`: `claude plugin list` no longer lists synaxi
// and the HOME lists what it listed before the marketplace install.
func TestSetupTellsTheTruthThenPurge(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	var mu sync.Mutex
	// The routed session's turns: each reads or runs its tools, then ends.
	var turns [][]fakeapi.ToolUse
	turn, step := -1, 0
	var setupView *fakeapi.View
	setup := fakeapi.SetupAgent()
	fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(v.VisibleText(), "# Set synaxi up"):
			setupView = v
			return setup.Respond(v)
		case turn >= 0 && turn < len(turns) && step < len(turns[turn]):
			step++
			return fakeapi.Reply{ToolUses: turns[turn][step-1 : step]}
		case turn >= 0 && turn < len(turns):
			turn, step = turn+1, 0
			return fakeapi.Reply{Text: fmt.Sprintf("turn %d done", turn)}
		}
		return fakeapi.Reply{Text: "ok"}
	})})
	t.Cleanup(fake.Close)
	rig := marketplace.New(t, marketplace.Options{APIURL: fake.URL()})
	e := rig.Env
	e.Vars = append(e.Vars, "SYNAXI_PROXY_UPSTREAM="+fake.URL())
	before := homeListing(t, e.Home, claudeOwn...)
	t.Logf("HOME before the marketplace install (%d entries): %v", len(before), before)
	t.Logf("marketplace install:\n%s", rig.Install(t))

	// runSetup runs /synaxi:setup (or, with answer, the user's reply to
	// it) as a print-mode turn and returns what the turn ended with and
	// what `synaxi savings --replay` printed in it.
	runSetup := func(answer string) (final, replay string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		args := []string{"-p", "--permission-mode", "bypassPermissions", "--output-format", "json"}
		if answer != "" {
			args = append(args, "--continue", answer)
		} else {
			args = append(args, "/synaxi:setup")
		}
		res, err := e.Run(ctx, args...)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "claude %v\n%s\n%s", args, res.Stdout, res.Stderr)
		var out struct {
			Result string `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
		mu.Lock()
		defer mu.Unlock()
		require.NotNil(t, setupView, "the skill reached the model")
		for _, c := range setupView.CallsTo("Bash") {
			if strings.HasSuffix(c.Input["command"].(string), " synaxi savings --replay") {
				replay = c.Result
			}
		}
		return out.Result, replay
	}

	// 1. No earlier session: too little history, no figure, no question.
	final, replay := runSetup("")
	t.Logf("/synaxi:setup with no sessions: synaxi savings --replay printed:\n%s\nand the turn ended with: %s", replay, final)
	assert.Contains(t, replay, "Too little history to price routing")
	assert.NotContains(t, replay, "×", "no figure is quoted")
	assert.Contains(t, replay, "ask again")
	assert.Equal(t, fakeapi.SetupNotYet, final, "set-up does not offer to route")
	assert.NotContains(t, readFile(t, filepath.Join(e.ClaudeDir(), "settings.json")), "ANTHROPIC_BASE_URL", "nothing is routed")

	// 2. Twenty earlier sessions (copies of the fixtures' real transcripts,
	// each with its subagents): a figure, and the question.
	twentySessions(t, e)
	mu.Lock()
	setupView = nil
	mu.Unlock()
	final, replay = runSetup("")
	t.Logf("/synaxi:setup with twenty sessions: synaxi savings --replay printed:\n%s\nand the turn ended with: %s", replay, final)
	assert.Contains(t, replay, "What routing would have saved on your 10 most recent Claude Code sessions")
	assert.Contains(t, replay, "median")
	assert.Contains(t, replay, "worst")
	assert.NotContains(t, replay, "Too little history")
	assert.Equal(t, fakeapi.SetupQuestion, final)
	final, _ = runSetup("yes")
	t.Logf("after yes: %s", final)
	require.Contains(t, final, "Routing is on from your next session")

	// 3. The next ordinary session, routed by the settings alone: a main
	// session (no agent) whose requests the proxy projects and measures.
	d := envDirs(e)
	info, err := proxyinfo.Live(d)
	require.NoError(t, err, "the proxy runs")
	routed := *e
	routed.BaseURL = ""
	var files []string
	for i := range 4 {
		p := filepath.Join(e.Work, fmt.Sprintf("big%d.py", i))
		sourceFile(t, p, 1500)
		files = append(files, p)
	}
	mu.Lock()
	turns = [][]fakeapi.ToolUse{{readUse(files[0]), readUse(files[1]), readUse(files[2]), readUse(files[3])},
		{bashUse("ls")}, {bashUse("pwd")}, {bashUse("echo a")}, {bashUse("echo b")}, {bashUse("echo c")}}
	turn = 0
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Six turns of one session: what the model acts on since the user's
	// last message is served as sent, so it is the first turn's reads that
	// fold, in the turns after it.
	var out struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	for i, prompt := range []string{"Read the four big files.", "List the directory.", "Where are we?", "Say a.", "Say b.", "Say c."} {
		args := []string{"-p", "--permission-mode", "bypassPermissions", "--output-format", "json"}
		if i > 0 {
			args = append(args, "--continue")
		}
		res, err := routed.Run(ctx, append(args, prompt)...)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
		assert.Equal(t, fmt.Sprintf("turn %d done", i+1), out.Result)
	}
	sum, err := ledger.ReadSummary(d, out.SessionID)
	require.NoError(t, err, "the main session's requests are in the proxy's ledger (proxy at %s)", info.Addr)
	t.Logf("routed main session through the proxy: %+v", *sum)
	assert.Positive(t, sum.Projected, "a routed main-session request was projected")
	assert.Positive(t, sum.Measured, "and measured against count_tokens' counterfactual")
	assert.Positive(t, sum.SavedTokens, "the projection saved tokens on an ordinary session")
	stable := filepath.Join(e.DataHome(), "synaxi", "bin", "synaxi-statusline")
	line := statusLine(t, stable, &routed, out.SessionID)
	t.Logf("status line of the routed main session: %s", line)
	assert.Regexp(t, `⌁ synaxi saved \S+ tok \(\$[0-9.]+\)`, line, "the status line shows what the projection measured")
	assert.Contains(t, line, "routed")
	link := filepath.Join(e.Home, ".local", "bin", "synaxi")
	res, err := e.RunProgram(ctx, link, "savings")
	require.NoError(t, err)
	t.Logf("synaxi savings:\n%s", res.Stdout)
	assert.NotContains(t, res.Stdout, "install --route", "a routed user is not told to route")

	// 4. Uninstall --purge through the link: the plugin, its marketplace
	// and synaxi's own files go; the HOME lists what it did before. (A
	// user has claude on PATH; this test's CLI is named by --claude.)
	res, err = e.RunProgram(ctx, link, "uninstall", "--purge", "--claude", e.Bin)
	require.NoError(t, err)
	t.Logf("synaxi uninstall --purge:\n%s%s", res.Stdout, res.Stderr)
	require.Equal(t, 0, res.ExitCode)
	assert.NotContains(t, res.Stdout, "did not put there")
	_, err = proxyinfo.Live(d)
	assert.ErrorIs(t, err, proxyinfo.ErrNotRunning, "the proxy is stopped")
	// The listing is taken before the CLI runs again: `claude plugin list`
	// itself writes Claude Code's own sweep marker.
	if s := readFile(t, filepath.Join(e.ClaudeDir(), "settings.json")); s != "" {
		t.Logf("settings.json after: %s", s)
	}
	if ents, err := os.ReadDir(filepath.Join(e.ClaudeDir(), "plugins")); err == nil {
		var names []string
		for _, d := range ents {
			names = append(names, d.Name())
		}
		t.Logf("~/.claude/plugins after: %v", names)
	}
	after := homeListing(t, e.Home, claudeOwn...)
	assert.Equal(t, before, after, "the HOME lists what it did before the marketplace install")
	res, err = e.Run(ctx, "plugin", "list")
	require.NoError(t, err)
	t.Logf("claude plugin list:\n%s", res.Stdout)
	assert.NotContains(t, res.Stdout, "synaxi", "the plugin is gone")
	res, err = e.Run(ctx, "plugin", "marketplace", "list")
	require.NoError(t, err)
	t.Logf("claude plugin marketplace list:\n%s", res.Stdout)
	assert.NotContains(t, res.Stdout, "synaxi", "its marketplace is gone")
}

// statusLine is what the status line command bin prints for session, run
// as Claude Code runs it in e's work directory, without colour.
func statusLine(t *testing.T, bin string, e *claudecli.Env, session string) string {
	t.Helper()
	sl := exec.Command(bin)
	sl.Env = append(e.Environ(), "NO_COLOR=1")
	sl.Stdin = strings.NewReader(`{"session_id":"` + session + `","cwd":"` + e.Work + `","workspace":{"current_dir":"` + e.Work + `"}}`)
	line, err := sl.Output()
	require.NoError(t, err)
	return string(line)
}

// twentySessions lays twenty earlier sessions out in e's
// ~/.claude/projects: copies of the fixtures' real main-session
// transcripts (the spotter ones with their subagents), each under a
// session id of its own, a day old and an hour apart.
func twentySessions(t *testing.T, e *claudecli.Env) {
	t.Helper()
	src := sharedFixtures(t, "claude-code-sessions")
	mains := []string{"258c7280-ae70-4798-800f-63464d01a85d.jsonl", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
		"8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
		"m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl", "natori-hrj-dotfiles/972885bf-a45d-4efb-a708-346d0245ed33.jsonl",
		"windtara0619-tpu-inference/19a2e244-9267-4afb-8908-2e5caa9374ba.jsonl"}
	dir := filepath.Join(e.ClaudeDir(), "projects", "-home-u-work")
	t0 := time.Now().Add(-48 * time.Hour)
	for i := range 20 {
		m := mains[i%len(mains)]
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		when := t0.Add(time.Duration(i) * time.Hour)
		copyFile(t, filepath.Join(src, m), filepath.Join(dir, id+".jsonl"), when)
		subs := filepath.Join(src, strings.TrimSuffix(m, ".jsonl"), "subagents")
		ents, _ := os.ReadDir(subs)
		for _, s := range ents {
			copyFile(t, filepath.Join(subs, s.Name()), filepath.Join(dir, id, "subagents", s.Name()), when)
		}
	}
}

func copyFile(t *testing.T, from, to string, when time.Time) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, data, fs.FileMode(0o600)))
	require.NoError(t, os.Chtimes(to, when, when))
}

// withoutPlugin is settings.json's text as JSON with synaxi's plugin keys
// (enabledPlugins["synaxi@synaxi"], extraKnownMarketplaces.synaxi) and
// the objects they leave empty taken out.
func withoutPlugin(t *testing.T, settings string) string {
	t.Helper()
	m := map[string]any{}
	if settings != "" {
		require.NoError(t, json.Unmarshal([]byte(settings), &m))
	}
	for k, id := range map[string]string{"enabledPlugins": "synaxi@synaxi", "extraKnownMarketplaces": "synaxi"} {
		if o, ok := m[k].(map[string]any); ok {
			delete(o, id)
			if len(o) == 0 {
				delete(m, k)
			}
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return string(out)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(data)
}
