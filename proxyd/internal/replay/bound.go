package replay

import (
	"encoding/json"
	"time"

	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// bound is the best billed-equivalent input any projection of a session
// could reach, computed from the session alone (see the package doc, "The
// session's bound"): its fixed part — the tools and system prompt, the
// first message of each history (and the environment message after it),
// every user-typed block and compaction summary — is written once and read
// by every later request, and every other token of new content is written
// once, at five minutes (1.25×), and never read again. A pause longer than
// the cache's TTL expires the fixed part, which is then written again; a
// compaction keeps only the tools and system prompt cached. The fixed part
// is priced at both TTLs, five minutes (1.25× writes, expired by a pause
// of more than five minutes) and an hour (2×, expired by a pause of more
// than an hour), and the bound takes the cheaper: a projection may choose
// either, whatever the client asks.
type bound struct {
	keep    int64 // tools and system prompt (newContent.keep)
	prev    int64 // the fixed part of the request before
	prevAt  time.Time
	started bool
	// fixed5m and fixed1h are the fixed part's billed input at either
	// TTL, fresh the other new content's.
	fixed5m, fixed1h, fresh float64
}

// billed is the bound's billed-equivalent input so far.
func (b *bound) billed() float64 { return min(b.fixed5m, b.fixed1h) + b.fresh }

// add bills one request: fixed is its fixed part in tokens, fresh its new
// content (newContent.add).
func (b *bound) add(fixed, fresh int64, at time.Time, reset bool) {
	shared := sharedPrefix(b.prev, b.keep, b.started, reset)
	newFixed := max(0, fixed-shared)
	price := func(write float64, life time.Duration) float64 {
		cached := fixed - newFixed
		if b.started && at.Sub(b.prevAt) > life {
			cached = 0 // the pause expired it: written again
		}
		return 0.1*float64(cached) + write*float64(fixed-cached)
	}
	b.fixed5m += price(1.25, 5*time.Minute)
	b.fixed1h += price(2, time.Hour)
	b.fresh += 1.25 * float64(max(0, fresh-newFixed))
	b.prev, b.prevAt, b.started = fixed, at, true
}

// fixedTokens is the fixed part of a request's messages: all of its first
// message and the environment message after it (env tokens), and every
// user-typed block and compaction summary after them; keep (the tools and
// system prompt) is added by the caller.
func fixedTokens(messages []msg, summaries map[string]bool, env int64, tok func([]byte) int) int64 {
	n := env
	for i, m := range messages {
		for _, c := range m.Content {
			if i == 0 || m.Role == "user" && (userTyped(c, summaries) || isSummary(c, summaries)) {
				n += int64(max(1, tok(cachesim.Canonical(c))))
			}
		}
	}
	return n
}

// isSummary reports whether a block is a compaction summary's text.
func isSummary(block json.RawMessage, summaries map[string]bool) bool {
	return len(summaries) > 0 && summaries[userContent(block)]
}
