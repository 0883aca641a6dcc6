package replay

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// TestBound: the fixed part is written once and then read, new content
// written once at five minutes; a pause beyond the TTL writes the fixed
// part again; a compaction keeps only the tools and system prompt cached;
// the bound takes the fixed part at the cheaper of the two TTLs.
func TestBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		fixed, fresh int64
		after        time.Duration
		reset        bool
	}
	for _, tc := range []struct {
		name                   string
		steps                  []step
		fixed5m, fixed1h, rest float64
	}{
		{"first request writes everything", []step{{fixed: 1000, fresh: 1500}},
			1.25 * 1000, 2 * 1000, 1.25 * 500},
		{"then the fixed part is read, the growth written", []step{
			{fixed: 1000, fresh: 1500},
			{fixed: 1100, fresh: 300, after: time.Minute},
		}, 1.25*1000 + 0.1*1000 + 1.25*100, 2*1000 + 0.1*1000 + 2*100, 1.25*500 + 1.25*200},
		{"a pause beyond 5 minutes writes it again at five minutes, not at an hour", []step{
			{fixed: 1000, fresh: 1500},
			{fixed: 1000, fresh: 300, after: 6 * time.Minute},
		}, 1.25*1000 + 1.25*1000, 2*1000 + 0.1*1000, 1.25*500 + 1.25*300},
		{"a pause beyond an hour writes it again at either", []step{
			{fixed: 1000, fresh: 1500},
			{fixed: 1000, fresh: 300, after: 61 * time.Minute},
		}, 1.25*1000 + 1.25*1000, 2*1000 + 2*1000, 1.25*500 + 1.25*300},
		{"a compaction keeps the tools and system prompt (400)", []step{
			{fixed: 1000, fresh: 1500},
			{fixed: 900, fresh: 700, after: time.Minute, reset: true},
		}, 1.25*1000 + 0.1*400 + 1.25*500, 2*1000 + 0.1*400 + 2*500, 1.25*500 + 1.25*200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bound{keep: 400}
			at := t0
			for _, s := range tc.steps {
				at = at.Add(s.after)
				b.add(s.fixed, s.fresh, at, s.reset)
			}
			assert.InDelta(t, tc.fixed5m, b.fixed5m, 1e-9, "the fixed part at five minutes")
			assert.InDelta(t, tc.fixed1h, b.fixed1h, 1e-9, "the fixed part at an hour")
			assert.InDelta(t, min(tc.fixed5m, tc.fixed1h)+tc.rest, b.billed(), 1e-9)
		})
	}
}

// TestFixedTokens: the first message whole, then user-typed blocks and
// compaction summaries; tool results, reminders and the assistant's
// messages are not fixed.
func TestFixedTokens(t *testing.T) {
	tok := func(b []byte) int { return len(b) }
	blk := func(s string) json.RawMessage { return json.RawMessage(s) }
	first := blk(`{"type":"text","text":"<system-reminder>r</system-reminder>"}`)
	typed := blk(`{"type":"text","text":"fix it"}`)
	summary := blk(`{"type":"text","text":"S"}`)
	h := []msg{
		{Role: "user", Content: []json.RawMessage{first}},
		{Role: "assistant", Content: []json.RawMessage{blk(`{"type":"text","text":"sure"}`)}},
		{Role: "user", Content: []json.RawMessage{blk(`{"type":"tool_result","tool_use_id":"x","content":"out"}`), blk(`{"type":"text","text":"<system-reminder>r2</system-reminder>"}`), typed, summary}},
	}
	c := func(b json.RawMessage) int { return len(cachesim.Canonical(b)) } // as the simulator counts a block
	want := int64(7 + c(first) + c(typed) + c(summary))
	assert.Equal(t, want, fixedTokens(h, map[string]bool{"S": true}, 7, tok))
}
