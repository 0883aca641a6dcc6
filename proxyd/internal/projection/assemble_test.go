package projection

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// servedMarks lists the time to live of every breakpoint of a served body
// in prompt order ("" for five minutes): the system prompt's, then the
// messages'.
func servedMarks(body []byte) []string {
	var ttls []string
	add := func(b gjson.Result) {
		if cc := b.Get("cache_control"); cc.Exists() {
			ttls = append(ttls, cc.Get("ttl").String())
		}
	}
	gjson.GetBytes(body, "system").ForEach(func(_, b gjson.Result) bool { add(b); return true })
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		m.Get("content").ForEach(func(_, b gjson.Result) bool { add(b); return true })
		return true
	})
	return ttls
}

// TestOneHourClientMarks: a client that asks for the one-hour TTL (Claude
// Code on a subscription) keeps it on what the engine never rewrites, the
// system prompt and the goal, and the generations and tail the rebuilds
// replace are marked for five minutes: every one-hour mark comes first, as
// the API requires. After a 20-minute pause the cache still holds the
// one-hour part, and only the rest is written again; a five-minute
// client's cache holds nothing then. A five-minute client's projection
// carries no ttl at all.
func TestOneHourClientMarks(t *testing.T) {
	msgs := []obj{user(text("goal: survey the modules"))}
	for i := range 40 {
		id := fmt.Sprintf("toolu_m%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/m%02d.go", i), fileLines(id, 60))...)
	}
	for _, ttl := range []string{"1h", ""} {
		t.Run("ttl="+ttl, func(t *testing.T) {
			eng := New(Config{BudgetTokens: 4000, AlwaysEngage: true})
			sim := cachesim.New(1, tokens.EstimateBytes) // the test's system prompt and goal are short
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			rebuilt, fresh := 0, 0
			var last cachesim.Usage
			for n := 3; n <= len(msgs); n += 2 {
				body := reqBody(msgs[:n])
				if ttl != "" {
					body = []byte(strings.ReplaceAll(string(body), `{"type":"ephemeral"}`, `{"type":"ephemeral","ttl":"1h"}`))
				}
				r, err := eng.ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				require.NoError(t, validate.Request(r.Body), "request of %d messages", n)
				require.True(t, r.Engaged)
				assert.Equal(t, ttl, r.Stats.ClientTTL, "the ledger row records the client's TTL")
				if r.Reprojected {
					rebuilt++
				}
				marks := servedMarks(r.Body)
				require.NotEmpty(t, marks)
				if ttl == "" {
					assert.NotContains(t, string(r.Body), `"ttl"`, "a five-minute client's projection carries no ttl")
				} else {
					assert.Equal(t, "1h", marks[0], "the system prompt keeps the client's hour")
					for i, m := range marks[1:] {
						if m == "" {
							fresh++
							assert.NotContains(t, marks[i+1:], "1h", "every one-hour mark comes first: %v", marks)
							break
						}
					}
				}
				if n+2 > len(msgs) {
					at = at.Add(20 * time.Minute) // a pause before the last request
				} else {
					at = at.Add(time.Minute)
				}
				last, err = sim.Request(r.Body, at)
				require.NoError(t, err)
			}
			require.Positive(t, rebuilt, "the conversation rebuilds")
			if ttl == "" {
				assert.Zero(t, last.Read, "after 20 minutes a five-minute cache holds nothing")
				return
			}
			assert.Positive(t, fresh, "the generations and tail are marked for five minutes")
			assert.Positive(t, last.Read, "after 20 minutes the one-hour part is read")
			assert.Zero(t, last.Write1h, "and not written again")
			assert.Positive(t, last.Write5m, "the rest is written again at five minutes")
		})
	}
}
