package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

// stateDirsBudget is the projection budget of TestNoRereadStateDirsDiffer.
const stateDirsBudget = surveyBudget / 2

// TestNoRereadStateDirsDiffer runs the survey task as the plugin's worker
// through the real proxy, routed the way `synaxi install` routes (env in
// ~/.claude/settings.json), with the proxy keeping its state under another
// XDG_STATE_HOME than the hooks: the hook cannot read the proxy's
// visibility exports, so it must never deny a re-read in the projected
// worker, though the projection evicts files the agent read and the agent
// re-reads them (issue 8).
//
// The budget is half the survey's: at 8,000 tokens the projection keeps
// m01.go in view for the edits that name its Delta (a file an edit refers
// to stays when it is at most half the budget), and nothing is re-read.
func TestNoRereadStateDirsDiffer(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	e := claudecli.NewEnv(t, "")
	e.InstallPlugin(t)
	writeSurveyRepo(t, e.Work)
	var mu sync.Mutex
	reads := map[string]int{}
	fake := fakeapi.New(fakeapi.Options{Agent: surveyAgent(e.Work, reads, &mu)})
	t.Cleanup(fake.Close)

	proxyState := t.TempDir()
	base, logPath := startProxy(t, append(e.Environ(), "XDG_STATE_HOME="+proxyState,
		fmt.Sprintf("SYNAXI_PROJECTION_BUDGET_TOKENS=%d", stateDirsBudget)), fake.URL())
	// Routed through settings, not the client's own environment: the hook
	// must see the route as Claude Code passes it on.
	settings := filepath.Join(e.ClaudeDir(), "settings.json")
	m := map[string]any{}
	if data, err := os.ReadFile(settings); err == nil {
		require.NoError(t, json.Unmarshal(data, &m))
	}
	m["env"] = map[string]any{"ANTHROPIC_BASE_URL": base}
	data, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(settings, data, 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := e.Run(ctx, "-p", "--agent", "synaxi:synaxi-worker", "--permission-mode", "bypassPermissions", surveyTask(e.Work))
	require.NoError(t, err)
	logText, _ := os.ReadFile(logPath)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s\nproxy:\n%s", res.Stdout, res.Stderr, logText)
	assert.Contains(t, res.Stdout, "ALL CHECKS PASS")

	// Every request went through the proxy, which projected and evicted.
	requests, dropped := 0, false
	for _, r := range fake.MessagesRequests() {
		if r.Side {
			continue
		}
		requests++
		if strings.Contains(string(r.Body), "you already read") {
			t.Errorf("a re-read was denied in the projected worker (request %d)", requests)
		}
		dropped = dropped || strings.Contains(string(r.Body), "were dropped from it")
	}
	assert.Positive(t, requests)
	assert.True(t, dropped, "the projection evicted part of the working set")
	mu.Lock()
	rereads := 0
	for _, n := range reads {
		rereads += max(0, n-1)
	}
	t.Logf("reads per file: %v", reads)
	mu.Unlock()
	assert.Positive(t, rereads, "the agent re-read a file it had read")

	// The proxy exported visibility into its own state dir, the hooks kept
	// their records in theirs and saw no export.
	exports, _ := filepath.Glob(filepath.Join(proxyState, "synaxi", "visibility", "*.json"))
	assert.NotEmpty(t, exports, "the proxy wrote its exports under its own XDG_STATE_HOME")
	assert.NoDirExists(t, filepath.Join(e.StateDir(), "visibility"))
	records, _ := filepath.Glob(filepath.Join(e.StateDir(), "noreread", "*", "reads.log"))
	assert.NotEmpty(t, records, "the no-reread hook ran and recorded the worker's reads")
	sessions, _ := filepath.Glob(filepath.Join(e.StateDir(), "sessions", "*"))
	for _, p := range sessions {
		c, err := ledger.ReadCounters(xdg.Dirs{State: e.StateDir()}, filepath.Base(p)) // session ids are UUIDs: their own safe names
		if errors.Is(err, fs.ErrNotExist) {
			continue // nothing counted
		}
		require.NoError(t, err)
		assert.Zero(t, c.Denials, "no denial was counted")
	}
}
