package e2e_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheTTLs is the ttl of every cache_control object in a request body
// ("" for one without a ttl: the default, 5 minutes), wherever it sits, in
// the order of the cached prefix: tools, system, messages (a block's
// nested content before the block's own mark), then the top level's.
func cacheTTLs(t *testing.T, body []byte) []string {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	var ttls []string
	mark := func(v any) {
		if cc, ok := v.(map[string]any); ok {
			ttl, _ := cc["ttl"].(string)
			ttls = append(ttls, ttl)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if k != "cache_control" {
					walk(v[k])
				}
			}
			mark(v["cache_control"])
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, field := range []string{"tools", "system", "messages"} {
		walk(doc[field])
	}
	mark(doc["cache_control"])
	return ttls
}

// TestCacheTTL1hProjectedRealClient: Claude Code 2.1.332 asks for the
// 1-hour cache TTL on an API key when ENABLE_PROMPT_CACHING_1H=1 (on a
// subscription it does so by default): every cache_control it sends
// carries "ttl":"1h". A routed print-mode session of 24 module reads
// under that setting, on the fake's received bytes: a request the engine
// has not engaged on keeps the client's hour on every breakpoint; an
// engaged one keeps it on the system prompt and the goal, and marks the
// generations and the tail, which its rebuilds replace, for five minutes,
// every one-hour mark first (the fake rejects the other order). The
// fake's cache simulator bills the engaged requests' writes at both
// rates, every request is valid, and every engaged row of the ledger
// records the client's hour (what its saving is priced at).
func TestCacheTTL1hProjectedRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	start := time.Now()
	e, _, fake, proxy := mechanismSession(t)
	e.Vars = append(e.Vars, "ENABLE_PROMPT_CACHING_1H=1")
	out := printTurn(t, e, "Please read m01.py to m24.py.")
	assert.Contains(t, out, "Done: read m01 to m24.")
	served := checkServed(t, e, fake, proxy, "m24.py")

	reqs := fake.MessagesRequests()
	var breakpoints, projected, mixed, withHour int
	var write5m, write1h int64
	for i, r := range reqs {
		ttls := cacheTTLs(t, r.Body)
		breakpoints += len(ttls)
		body := string(r.Body)
		if !strings.Contains(body, foldNote) && !strings.Contains(body, syntheticID) {
			for _, ttl := range ttls {
				assert.Equal(t, "1h", ttl, "request %d, not projected: the client's hour on every breakpoint", i)
			}
			continue
		}
		projected++
		require.NotEmpty(t, ttls, "request %d: the projection places breakpoints", i)
		if ttls[0] == "1h" {
			withHour++
		}
		for k, ttl := range ttls {
			if ttl == "" {
				assert.NotContains(t, ttls[k:], "1h", "request %d: every one-hour mark first: %v", i, ttls)
				mixed++
				break
			}
		}
		write5m += r.Usage.Ephemeral5m
		write1h += r.Usage.Ephemeral1h
	}
	rows := readLedger(t, e)
	engagedRows := strings.Count(rowMarks(rows), "E")
	for _, r := range rows {
		if engaged(r) {
			assert.Equal(t, "1h", r.ClientTTL(), "the ledger prices the client's growth at its hour")
		}
	}
	assert.Equal(t, engagedRows, projected, "the requests served as the engine's projection are the engaged rows")
	assert.Positive(t, withHour, "projections keep the client's hour on their stable part")
	assert.Positive(t, mixed, "projections mark their tail for five minutes")
	stats := fake.CacheStats()
	assert.Positive(t, stats.Write1h, "1-hour writes billed")
	assert.Positive(t, write5m, "the projected requests wrote their tails at the 5-minute rate")
	t.Logf("%d requests, %d engaged (%d with a one-hour mark, %d with a five-minute one), %d breakpoints; writes: all requests 1h %d / 5m %d tokens, engaged 1h %d / 5m %d; %s; %s",
		len(reqs), projected, withHour, mixed, breakpoints, stats.Write1h, stats.Write5m, write1h, write5m, served, time.Since(start).Round(time.Second))
}
