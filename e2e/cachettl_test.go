package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheTTLs is the ttl of every cache_control object in a request body
// ("" for one without a ttl: the default, 5 minutes), wherever it sits
// (tools, system, messages, content blocks, the top level).
func cacheTTLs(t *testing.T, body []byte) []string {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal(body, &doc))
	var ttls []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if cc, ok := x.(map[string]any); ok && k == "cache_control" {
					ttl, _ := cc["ttl"].(string)
					ttls = append(ttls, ttl)
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return ttls
}

// TestCacheTTL1hProjectedRealClient: Claude Code 2.1.332 asks for the
// 1-hour cache TTL on an API key when ENABLE_PROMPT_CACHING_1H=1 (on a
// subscription it does so by default): every cache_control it sends
// carries "ttl":"1h". A routed print-mode session of 24 module reads
// under that setting: on the fake's received bytes every breakpoint of
// every request, those the engine places in its projection included,
// carries ttl 1h; the fake's cache simulator bills the writes at the 1-hour
// rate (no 5-minute write on any projected request), and every request is
// valid.
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
	var breakpoints, projected int
	var write5m, write1h int64
	for i, r := range reqs {
		ttls := cacheTTLs(t, r.Body)
		breakpoints += len(ttls)
		for _, ttl := range ttls {
			assert.Equal(t, "1h", ttl, "request %d: every breakpoint asks for the 1-hour TTL", i)
		}
		body := string(r.Body)
		if !strings.Contains(body, foldNote) && !strings.Contains(body, syntheticID) {
			continue // not the engine's projection
		}
		projected++
		assert.NotEmpty(t, ttls, "request %d: the projection places breakpoints", i)
		assert.Zero(t, r.Usage.Ephemeral5m, "request %d: no 5-minute write", i)
		write5m += r.Usage.Ephemeral5m
		write1h += r.Usage.Ephemeral1h
	}
	engagedRows := strings.Count(rowMarks(readLedger(t, e)), "E")
	assert.Equal(t, engagedRows, projected, "the requests served as the engine's projection are the engaged rows")
	stats := fake.CacheStats()
	assert.Positive(t, stats.Write1h, "1-hour writes billed")
	assert.Positive(t, write1h, "the projected requests wrote at the 1-hour rate")
	t.Logf("%d requests, %d engaged, %d breakpoints all ttl 1h; writes: all requests 1h %d / 5m %d tokens, engaged 1h %d / 5m %d; %s; %s",
		len(reqs), projected, breakpoints, stats.Write1h, stats.Write5m, write1h, write5m, served, time.Since(start).Round(time.Second))
}
