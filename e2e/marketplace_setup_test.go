package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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

const mapTool = "mcp__plugin_synaxi_synaxi__repo_map"

// connectedRE is /mcp's line for synaxi's server once it is connected.
var connectedRE = regexp.MustCompile(`(✔|✓|connected).{0,4}plugin:synaxi:synaxi|plugin:synaxi:synaxi.{0,40}connected`)

// homeSnapshot maps every file, symlink and empty directory under home,
// except the paths (relative to home) under skip, to its SHA-256 (the
// target for a symlink).
func homeSnapshot(t *testing.T, home string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		for _, s := range skip {
			if rel == s || strings.HasPrefix(rel, s+"/") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		switch {
		case d.IsDir():
			// A directory counts when empty (a leftover); one holding
			// anything is seen through what it holds.
			if ents, err := os.ReadDir(p); err == nil && len(ents) == 0 {
				out[rel] = "empty dir"
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = hex.EncodeToString(sum[:])
		}
		return nil
	}))
	return out
}

func snapshotDiff(a, b map[string]string) []string {
	var diff []string
	for k, v := range a {
		if b[k] != v {
			diff = append(diff, "changed or gone: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, "new: "+k)
		}
	}
	sort.Strings(diff)
	return diff
}

// TestMarketplaceFirstSessionThenSetup is a new user's path, offline: the
// repository served as a git marketplace over smart HTTP, release archives
// made by the release script on a loopback server, a fresh HOME.
// `claude plugin marketplace add` + `claude plugin install`, then the first
// interactive session (tmux): /mcp shows synaxi connected, the agent's
// repo_map call returns a map, a re-read is denied, SessionStart is not
// cancelled. Then /synaxi:setup, driven in the same session: install, the
// replay of the user's own sessions, the question, yes, --route. The proxy
// runs, a routed synaxi-worker request is projected and the status line
// shows its savings; `synaxi uninstall` (through the link in ~/.local/bin)
// gives the HOME back byte for byte.
func TestMarketplaceFirstSessionThenSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	var mu sync.Mutex
	var first *script
	// The worker, once it runs, answers every request: its requests reach
	// the fake projected (fewer tool results than calls made, the system
	// rewritten), so it keeps its own count of the calls it made.
	var worker []fakeapi.ToolUse
	workerAt, workerReplies := -1, 0
	var setupView *fakeapi.View // the last request of the set-up turn
	setup := fakeapi.SetupAgent()
	fake := fakeapi.New(fakeapi.Options{Agent: fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case workerAt >= 0 && workerAt < len(worker):
			workerAt++
			workerReplies++
			return fakeapi.Reply{ToolUses: worker[workerAt-1 : workerAt]}
		case workerAt >= 0:
			workerReplies++
			return fakeapi.Reply{Text: "worker done"}
		case strings.Contains(v.VisibleText(), "# Set synaxi up"):
			setupView = v
			return setup.Respond(v)
		}
		return first.Respond(v)
	})})
	t.Cleanup(fake.Close)
	rig := marketplace.New(t, marketplace.Options{APIURL: fake.URL()})
	e := rig.Env
	// The proxy the set-up starts forwards to the fake upstream, as a
	// user's would to the API.
	e.Vars = append(e.Vars, "SYNAXI_PROXY_UPSTREAM="+fake.URL())
	t.Logf("marketplace install:\n%s", rig.Install(t))

	app := filepath.Join(e.Work, "app.py")
	sourceFile(t, app, 40)
	first = newScript(
		step{name: "map", use: fakeapi.ToolUse{Name: mapTool, Input: map[string]any{}}},
		step{name: "read", use: readUse(app)},
		step{name: "cat", use: bashUse("cat app.py")})
	first.final = "first turn done"
	// One earlier session of the user's, for the replay to show.
	past := filepath.Join(claudecli.RepoRoot(), "internal", "transcript", "testdata", "claude-code-sessions", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	data, err := os.ReadFile(past)
	require.NoError(t, err)
	pastDir := filepath.Join(e.ClaudeDir(), "projects", "-home-u-spotter")
	require.NoError(t, os.MkdirAll(pastDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(pastDir, filepath.Base(past)), data, 0o600))
	old := time.Now().Add(-24 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(pastDir, filepath.Base(past)), old, old))

	// The first session.
	term := startTTY(t, e, e.Work)
	term.waitFor("bypass permissions on", 2*time.Minute)
	// The MCP server waits for the launcher's first download; /mcp shows it
	// pending (…) until it connects, never failed (✘).
	term.typeLine("/mcp")
	s := term.waitFor("plugin:synaxi:synaxi", time.Minute)
	deadline := time.Now().Add(time.Minute)
	for !connectedRE.MatchString(s) && !strings.Contains(s, "✘ plugin:synaxi:synaxi") && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		term.key("Escape")
		time.Sleep(300 * time.Millisecond)
		term.typeLine("/mcp")
		time.Sleep(time.Second)
		s = term.screen()
	}
	assert.Regexp(t, connectedRE, s, "/mcp shows synaxi connected")
	t.Logf("/mcp: %s", connectedRE.FindString(s))
	term.key("Escape")
	time.Sleep(500 * time.Millisecond)
	term.typeLine("Map this repository, then read app.py, then cat it.")
	s = term.waitFor("first turn done", 3*time.Minute)
	assert.NotContains(t, s, "cancelled", "SessionStart (nor any other hook) was not cancelled")
	r := first.results(t)
	assert.False(t, r["map"].IsError, "repo_map answered: %s", r["map"].Result)
	assert.Contains(t, r["map"].Result, "app.py", "the map names the repository's file")
	assert.True(t, denied(r["cat"]), "a re-read is denied: %s", r["cat"].Result)
	d := envDirs(e)
	d.Data = filepath.Join(e.DataHome(), "synaxi")

	// What /synaxi:setup may change, as it is before.
	// Left out: what Claude Code writes as sessions run, the plugin's own
	// data (its launcher's downloads), synaxi's state and what its
	// learning loop keeps (the profile, published guidance: uninstall
	// keeps them by design).
	volatile := []string{".claude/projects", ".claude.json", ".claude.json.lock", ".claude/todos", ".claude/statsig", ".claude/shell-snapshots",
		".claude/debug", ".claude/session-env", ".claude/history.jsonl", ".claude/file-history", ".claude/sessions",
		".claude/plugins/store", ".claude/backups", ".claude/.last-cleanup", ".claude/plugins/cache/synaxi/synaxi/" + rig.Release.Version + "/.in_use",
		".claude/plugins/data", ".local/state", ".cache", ".local/share/synaxi/profile", ".local/share/synaxi/guidance"}
	// The plugin's own files and its settings keys are left out too: since
	// it came from the marketplace, uninstall removes it (checked below).
	volatile = append(volatile, ".claude/plugins", ".claude/settings.json")
	before := homeSnapshot(t, e.Home, volatile...)
	settingsBefore := withoutPlugin(t, readFile(t, filepath.Join(e.ClaudeDir(), "settings.json")))

	term.typeLine("/synaxi:setup")
	s = term.waitFor(fakeapi.SetupQuestion, 4*time.Minute)
	t.Logf("after the replay:\n%s", s)
	mu.Lock()
	var replayOut string
	for _, c := range setupView.CallsTo("Bash") {
		if strings.HasSuffix(c.Input["command"].(string), " synaxi savings --replay") {
			replayOut = c.Result
		}
	}
	mu.Unlock()
	t.Logf("synaxi savings --replay, as the model saw it:\n%s", replayOut)
	assert.Contains(t, replayOut, "median", "the replay of the user's own sessions shows the median")
	assert.Contains(t, replayOut, "worst")
	assert.Contains(t, replayOut, "258c7280", "the earlier session is among those replayed")
	term.typeLine("yes")
	s = term.waitFor("Routing is on from your next session", 2*time.Minute)
	t.Logf("after --route:\n%s", s)

	// The proxy runs, and settings route to it.
	info, err := proxyinfo.Live(d)
	require.NoError(t, err, "the proxy runs")
	var settings struct {
		Env        map[string]string `json:"env"`
		StatusLine struct{ Command string }
	}
	raw, err := os.ReadFile(filepath.Join(e.ClaudeDir(), "settings.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &settings))
	assert.Equal(t, "http://"+info.Addr, settings.Env["ANTHROPIC_BASE_URL"])
	stable := filepath.Join(d.Data, "bin", "synaxi-statusline")
	assert.Equal(t, stable, settings.StatusLine.Command, "the status line runs the stable copy, not the versioned plugin directory")
	link := filepath.Join(e.Home, ".local", "bin", "synaxi")
	assert.Contains(t, term.screen(), "⌁ synaxi", "the composed status line shows in the running session")
	target, err := os.Readlink(link)
	require.NoError(t, err, "synaxi is linked into ~/.local/bin")
	assert.Equal(t, filepath.Join(d.Data, "bin", "synaxi"), target)

	// A routed worker request is projected: a print run whose only route
	// to a model is the settings.
	routed := *e
	routed.BaseURL = ""
	big := filepath.Join(e.Work, "big.py")
	sourceFile(t, big, 1500)
	mu.Lock()
	big2, big3 := filepath.Join(e.Work, "big2.py"), filepath.Join(e.Work, "big3.py")
	sourceFile(t, big2, 1500)
	sourceFile(t, big3, 1500)
	worker = []fakeapi.ToolUse{readUse(big), readUse(big2), readUse(big3), readUse(app), bashUse("ls"), bashUse("pwd"), bashUse("echo done")}
	workerAt = 0
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := routed.Run(ctx, "-p", "--agent", "synaxi:synaxi-worker", "--output-format", "json", "Read big.py and app.py, then list the directory.")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	var out struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &out), res.Stdout)
	assert.Equal(t, "worker done", out.Result)
	// The proxy records a row after the response, beside it (the
	// count_tokens probe runs first), so the client can exit before its
	// last request's row is written; the projection engages only on the
	// run's last request, so the summary is read once it has them all.
	mu.Lock()
	replies := int64(workerReplies)
	mu.Unlock()
	var sum *ledger.Summary
	require.Eventually(t, func() bool {
		sum, err = ledger.ReadSummary(d, out.SessionID)
		return err == nil && sum.Requests >= replies
	}, 30*time.Second, 50*time.Millisecond, "the worker's %d requests are in the proxy's ledger", replies)
	assert.Positive(t, sum.Projected, "a routed worker request was projected")
	assert.Positive(t, sum.SavedTokens, "the projection saved tokens against count_tokens' counterfactual")
	t.Logf("worker session through the proxy: %+v", *sum)

	// The composed status line shows it.
	line := statusLine(t, stable, &routed, out.SessionID)
	t.Logf("status line: %s", line)
	assert.Regexp(t, `⌁ synaxi saved \S+ tok \(\$[0-9.]+\)`, line, "the status line shows what the projection saved")
	assert.Contains(t, line, "· routed")

	// Uninstall through the link puts the HOME back, and removes the
	// plugin the marketplace install put there. (A user has claude on
	// PATH; this test's CLI is named by --claude.)
	term.stop()
	res, err = e.RunProgram(ctx, link, "uninstall", "--claude", e.Bin)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "synaxi uninstall\n%s\n%s", res.Stdout, res.Stderr)
	t.Logf("synaxi uninstall:\n%s", res.Stdout)
	after := homeSnapshot(t, e.Home, volatile...)
	assert.Empty(t, snapshotDiff(before, after), "synaxi uninstall gives the HOME back byte for byte")
	assert.JSONEq(t, settingsBefore, withoutPlugin(t, readFile(t, filepath.Join(e.ClaudeDir(), "settings.json"))),
		"settings.json is as it was before set-up, less the plugin's keys")
	assert.Contains(t, res.Stdout, "plugin: synaxi@synaxi uninstalled")
	assert.Contains(t, res.Stdout, "plugin: marketplace synaxi removed")
	_, err = proxyinfo.Live(d)
	assert.ErrorIs(t, err, proxyinfo.ErrNotRunning, "the proxy is stopped")
}
