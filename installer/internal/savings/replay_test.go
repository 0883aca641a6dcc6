package savings

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// fakeProxyd stands in for `synaxi-proxyd replay --json --scope all PATH`: each
// "transcript" holds the report the fake prints for it, or FAIL, for which
// it fails the way the real one does (a message on stderr, exit 1).
const fakeProxyd = `#!/bin/sh
[ "$1 $2 $3 $4" = "replay --json --scope all" ] || { echo "usage" >&2; exit 2; }
if grep -q FAIL "$5"; then echo "synaxi-proxyd replay: $5: line 1: not a transcript" >&2; exit 1; fi
cat "$5"
`

// report is a replay --json report (schema 1) with the fields shown.
func report(requests, engaged int, base, proj, withRereads, worstStop float64, costlier int) string {
	b, _ := json.Marshal(map[string]any{
		"schema": 1, "requests": requests, "engaged_requests": engaged,
		"baseline": map[string]any{"billed_equivalent": base}, "projected": map[string]any{"billed_equivalent": proj},
		"billed_reduction": base / proj, "billed_reduction_with_rereads": withRereads,
		"worst_stop_billed_reduction": worstStop, "costlier_stops": costlier,
		"rows": []any{}, "client_source": "ignored",
	})
	return string(b)
}

// projectsTree lays out a ~/.claude/projects tree: three sessions in two
// projects, one with two subagents, written oldest first.
func projectsTree(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	proxyd := filepath.Join(root, "synaxi-proxyd")
	require.NoError(t, os.WriteFile(proxyd, []byte(fakeProxyd), 0o755))
	projects := filepath.Join(root, "projects")
	files := []struct{ path, body string }{
		{"-home-u-old/00000000-aaaa-4aaa-8aaa-000000000000.jsonl", report(200, 150, 1000, 100, 9, 1, 0)},
		{"-home-u-a/11111111-aaaa-4aaa-8aaa-111111111111.jsonl", report(150, 110, 1630650, 710814, 2.12, 0.95, 2)},
		{"-home-u-a/11111111-aaaa-4aaa-8aaa-111111111111/subagents/agent-a1.jsonl", report(12, 0, 40000, 40000, 1, 1, 0)},
		{"-home-u-a/11111111-aaaa-4aaa-8aaa-111111111111/subagents/agent-a2.jsonl", "FAIL"},
		{"-home-u-b/22222222-bbbb-4bbb-8bbb-222222222222.jsonl", report(140, 100, 2000000, 1600000, 1.2, 0.91, 4)},
		{"-home-u-b/33333333-cccc-4ccc-8ccc-333333333333.jsonl", report(160, 120, 3000000, 1000000, 2.8, 1.02, 0)},
	}
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := filepath.Join(projects, f.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.body), 0o644))
		mt := t0.Add(time.Duration(i) * time.Hour)
		require.NoError(t, os.Chtimes(p, mt, mt))
	}
	return projects, proxyd
}

func TestRecentSessions(t *testing.T) {
	projects, _ := projectsTree(t)
	n, paths, err := RecentSessions(projects, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	var names []string
	for _, p := range paths {
		names = append(names, conversationName(p))
	}
	assert.Equal(t, []string{"33333333", "22222222"}, names, "the newest two sessions, newest first")

	n, paths, err = RecentSessions(projects, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Len(t, paths, 5, "the third session brings its two subagents")
	assert.Equal(t, "11111111/agent-a1", conversationName(paths[3]))

	_, _, err = RecentSessions(filepath.Join(t.TempDir(), "nowhere"), 3)
	require.ErrorIs(t, err, ErrNoProjects)
	require.ErrorContains(t, err, "does not exist")
	require.ErrorContains(t, err, "CLAUDE_CONFIG_DIR")
}

// TestReplay folds the reports: the median and worst over the touched
// conversations, the untouched and failed ones named, the totals over
// every conversation replayed; text and JSON are goldens.
func TestReplay(t *testing.T) {
	projects, proxyd := projectsTree(t)
	var bar bytes.Buffer
	rep, err := Replay(context.Background(), ReplayOptions{Projects: projects, Sessions: 3, Proxyd: proxyd, Progress: &bar})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Touched)
	assert.Equal(t, []string{"11111111/agent-a1"}, rep.Untouched)
	assert.Equal(t, []string{"11111111/agent-a2"}, rep.Failed)
	assert.InDelta(t, 1630650.0/710814, rep.Billed.Median, 1e-9)
	assert.InDelta(t, 1.25, rep.Billed.Worst, 1e-9)
	assert.Equal(t, "22222222", rep.Billed.WorstN)
	assert.InDelta(t, 0.91, rep.WorstStop.Worst, 1e-9)
	assert.InDelta(t, 1630650+40000+2000000+3000000.0, rep.BaselineBilled, 1e-6)
	assert.Contains(t, bar.String(), "replay", "a progress bar was drawn")

	var text, js bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	require.NoError(t, rep.WriteJSON(&js))
	out := strings.ReplaceAll(text.String()+"\n"+js.String(), filepath.Dir(projects), "$ROOT")
	golden(t, "replay.golden", out)
}

// TestReplayMaxBytes: a transcript over the limit is named, not replayed,
// and counts in no figure.
func TestReplayMaxBytes(t *testing.T) {
	projects, proxyd := projectsTree(t)
	rep, err := Replay(context.Background(), ReplayOptions{Projects: projects, Sessions: 1, Proxyd: proxyd, MaxBytes: 100})
	require.NoError(t, err)
	assert.Equal(t, []string{"33333333"}, rep.Skipped)
	assert.Zero(t, rep.Touched)
	assert.Zero(t, rep.BaselineBilled)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "not replayed 33333333: 0.0 MB, over the 0 MB limit (--max-mb)")
}

