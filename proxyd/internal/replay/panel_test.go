package replay

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/projection"
)

// sharedSessions finds shared/fixtures/claude-code-sessions beside the
// checkout (beside the main worktree when this is a linked one), or at
// $SYNAXI_FIXTURES.
func sharedSessions(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("SYNAXI_FIXTURES"); d != "" {
		return filepath.Join(d, "claude-code-sessions")
	}
	var roots []string
	for _, arg := range [][]string{{"rev-parse", "--show-toplevel"}, {"rev-parse", "--path-format=absolute", "--git-common-dir"}} {
		out, err := exec.Command("git", arg...).Output()
		if err != nil {
			continue
		}
		p := strings.TrimSpace(string(out))
		if strings.HasSuffix(p, ".git") {
			p = filepath.Dir(p)
		}
		roots = append(roots, p)
	}
	for _, r := range roots {
		d := filepath.Join(filepath.Dir(r), "shared", "fixtures", "claude-code-sessions")
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	t.Skip("shared/fixtures/claude-code-sessions not found beside the checkout; set SYNAXI_FIXTURES")
	return ""
}

// TestPanel replays every transcript of the shared panel at the default
// configuration and with the budget pinned 30% below and above its
// default, and holds each to the floors docs/projection.md states.
func TestPanel(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole panel")
	}
	dir := sharedSessions(t)
	paths, err := Transcripts([]string{dir})
	require.NoError(t, err)
	def := projection.Budget(projection.Window("", ""))
	for _, tc := range []struct {
		name        string
		budget      int
		raw, billed float64
	}{
		{"default", 0, 3.5, 1.8},
		{"budget-30%", def * 7 / 10, 3, 1.7},
		{"budget+30%", def * 13 / 10, 3, 1.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Projection: projection.Config{BudgetTokens: tc.budget}}
			for _, p := range paths {
				sub := filepath.Base(filepath.Dir(p)) == "subagents"
				if tc.budget != 0 && sub {
					continue
				}
				var altered int
				rep, err := Run(context.Background(), p, opts, func(b Body) {
					if !b.Engaged && !bytes.Equal(b.Baseline, b.Projected) {
						altered++
					}
				})
				require.NoError(t, err, p)
				name := ShortName(p)
				t.Logf("%s: raw %.2fx billed %.2fx hit %.3f engaged %d/%d", name, rep.RawReduction, rep.BilledReduction, rep.Projected.CacheHitRatio, rep.Engaged, rep.Requests)
				assert.Zero(t, altered, "%s: a request the engine did not engage on is not served as sent", name)
				assert.Zero(t, rep.Projected.InvalidRequests, "%s: %s", name, rep.Projected.FirstInvalid)
				assert.Zero(t, *rep.Projected.PrefixViolations, name)
				if sub {
					assert.GreaterOrEqual(t, rep.BilledReduction, 1.0, "%s: never costs more than the baseline", name)
					continue
				}
				assert.GreaterOrEqual(t, rep.RawReduction, tc.raw, name)
				assert.GreaterOrEqual(t, rep.BilledReduction, tc.billed, name)
				if tc.budget == 0 {
					assert.GreaterOrEqual(t, rep.Projected.CacheHitRatio, 0.85, name)
				}
			}
		})
	}
}
