package server_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
	"github.com/synaxi/synaxi/proxyd/internal/replay"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// replicaTranscripts are the panel transcripts the replica tests replay: the
// repository's copy of one panel session (always there) and, when the shared
// panel is found beside the checkout (or at $SYNAXI_FIXTURES), m-claude's
// session, another user's client on another platform.
func replicaTranscripts(t *testing.T) []string {
	t.Helper()
	out := []string{filepath.Join("..", "..", "..", "internal", "transcript", "testdata", "claude-code-sessions",
		"258c7280-ae70-4798-800f-63464d01a85d.jsonl")}
	dir := os.Getenv("SYNAXI_FIXTURES")
	if dir == "" {
		if top, err := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir").Output(); err == nil {
			dir = filepath.Join(filepath.Dir(filepath.Dir(strings.TrimSpace(string(top)))), "shared", "fixtures")
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "claude-code-sessions", "m-claude", "*.jsonl"))
	if len(names) == 0 {
		t.Logf("shared panel not found (set SYNAXI_FIXTURES): replaying the repository's copy only")
	}
	return append(out, names...)
}

// clientBodies are the first max requests the client sent in a transcript,
// rebuilt by the replay (the whole conversation would only repeat the same
// check at a cost of minutes under the race detector).
func clientBodies(t *testing.T, path string, max int) [][]byte {
	t.Helper()
	var out [][]byte
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	_, err := replay.Run(ctx, path, replay.Options{}, func(b replay.Body) {
		if out = append(out, b.Baseline); len(out) == max {
			stop() // the replay ends at its next request
		}
	})
	if len(out) < max {
		require.NoError(t, err)
	}
	require.NotEmpty(t, out)
	return out[:min(max, len(out))]
}

// deterministicUpstream answers count_tokens with the token estimate of the
// body and every Messages request with usage that is a function of the
// served bytes alone, so two runs that serve the same bytes are billed the
// same, whichever replica served them.
func deterministicUpstream(t *testing.T) *upstream {
	up := newUpstream(t)
	up.setCount(func(w http.ResponseWriter, body []byte) {
		fmt.Fprintf(w, `{"input_tokens":%d}`, tokens.EstimateBytes(body))
	})
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		n := int64(tokens.EstimateBytes(body))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","model":"claude-opus-4-8","content":[{"type":"text","text":"ok"}],`+
			`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":7}}`, n/10, n/5, n-n/10-n/5)
	})
	return up
}

// replicas starts n proxies, each with its own state dirs and its own
// projection engine, in front of up.
func replicas(t *testing.T, up *upstream, n int) []*proxy {
	out := make([]*proxy, n)
	for i := range out {
		out[i] = startProxy(t, up.URL, func(o *server.Options) {
			o.Rule = gate.Rule{Scope: config.ScopeAll}
			o.Projector = projection.New(projection.Config{})
		})
	}
	return out
}

// totals sums the session summaries of every replica's ledger.
func totals(t *testing.T, ps []*proxy, session string) ledger.Summary {
	t.Helper()
	var sum ledger.Summary
	for _, p := range ps {
		p.Wait()
		s, err := ledger.ReadSummary(p.Dirs, session)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		sum.Requests += s.Requests
		sum.Projected += s.Projected
		sum.FailOpens += s.FailOpens
		sum.Measured += s.Measured
		sum.ProbeFailures += s.ProbeFailures
		sum.All.Add(s.All)
		sum.Counterfactual += s.Counterfactual
		sum.MeasuredUsage.Add(s.MeasuredUsage)
		sum.SavedTokens += s.SavedTokens
		sum.SavedUSD += s.SavedUSD
	}
	return sum
}

// cachedTotal sums the rows' cached counterfactuals over every replica.
func cachedTotal(t *testing.T, ps []*proxy) (sum int64, unknown int) {
	for _, p := range ps {
		for _, r := range p.rows(t) {
			if r.CounterfactualCached == nil {
				unknown++
				continue
			}
			sum += *r.CounterfactualCached
		}
	}
	return sum, unknown
}

// servedDigests are the digests of the Messages bodies the upstream got, in
// the order they arrived (one conversation, sent in order).
func servedDigests(up *upstream) []string {
	var out []string
	for _, r := range up.requests("/v1/messages") {
		out = append(out, fmt.Sprintf("%x", sha256.Sum256(r.Body)))
	}
	return out
}

