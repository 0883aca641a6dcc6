package replay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/tokens"
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

// panelDirs are the panel's directories: the four sessions of one
// repository (with their subagents) and m-claude, a fifth main session
// from another user (Claude Code 2.1.6, Windows), kept in its own
// directory beside its licence.
func panelDirs(sessions string) []string {
	return []string{sessions, filepath.Join(sessions, "m-claude")}
}

// TestPanel replays every transcript of the shared panel at the default
// configuration and with the budget pinned 30% below and above its
// default, and holds each to the floors docs/projection.md states. It
// logs each main session's hit-ratio ceiling (see hitCeiling) without
// asserting the 0.92, which the ceiling shows is out of reach on
// some sessions at 3.5× raw; it asserts that no side's hit ratio exceeds
// the ceiling of its own raw context, which the ceiling's argument
// guarantees for the baseline and, on the sessions whose projected system
// and tools are no smaller than the client's, for the projection (a
// smaller prefix lowers the projection's own new content, docs/projection.md).
func TestPanel(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole panel")
	}
	paths, err := Transcripts(panelDirs(sharedSessions(t)))
	require.NoError(t, err)
	require.Contains(t, paths, filepath.Join(sharedSessions(t), "m-claude", "c76e5be5-ffd2-4901-a935-885527c83a61.jsonl"))
	def := projection.Budget(projection.Window("", ""))
	for _, tc := range []struct {
		name        string
		budget      int
		raw, billed float64
	}{
		// Regression guards on measured figures (docs/projection.md),
		// with the main session's 10K-token tools and system prompt: raw
		// 2.67–5.39×, billed 1.89–3.49× at the default when written.
		{"default", 0, 2.5, 1.85},
		{"budget-30%", def * 7 / 10, 2.0, 1.6},
		{"budget+30%", def * 13 / 10, 2.0, 1.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Scope: config.ScopeAll, Projection: projection.FromConfig(config.Default().Projection)} // as the proxy
			opts.Projection.BudgetTokens = tc.budget
			for _, p := range paths {
				sub := filepath.Base(filepath.Dir(p)) == "subagents"
				if tc.budget != 0 && sub {
					continue
				}
				var altered int
				// baseline minus projected system and tools, at the first
				// request (its tools are the engaged roster whether or not
				// the engine engages) and at the first engaged one
				prefix := 0
				first, seen := true, false
				rep, err := Run(context.Background(), p, opts, func(b Body) {
					if !b.Engaged && butTools(b.Baseline) != butTools(b.Projected) {
						altered++
					}
					if first || b.Engaged && !seen {
						prefix = max(prefix, systemAndTools(b.Baseline)-systemAndTools(b.Projected))
						first, seen = false, seen || b.Engaged
					}
				})
				require.NoError(t, err, p)
				name := ShortName(p)
				t.Logf("%s: raw %.2fx billed %.2fx hit %.3f engaged %d/%d", name, rep.RawReduction, rep.BilledReduction, rep.Projected.CacheHitRatio, rep.Engaged, rep.Requests)
				assert.LessOrEqual(t, rep.Baseline.CacheHitRatio, hitCeiling(rep.NewContentTokens, float64(rep.Baseline.RawTokens)), "%s: baseline above its ceiling", name)
				if prefix <= 0 {
					assert.LessOrEqual(t, rep.Projected.CacheHitRatio, rep.HitCeiling, "%s: projection above its ceiling", name)
				}
				if !sub && tc.budget == 0 {
					t.Logf("%s: new content %d tokens, hit ceiling %.3f at this raw context, %.3f at %.1fx; client's system and tools %+d tokens against the projection's",
						name, rep.NewContentTokens, rep.HitCeiling, rep.HitCeilingAtTargetRaw, TargetRawReduction, prefix)
				}
				if tc.budget == 0 {
					t.Logf("%s: had it stopped earlier, billed %.2fx at worst (after request %d), %d of %d stopping points costlier",
						name, rep.WorstStop, rep.WorstStopRequest, rep.CostlierStops, rep.Requests)
					// A regression guard on a measured figure, not a goal: a
					// session that ends right after its first call of a tool
					// the roster serves as a stub pays for writing its prefix
					// again (0.81x at worst on the panel when this was
					// written, nicholas-wood, whose ninth request first calls
					// AskUserQuestion; 12 of the 15 long sessions never cost
					// more at any stopping point; docs/projection.md).
					assert.GreaterOrEqual(t, rep.WorstStop, 0.8, "%s: a stopping point costs far more than it did", name)
					t.Logf("%s: %d edits whose old text the request did not show (baseline %d); with %d files read again, billed %.2fx",
						name, rep.Projected.BlindEdits, rep.Baseline.BlindEdits, rep.Projected.Rereads, rep.BilledReductionWithRereads)
				}
				if rep.Engaged == 0 {
					assert.Equal(t, rep.Baseline.BlindEdits, rep.Projected.BlindEdits, "%s: nothing was projected", name)
					assert.InDelta(t, rep.BilledReduction, rep.BilledReductionWithRereads, 1e-9, "%s: nothing was projected", name)
				}
				assert.LessOrEqual(t, rep.Projected.Rereads, rep.Projected.BlindEdits, name)
				if rep.Projected.BlindEdits > rep.Baseline.BlindEdits {
					assert.Less(t, rep.BilledReductionWithRereads, rep.BilledReduction, "%s: the reads blind edits imply cost something", name)
				}
				assert.Zero(t, altered, "%s: a request the engine did not engage on is not served as sent (but for its tools)", name)
				assert.Zero(t, rep.Projected.InvalidRequests, "%s: %s", name, rep.Projected.FirstInvalid)
				assert.Zero(t, *rep.Projected.PrefixViolations, name)
				if sub {
					assert.GreaterOrEqual(t, rep.BilledReduction, 1.0, "%s: never costs more than the baseline", name)
					continue
				}
				assert.GreaterOrEqual(t, rep.RawReduction, tc.raw, name)
				assert.GreaterOrEqual(t, rep.BilledReduction, tc.billed, name)
				if tc.budget == 0 {
					assert.GreaterOrEqual(t, rep.Projected.CacheHitRatio, 0.88, name)
					// The saving holds with a re-read before every blind
					// edit (see recovery): 1.76x at worst when written.
					assert.GreaterOrEqual(t, rep.BilledReductionWithRereads, 1.75, "%s: with re-reads", name)
				}
			}
		})
	}
}

// butTools is body without its tools: what a request the engine did not
// engage on serves as the client sent it (the roster is the engaged one's).
func butTools(body []byte) string {
	var b strings.Builder
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		if k.Str != "tools" {
			b.WriteString(k.Raw + ":" + v.Raw + ",")
		}
		return true
	})
	return b.String()
}

// systemAndTools estimates the tokens of a request's system prompt and
// tool list.
func systemAndTools(body []byte) int {
	return tokens.EstimateBytes([]byte(gjson.GetBytes(body, "system").Raw)) + tokens.EstimateBytes([]byte(gjson.GetBytes(body, "tools").Raw))
}
