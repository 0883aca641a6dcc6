package fakeapi

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

// usageOf sends a messages body and returns the usage the fake reported,
// checking that the reported JSON matches the recorded Usage.
func usageOf(t *testing.T, s *Server, b string) Usage {
	t.Helper()
	resp, raw := post(t, s, "/v1/messages", b)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	reqs := s.Requests()
	u := reqs[len(reqs)-1].Usage
	wire := decodeJSON(t, raw)["usage"].(obj)
	assert.Equal(t, float64(u.InputTokens), wire["input_tokens"])
	assert.Equal(t, float64(u.CacheCreationInputTokens), wire["cache_creation_input_tokens"])
	assert.Equal(t, float64(u.CacheReadInputTokens), wire["cache_read_input_tokens"])
	cc := wire["cache_creation"].(obj)
	assert.Equal(t, float64(u.Ephemeral5m), cc["ephemeral_5m_input_tokens"])
	assert.Equal(t, float64(u.Ephemeral1h), cc["ephemeral_1h_input_tokens"])
	assert.Equal(t, u.CacheCreationInputTokens, u.Ephemeral5m+u.Ephemeral1h)
	return u
}

// conversation is a growing agent conversation: a cached system prompt,
// then turns of (assistant tool_use, user tool_result) with Claude Code's
// breakpoint on the last block.
type conversation struct {
	system string
	turns  int
	ttl    string
}

func (c conversation) body(t *testing.T) string {
	msgs := arr{user(text("task: fix the bug"))}
	for i := 0; i < c.turns; i++ {
		id := fmt.Sprintf("toolu_%03d", i)
		msgs = append(msgs, assistant(toolUse(id, "Read", obj{"file_path": fmt.Sprintf("/src/f%d.go", i)})),
			user(toolResult(id, fmt.Sprintf("1\tpackage f%d\n2\t", i))))
	}
	last := msgs[len(msgs)-1].(obj)
	blocks := last["content"].([]any)
	blocks[len(blocks)-1] = cached(blocks[len(blocks)-1].(obj), c.ttl)
	return body(t, msgs, obj{"tools": arr{tool("Read")}, "system": arr{cached(text(c.system), c.ttl)}})
}

func TestCacheHitAfterIdenticalPrefix(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	conv := conversation{system: bigText("sys", 2000), turns: 1}
	total, err := CountTokens([]byte(conv.body(t)))
	require.NoError(t, err)

	first := usageOf(t, s, conv.body(t))
	assert.Zero(t, first.CacheReadInputTokens)
	assert.Equal(t, total, first.CacheCreationInputTokens, "everything up to the last breakpoint is written")
	assert.Zero(t, first.InputTokens, "nothing after the last breakpoint")

	second := usageOf(t, s, conv.body(t))
	assert.Equal(t, total, second.CacheReadInputTokens)
	assert.Zero(t, second.CacheCreationInputTokens)

	conv.turns = 2
	grown := usageOf(t, s, conv.body(t))
	total2, _ := CountTokens([]byte(conv.body(t)))
	assert.Equal(t, total, grown.CacheReadInputTokens, "the previous prefix is read")
	assert.Equal(t, total2-total, grown.CacheCreationInputTokens, "only the new turn is written")
	assert.Equal(t, total2, grown.TotalInput())
}

func TestCacheMissAfterChange(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	conv := conversation{system: bigText("sys", 2000), turns: 3}
	usageOf(t, s, conv.body(t))
	conv.system = bigText("changed", 2000)
	u := usageOf(t, s, conv.body(t))
	assert.Zero(t, u.CacheReadInputTokens, "a system change invalidates system and messages")
	assert.Equal(t, u.TotalInput(), u.CacheCreationInputTokens)

	other := New(Options{})
	defer other.Close()
	b := conversation{system: bigText("sys", 2000), turns: 1}.body(t)
	usageOf(t, other, b)
	otherModel := usageOf(t, other, string(replaceModel(t, b, "claude-other")))
	assert.Zero(t, otherModel.CacheReadInputTokens, "entries are keyed by model")
}

func replaceModel(t *testing.T, b, model string) []byte {
	m := decodeJSON(t, []byte(b))
	m["model"] = model
	return []byte(js(t, m))
}

