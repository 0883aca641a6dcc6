package cachesim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byLen counts a token per 4 bytes of canonical JSON.
func byLen(b []byte) int { return len(b) / 4 }

func body(t *testing.T, ttl string, texts []string, marks ...int) []byte {
	t.Helper()
	var blocks []map[string]any
	for i, s := range texts {
		b := map[string]any{"type": "text", "text": s}
		for _, m := range marks {
			if m == i {
				cc := map[string]any{"type": "ephemeral"}
				if ttl != "" {
					cc["ttl"] = ttl
				}
				b["cache_control"] = cc
			}
		}
		blocks = append(blocks, b)
	}
	out, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1,
		"messages": []any{map[string]any{"role": "user", "content": blocks}}})
	require.NoError(t, err)
	return out
}

func texts(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("block %02d ", i)+strings.Repeat("x", 400))
	}
	return out
}

func TestWriteThenRead(t *testing.T) {
	s := New(100, byLen)
	ts := texts(10)
	u1, err := s.Request(body(t, "", ts, 9), time.Time{})
	require.NoError(t, err)
	assert.Zero(t, u1.Read)
	assert.Positive(t, u1.Write5m)
	assert.Zero(t, u1.Input, "everything up to the breakpoint is written")
	u2, err := s.Request(body(t, "", append(ts, texts(12)[10:]...), 11), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, u1.Write5m, u2.Read, "the earlier write is read through lookback")
	assert.Equal(t, u1.Total(), u2.Read)
	assert.Positive(t, u2.Write5m)
}

func TestLookbackIsTwentyBlocks(t *testing.T) {
	for _, tc := range []struct {
		extra int
		hit   bool
	}{{19, true}, {20, false}} {
		s := New(100, byLen)
		ts := texts(5 + tc.extra)
		_, err := s.Request(body(t, "", ts[:5], 4), time.Time{})
		require.NoError(t, err)
		u, err := s.Request(body(t, "", ts, len(ts)-1), time.Time{})
		require.NoError(t, err)
		assert.Equal(t, tc.hit, u.Read > 0, "breakpoint %d blocks after the write", tc.extra)
	}
}

func TestMinimumLengthAndTTL(t *testing.T) {
	s := New(1_000_000, byLen)
	u, err := s.Request(body(t, "", texts(3), 2), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, u.Total(), u.Input, "below the minimum nothing is cached")

	s = New(100, byLen)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := texts(4)
	_, err = s.Request(body(t, "", ts, 3), t0)
	require.NoError(t, err)
	u, err = s.Request(body(t, "", ts, 3), t0.Add(6*time.Minute))
	require.NoError(t, err)
	assert.Zero(t, u.Read, "a 5-minute entry expired")
	u, err = s.Request(body(t, "1h", ts, 3), t0.Add(20*time.Minute))
	require.NoError(t, err)
	assert.Zero(t, u.Read, "the rewritten 5-minute entry expired too")
	assert.Positive(t, u.Write1h)
	u, err = s.Request(body(t, "1h", ts, 3), t0.Add(70*time.Minute))
	require.NoError(t, err)
	assert.Positive(t, u.Read, "a 1-hour entry is still there")
	assert.InDelta(t, float64(u.Input)+0.1*float64(u.Read), u.BilledEquivalent(), 1e-9)
}

func TestMovingBreakpointChangesNoCount(t *testing.T) {
	s := New(100, byLen)
	a, err := s.Request(body(t, "", texts(6), 2), time.Time{})
	require.NoError(t, err)
	b, err := New(100, byLen).Request(body(t, "", texts(6), 5), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, a.Total(), b.Total())
}
