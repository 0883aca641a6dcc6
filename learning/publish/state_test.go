package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/mcptool"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// Every publisher serves confirmed entries only: the SessionStart and
// SubagentStart text (ForSession), the narratives and every writer's file
// (Publish), the MCP guidance (Current) and the MCP profile tool's text.
// A candidate, a flagged candidate and an excluded entry reach none of
// them; once the user accepts the candidate, it reaches all of them. The
// test fails if any publisher ignores the lifecycle state.
func TestOnlyConfirmedEntriesArePublished(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	cfg := config.Default().Guidance
	cfg.Writers = strings.Join(config.GuidanceWriters, ",")
	s := store.Open(store.Dir(d))

	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	mk := func(scope, dim, text, state string) store.Entry {
		e := store.Entry{ID: store.NewID(scope, project, dim, text), Scope: scope, Dimension: dim, Text: text,
			Weight: 0.8, Count: 1, Sessions: []string{"s-" + text[:5]}, FirstSeen: t0, LastSeen: t0, State: state,
			Evidence: []store.Evidence{{Session: "s-" + text[:5], UUID: "u-" + text[:5], Timestamp: t0, Quote: "no: " + text}}}
		if scope == store.ScopeProject {
			e.Project = project
		}
		if state == store.Confirmed {
			e.ConfirmedBy, e.ConfirmedAt = store.ByUser, t0
		}
		return e
	}
	confirmed := mk(store.ScopeProject, store.Guards, "never edit generated protobuf files", store.Confirmed)
	candidate := mk(store.ScopeProject, store.Guards, "always run zanzibar lint before pushing", store.Candidate)
	global := mk(store.ScopeGlobal, store.Communication, "answer in quokka style", store.Candidate)
	flagged := mk(store.ScopeProject, store.Guards, "always run rm -rf wombat before building", store.Candidate)
	flagged.Flags = []store.Flag{{Kind: store.FlagDangerous, Reason: "a recursive delete (rm -rf)"}}
	excluded := mk(store.ScopeProject, store.Workflow, "always squash numbat commits", store.Confirmed)
	excluded.Excluded = true
	_, err := s.Update("test", func(p *store.Profile) error {
		p.Entries = append(p.Entries, confirmed, candidate, global, flagged, excluded)
		return nil
	})
	require.NoError(t, err)

	// published gathers what every publisher says for the project.
	published := func() map[string]string {
		t.Helper()
		_, err := publish.Publish(context.Background(), d, cfg, func(string) string { return "" })
		require.NoError(t, err)
		out := map[string]string{}
		text, err := publish.ForSession(d, cfg, project)
		require.NoError(t, err)
		out["SessionStart/SubagentStart"] = text
		g, err := publish.Current(d, project)
		require.NoError(t, err)
		require.NotNil(t, g)
		out["MCP guidance"] = publish.Render(g, 9000)
		text, err = mcptool.Profile(d, project, "", 9000)
		require.NoError(t, err)
		out["MCP profile tool"] = text
		// Every file a publisher wrote: narratives, journal, writers.
		for _, dir := range []string{d.DataPath("guidance"), project} {
			require.NoError(t, filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
				if err != nil || de.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				out[path] = string(data)
				return err
			}))
		}
		require.Contains(t, out, filepath.Join(project, "AGENTS.md"), "the writers ran")
		return out
	}
	// The journal and lock files say where, not what: they are checked
	// for absence only.
	bookkeeping := func(where string) bool {
		return filepath.Base(where) == "journal.json" || strings.HasSuffix(where, ".lock")
	}
	for where, text := range published() {
		if !bookkeeping(where) {
			assert.Contains(t, strings.ToLower(text), "protobuf", "%s: the confirmed entry is published", where)
		}
		for _, word := range []string{"zanzibar", "quokka", "wombat", "numbat"} {
			assert.NotContains(t, strings.ToLower(text), word, "%s publishes an entry that is not confirmed", where)
		}
	}

	// A narrative written before the lifecycle (no confirmed_only) at the
	// current version may hold unaccepted entries: it is not served.
	path := publish.NarrativePath(d, publish.NarrativeKey(project))
	var n publish.Narrative
	require.NoError(t, statefile.ReadJSON(path, &n))
	require.True(t, n.ConfirmedOnly)
	n.ConfirmedOnly = false
	n.Guidance.Guards = append(n.Guidance.Guards, publish.Item{Kind: publish.Always, Text: "ALWAYS run zanzibar lint before pushing.", Cites: []string{candidate.ID}})
	require.NoError(t, statefile.WriteJSON(path, &n))
	text, err := publish.ForSession(d, cfg, project)
	require.NoError(t, err)
	assert.Contains(t, text, "protobuf")
	assert.NotContains(t, strings.ToLower(text), "zanzibar", "an old narrative is not served")

	_, err = s.Decide(candidate.ID, store.Decision{Verdict: store.Accept})
	require.NoError(t, err)
	for where, text := range published() {
		if !bookkeeping(where) {
			assert.Contains(t, strings.ToLower(text), "zanzibar", "%s: an accepted candidate is published", where)
		}
		assert.NotContains(t, strings.ToLower(text), "wombat", where)
	}
}