func TestReplayNothingTouched(t *testing.T) {
	projects, proxyd := projectsTree(t)
	rep, err := Replay(context.Background(), ReplayOptions{Projects: projects, Sessions: 10, Proxyd: filepath.Join(filepath.Dir(proxyd), "missing")})
	require.NoError(t, err)
	assert.Len(t, rep.Failed, 6, "a missing binary fails every conversation, each named")
	assert.Zero(t, rep.Touched)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	assert.Equal(t, Unreplayed, rep.Verdict)
	assert.Contains(t, text.String(), "No figure: no conversation could be replayed")
	assert.Contains(t, text.String(), "could not replay 33333333: fork/exec")
	assert.NotContains(t, text.String(), "×")
}

// TestReplayVerdicts: with too little history the replay says so and
// quotes no figure (never "1.00× less"); under a scope that projects none
// of the user's sessions it replays nothing; a compaction summary is
// served as sent and not replayed.
func TestReplayVerdicts(t *testing.T) {
	tree := func(t *testing.T, bodies ...string) (string, string) {
		root := t.TempDir()
		proxyd := filepath.Join(root, "synaxi-proxyd")
		require.NoError(t, os.WriteFile(proxyd, []byte(fakeProxyd), 0o755))
		projects := filepath.Join(root, "projects")
		for i, b := range bodies {
			p := filepath.Join(projects, "-home-u", fmt.Sprintf("%08d-aaaa-4aaa-8aaa-000000000000.jsonl", i))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(b), 0o644))
		}
		return projects, proxyd
	}
	short := report(4, 0, 9000, 9000, 1, 1, 0)
	tests := []struct {
		name    string
		bodies  []string
		scope   string
		verdict string
		want    []string
	}{
		{"no projects dir", nil, "", NoSessions, []string{"Too little history to price routing: no Claude Code sessions yet", "does not exist", "ask again"}},
		{"twenty short sessions", slices.Repeat([]string{short}, 20), "", TooShort,
			[]string{"Your 10 most recent Claude Code sessions", "none of these 10 conversations is long enough", "Use Claude Code with synaxi for a while"}},
		{"engaged, pays under 5%", []string{report(90, 40, 100000, 98000, 1.02, 0.99, 3), short}, "", TooLittle,
			[]string{"less than 5%", "ask again"}},
		{"long sessions", []string{report(150, 110, 1630650, 710814, 2.12, 0.95, 2), short}, "", Priced,
			[]string{"What routing would have saved on your 2 most recent", "median", "2.29× less billed input", "Once routed, every Claude Code session"}},
		{"worker scope", []string{report(150, 110, 1630650, 710814, 2.12, 0.95, 2)}, "worker", NotRouted,
			[]string{"Nothing of yours to price: proxy.scope is worker, so routing projects only the synaxi-worker agent's requests", `proxy.scope = "all"`}},
		{"off", []string{short}, "off", NotRouted, []string{"proxy.scope is off, so routing projects nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			projects, proxyd := tree(t, tt.bodies...)
			rep, err := Replay(context.Background(), ReplayOptions{Projects: projects, Sessions: 10, Proxyd: proxyd, Scope: tt.scope})
			require.NoError(t, err)
			assert.Equal(t, tt.verdict, rep.Verdict)
			var text bytes.Buffer
			require.NoError(t, rep.WriteText(&text))
			for _, w := range tt.want {
				assert.Contains(t, text.String(), w)
			}
			if tt.verdict != Priced {
				assert.NotContains(t, text.String(), "×", "no figure is quoted")
			}
			if tt.scope != "" {
				assert.Empty(t, rep.Conversations, "nothing replayed under scope %s", tt.scope)
			}
		})
	}

	projects, proxyd := tree(t, report(150, 110, 1630650, 710814, 2.12, 0.95, 2))
	sub := filepath.Join(projects, "-home-u", "00000000-aaaa-4aaa-8aaa-000000000000", "subagents", "agent-acompact-1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(sub), 0o755))
	require.NoError(t, os.WriteFile(sub, []byte("FAIL"), 0o644))
	rep, err := Replay(context.Background(), ReplayOptions{Projects: projects, Sessions: 10, Proxyd: proxyd})
	require.NoError(t, err)
	assert.Equal(t, []string{"00000000/agent-acompact-1"}, rep.Untouched, "a compaction summary is served as sent")
	assert.Empty(t, rep.Failed, "and never replayed")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "run go test -update to write %s", p)
	assert.Equal(t, string(want), got, fmt.Sprintf("%s differs (go test -update rewrites it)", p))
}