// TestConversationSplitAcrossReplicas replays real panel transcripts, each
// request of a conversation sent to a replica chosen round-robin or at
// random, and holds the served bytes, the ledger rows' cached
// counterfactuals and the summed ledger totals equal to one replica's run.
// Nothing a request's row needs lives in another replica's memory.
func TestConversationSplitAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("replays whole transcripts through the engine")
	}
	for _, path := range replicaTranscripts(t) {
		t.Run(replay.ShortName(path), func(t *testing.T) {
			bodies := clientBodies(t, path, 60)
			h := claudeHeaders()
			h.Set("X-Claude-Code-Session-Id", "sess-replicas")
			run := func(n int, pick func(i int) int) (ledger.Summary, int64, []string) {
				up := deterministicUpstream(t)
				ps := replicas(t, up, n)
				for i, b := range bodies {
					resp, got := do(t, rawClient(), "POST", ps[pick(i)].URL+"/v1/messages?beta=true", h, b)
					require.Equal(t, 200, resp.StatusCode, "request %d: %s", i, got)
				}
				sum := totals(t, ps, "sess-replicas")
				cached, unknown := cachedTotal(t, ps)
				require.Zero(t, unknown, "every row's cached counterfactual is known")
				return sum, cached, servedDigests(up)
			}
			single, singleCached, singleServed := run(1, func(int) int { return 0 })
			require.Equal(t, int64(len(bodies)), single.Measured, "every request measured")
			require.Positive(t, single.Projected, "the engine engaged")
			t.Logf("%d requests; one replica: counterfactual %d, cached %d, saved %d tokens, $%.4f",
				len(bodies), single.Counterfactual, singleCached, single.SavedTokens, single.SavedUSD)
			rng := rand.New(rand.NewPCG(20, 2))
			assignments := map[string]func(int) int{
				"round-robin": func(i int) int { return i % 3 },
				"random":      func(int) int { return rng.IntN(3) },
				"one-then-two": func(i int) int { // a replica that saw the start, then never again
					if i < len(bodies)/2 {
						return 0
					}
					return 1 + i%2
				},
			}
			names := make([]string, 0, len(assignments))
			for name := range assignments {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				sum, cached, served := run(3, assignments[name])
				t.Logf("3 replicas, %s: counterfactual %d, cached %d, saved %d tokens, $%.4f",
					name, sum.Counterfactual, cached, sum.SavedTokens, sum.SavedUSD)
				assert.Equal(t, singleServed, served, "%s: every request served the same bytes", name)
				assert.Equal(t, singleCached, cached, "%s: the cached counterfactual of every row", name)
				assert.InDelta(t, single.SavedUSD, sum.SavedUSD, 1e-9, name)
				want := single
				want.SavedUSD = sum.SavedUSD // summed in another order: compared above
				assert.Equal(t, want, sum, "%s: ledger totals to the token", name)
			}
		})
	}
}

// TestCachedCounterfactualAfterRestart: a proxy that never saw a
// conversation's earlier requests (restarted, or another replica) records
// the same cached counterfactual for a request as one that saw them all.
func TestCachedCounterfactualAfterRestart(t *testing.T) {
	up := deterministicUpstream(t)
	ps := replicas(t, up, 2)
	h := claudeHeaders()
	first := workerBody(`[{"role":"user","content":"fix the bug"}]`)
	second := workerBody(`[{"role":"user","content":"fix the bug"},{"role":"assistant","content":"ok"},{"role":"user","content":"go on"}]`)
	for _, p := range ps[:1] {
		do(t, rawClient(), "POST", p.URL+"/v1/messages", h, first)
	}
	for _, p := range ps {
		resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, second)
		require.Equal(t, 200, resp.StatusCode, string(got))
	}
	saw, fresh := ps[0].rows(t), ps[1].rows(t)
	require.Len(t, saw, 2)
	require.Len(t, fresh, 1)
	require.NotNil(t, saw[1].CounterfactualCached)
	require.NotNil(t, fresh[0].CounterfactualCached)
	assert.Equal(t, *saw[0].Counterfactual, *saw[1].CounterfactualCached, "the cut is the first request's count")
	assert.Equal(t, *saw[1].CounterfactualCached, *fresh[0].CounterfactualCached)
	assert.Equal(t, saw[1].Usage, fresh[0].Usage)
	assert.Equal(t, ledger.SavedUSD(saw[1].Model, *saw[1].Counterfactual, saw[1].CounterfactualCached, saw[1].Usage, saw[1].ClientTTL()),
		ledger.SavedUSD(fresh[0].Model, *fresh[0].Counterfactual, fresh[0].CounterfactualCached, fresh[0].Usage, fresh[0].ClientTTL()))
}
