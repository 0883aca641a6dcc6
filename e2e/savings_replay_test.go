package e2e_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
)

// fixtureSessions lays the real transcripts of the shared fixtures out as
// a ~/.claude/projects tree in e's HOME: the four spotter sessions (each
// with its subagents/) in one project, the m-claude session in another,
// written oldest first in that order. It returns the projects directory.
func fixtureSessions(t *testing.T, e *claudecli.Env) string {
	t.Helper()
	src := sharedFixtures(t, "claude-code-sessions")
	projects := filepath.Join(e.ClaudeDir(), "projects")
	spotter := []string{"258c7280-ae70-4798-800f-63464d01a85d", "4d5611e5-241a-462a-8d15-5122611a9569",
		"8463c716-a2ea-4c14-9efa-87158ebd9f20", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"}
	t0 := time.Now().Add(-48 * time.Hour)
	copyTree := func(from, to string, when time.Time) {
		require.NoError(t, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			dst := filepath.Join(to, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return err
			}
			return os.Chtimes(dst, when, when)
		}))
	}
	for i, s := range spotter {
		when := t0.Add(time.Duration(i) * time.Hour)
		dir := filepath.Join(projects, "-home-u-spotter")
		copyTree(filepath.Join(src, s), filepath.Join(dir, s), when)
		copyTree(filepath.Join(src, s+".jsonl"), filepath.Join(dir, s+".jsonl"), when)
	}
	m := "c76e5be5-ffd2-4901-a935-885527c83a61.jsonl"
	copyTree(filepath.Join(src, "m-claude", m), filepath.Join(projects, "-home-u-m-claude", m), t0.Add(10*time.Hour))
	return projects
}

// sharedFixtures finds shared/fixtures/NAME beside the checkout (beside
// the main worktree when this is a linked one), or under $SYNAXI_FIXTURES;
// the test is skipped when there is none.
func sharedFixtures(t *testing.T, name string) string {
	t.Helper()
	if d := os.Getenv("SYNAXI_FIXTURES"); d != "" {
		return filepath.Join(d, name)
	}
	roots := []string{claudecli.RepoRoot()}
	cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir")
	cmd.Dir = claudecli.RepoRoot()
	if out, err := cmd.Output(); err == nil {
		roots = append(roots, filepath.Dir(strings.TrimSpace(string(out))))
	}
	for _, r := range roots {
		d := filepath.Join(filepath.Dir(r), "shared", "fixtures", name)
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	t.Skip("shared/fixtures/" + name + " not found beside the checkout; set SYNAXI_FIXTURES")
	return ""
}

// TestSavingsReplayOwnSessions: `synaxi savings --replay` over real
// transcripts laid out as the user's ~/.claude/projects picks the newest
// sessions with their subagents, and reports for each exactly what
// `synaxi-proxyd replay --json` reports for that transcript.
func TestSavingsReplayOwnSessions(t *testing.T) {
	require.NoError(t, claudecli.BuildPlugin())
	e := claudecli.NewEnv(t, "")
	fixtureSessions(t, e)
	bin := filepath.Join(claudecli.RepoRoot(), "plugin", "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	res, err := e.RunProgram(ctx, filepath.Join(bin, "synaxi"), "savings", "--replay", "--sessions", "2", "--json")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	var rep struct {
		Sessions      int `json:"sessions"`
		Conversations []struct {
			Path     string  `json:"path"`
			Name     string  `json:"name"`
			Engaged  int     `json:"engaged_requests"`
			Billed   float64 `json:"billed_reduction"`
			Rereads  float64 `json:"billed_reduction_with_rereads"`
			Requests int     `json:"requests"`
			Err      string  `json:"error"`
			AsSent   string  `json:"as_sent"`
		} `json:"conversations"`
		Scope     string   `json:"scope"`
		Verdict   string   `json:"verdict"`
		Touched   int      `json:"touched"`
		Untouched []string `json:"untouched"`
		Failed    []string `json:"failed"`
		Billed    struct {
			Median, Worst float64
		} `json:"billed_reduction"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &rep), res.Stdout)
	assert.Equal(t, 2, rep.Sessions)
	assert.Equal(t, "all", rep.Scope, "priced as routing treats sessions by default")
	assert.Empty(t, rep.Failed)
	var names, paths []string
	for _, c := range rep.Conversations {
		names = append(names, c.Name)
		paths = append(paths, c.Path)
	}
	// The newest two: m-claude's session, then fa812bfe with its three subagents.
	assert.Equal(t, []string{"c76e5be5", "fa812bfe", "fa812bfe/agent-a93ccab", "fa812bfe/agent-aa84377", "fa812bfe/agent-acompact-70d8e7"}, names)

	// The same transcripts through the replay engine directly, as a panel.
	res, err = e.RunProgram(ctx, filepath.Join(bin, "synaxi-proxyd"), append([]string{"replay", "--json", "--scope", "all"}, paths...)...)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	var panel struct {
		Rows []struct {
			Transcript string  `json:"transcript"`
			Engaged    int     `json:"engaged_requests"`
			Billed     float64 `json:"billed_reduction"`
			Rereads    float64 `json:"billed_reduction_with_rereads"`
			Requests   int     `json:"requests"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &panel))
	require.Len(t, panel.Rows, len(rep.Conversations))
	untouched := 0
	for i, row := range panel.Rows {
		c := rep.Conversations[i]
		assert.Equal(t, row.Transcript, c.Path)
		if c.AsSent != "" {
			// The compaction summary passes a routed proxy as sent: not
			// replayed, counted untouched.
			assert.Contains(t, c.Name, "agent-acompact")
			untouched++
			continue
		}
		assert.Equal(t, row.Requests, c.Requests, c.Name)
		assert.Equal(t, row.Engaged, c.Engaged, c.Name)
		assert.InDelta(t, row.Billed, c.Billed, 1e-12, c.Name)
		assert.InDelta(t, row.Rereads, c.Rereads, 1e-12, c.Name)
		if row.Engaged == 0 {
			untouched++
		}
		t.Logf("%-32s requests %4d engaged %4d billed ÷ %.2f (with re-reads %.2f)", c.Name, c.Requests, c.Engaged, c.Billed, c.Rereads)
	}
	assert.Len(t, rep.Untouched, untouched)
	assert.Equal(t, len(rep.Conversations)-untouched, rep.Touched)
	t.Logf("median %.2f×, worst %.2f× over %d touched; %d untouched", rep.Billed.Median, rep.Billed.Worst, rep.Touched, untouched)

	// The text a user reads before choosing to route.
	res, err = e.RunProgram(ctx, filepath.Join(bin, "synaxi"), "savings", "--replay", "--sessions", "1")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	assert.Contains(t, res.Stdout, "your 1 most recent Claude Code session\n")
	assert.Equal(t, "priced", rep.Verdict, "two long real sessions are enough history to price")
	for _, want := range []string{"touched ", "median ", "worst ", "all of them "} {
		assert.True(t, strings.Contains(res.Stdout, want), "%q in\n%s", want, res.Stdout)
	}
	t.Logf("synaxi savings --replay --sessions 1:\n%s", res.Stdout)
}
