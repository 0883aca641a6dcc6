package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
	"github.com/synaxi/synaxi/mapgen/walk"
)

func callProfile(t *testing.T, root walk.Root, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = Profile
	req.Params.Arguments = args
	res, err := profileHandler(root)(context.Background(), req)
	require.NoError(t, err, "errors come back as tool results")
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func TestProfileTool(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	root, err := walk.NewRoot(repo)
	require.NoError(t, err)

	res := callProfile(t, root, nil)
	assert.False(t, res.IsError)
	assert.Contains(t, resultText(res), "learned nothing")

	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mk := func(scope, project, dim, text, quote string, w float64) store.Entry {
		return store.Entry{ID: store.NewID(scope, project, dim, text), Scope: scope, Project: project, Dimension: dim,
			Text: text, Weight: w, Count: 1, Sessions: []string{"s-1"}, FirstSeen: ts, LastSeen: ts,
			State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: ts,
			Evidence: []store.Evidence{{Session: "s-1", UUID: "u-" + dim, Timestamp: ts, Quote: quote}}}
	}
	mock := mk(store.ScopeProject, repo, store.Guards, "don't mock the database", "no, don't mock the database", 0.8)
	lint := mk(store.ScopeGlobal, "", store.Workflow, "run make lint before committing", "run make lint first, always", 0.5)
	other := mk(store.ScopeProject, "/elsewhere", store.Guards, "never use tabs", "no tabs here", 0.9)
	d := xdg.Resolve()
	_, err = store.Open(store.Dir(d)).Update("test", func(p *store.Profile) error {
		p.Entries = append(p.Entries, mock, lint, other)
		return nil
	})
	require.NoError(t, err)

	text := resultText(callProfile(t, root, nil))
	assert.Contains(t, text, "1. NEVER mock the database. ["+mock.ID+"]")
	assert.Contains(t, text, "2. ALWAYS run make lint before committing.")
	assert.Contains(t, text, "## Entries behind it")
	assert.Contains(t, text, "- ["+mock.ID+"] guards, project "+repo+", weight 0.80, seen in 1 session(s): don't mock the database")
	assert.Contains(t, text, `"no, don't mock the database" (session s-1, message u-guards, 2026-11-30 12:00)`)
	assert.NotContains(t, text, "tabs", "another project's entries are not this project's guidance")

	text = resultText(callProfile(t, root, map[string]any{"query": "LINT"}))
	assert.Contains(t, text, "run make lint")
	assert.NotContains(t, text, "mock the database")

	res = callProfile(t, root, map[string]any{"query": "kubernetes"})
	assert.False(t, res.IsError)
	assert.Contains(t, resultText(res), `Nothing in the guidance for `+repo+` matches "kubernetes"`)

	// An unreadable profile is a tool error that says how to repair it.
	require.NoError(t, os.WriteFile(store.Open(store.Dir(d)).Path(), []byte("{broken"), 0o600))
	res = callProfile(t, root, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, resultText(res), "synaxi profile rollback")
}