func TestCacheLookbackIsTwentyBlocks(t *testing.T) {
	// One message per block: the first request caches the prefix through
	// message k; the second adds n more single-block messages and puts its
	// only breakpoint on the last one.
	sys := bigText("sys", 1500)
	build := func(n int, mark int) string {
		msgs := arr{}
		for i := 0; i < n; i++ {
			b := text(fmt.Sprintf("message %d", i))
			if i == mark {
				b = cached(b, "")
			}
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, obj{"role": role, "content": arr{b}})
		}
		return body(t, msgs, obj{"system": arr{text(sys)}})
	}
	for _, tc := range []struct {
		name  string
		extra int
		hit   bool
	}{
		{"breakpoint 19 blocks later finds it", 19, true},
		{"breakpoint 20 blocks later does not", 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			defer s.Close()
			first := usageOf(t, s, build(5, 4))
			require.NotZero(t, first.CacheCreationInputTokens)
			u := usageOf(t, s, build(5+tc.extra, 4+tc.extra))
			if tc.hit {
				assert.Equal(t, first.CacheCreationInputTokens, u.CacheReadInputTokens)
			} else {
				assert.Zero(t, u.CacheReadInputTokens)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	for _, tc := range []struct {
		ttl   string
		steps []time.Duration
		hits  []bool
	}{
		{"5m", []time.Duration{4 * time.Minute, 4 * time.Minute, 6 * time.Minute}, []bool{true, true, false}},
		{"1h", []time.Duration{50 * time.Minute, 59 * time.Minute, 61 * time.Minute}, []bool{true, true, false}},
	} {
		t.Run(tc.ttl, func(t *testing.T) {
			clk := newClock()
			s := New(Options{Now: clk.Now})
			defer s.Close()
			b := conversation{system: bigText("sys", 2000), turns: 1, ttl: tc.ttl}.body(t)
			first := usageOf(t, s, b)
			if tc.ttl == "1h" {
				assert.Equal(t, first.CacheCreationInputTokens, first.Ephemeral1h)
			} else {
				assert.Equal(t, first.CacheCreationInputTokens, first.Ephemeral5m)
			}
			for i, d := range tc.steps {
				clk.Add(d)
				u := usageOf(t, s, b)
				assert.Equal(t, tc.hits[i], u.CacheReadInputTokens > 0, "step %d after %v (a hit refreshes the TTL)", i, d)
			}
		})
	}
}

func TestCacheTTLSplit(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	sys := bigText("sys", 1500)
	b := body(t, arr{user(cached(text(bigText("msg", 600)), "5m"))},
		obj{"system": arr{cached(text(sys), "1h")}})
	u := usageOf(t, s, b)
	sysTokens := Tokens([]byte(js(t, text(sys))))
	assert.Equal(t, sysTokens, u.Ephemeral1h, "the prefix through the 1h breakpoint is a 1h write")
	assert.Equal(t, u.TotalInput()-sysTokens, u.Ephemeral5m, "the rest up to the 5m breakpoint is a 5m write")
}

func TestCacheMinimumLength(t *testing.T) {
	small := conversation{system: "short system prompt", turns: 1}
	s := New(Options{})
	defer s.Close()
	for i := 0; i < 2; i++ {
		u := usageOf(t, s, small.body(t))
		assert.Zero(t, u.CacheCreationInputTokens, "below 1024 tokens nothing is written")
		assert.Zero(t, u.CacheReadInputTokens)
		assert.Positive(t, u.InputTokens)
	}
	low := New(Options{CacheMinTokens: 10})
	defer low.Close()
	usageOf(t, low, small.body(t))
	assert.Positive(t, usageOf(t, low, small.body(t)).CacheReadInputTokens, "a lower minimum caches it")
}

func TestCacheStatsAndCountTokensConsistency(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	conv := conversation{system: bigText("sys", 2000)}
	var sumInput int64
	for turn := 0; turn < 6; turn++ {
		conv.turns = turn
		b := conv.body(t)
		u := usageOf(t, s, b)
		// Same body through count_tokens (minus the fields it rejects).
		m := decodeJSON(t, []byte(b))
		delete(m, "max_tokens")
		resp, raw := post(t, s, "/v1/messages/count_tokens", js(t, m))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
		assert.Equal(t, float64(u.TotalInput()), decodeJSON(t, raw)["input_tokens"], "turn %d", turn)
		sumInput += u.TotalInput()
	}
	st := s.CacheStats()
	assert.Equal(t, 6, st.Requests, "count_tokens calls are not messages usage")
	assert.Equal(t, sumInput, st.Input+st.CacheWrite+st.CacheRead)
	assert.InDelta(t, float64(st.CacheRead)/float64(sumInput), st.HitRatio(), 1e-12)
	assert.Greater(t, st.HitRatio(), 0.7, "a growing conversation mostly reads its prefix")
}
