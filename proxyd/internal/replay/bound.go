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
// once and never read again. A pause longer than the cache's TTL
// expires the fixed part, which is then written again; a compaction keeps
// only the tools and system prompt cached.
type bound struct {
	keep    int64 // tools and system prompt (newContent.keep)
	prev    int64 // the fixed part of the request before
	prevAt  time.Time
	started bool
	billed  float64
}

// add bills one request: fixed is its fixed part in tokens, fresh its new
// content (newContent.add), ttl the client's cache TTL ("" or "1h").
func (b *bound) add(fixed, fresh int64, at time.Time, reset bool, ttl string) {
	write, life := 1.25, 5*time.Minute
	if ttl == "1h" {
		write, life = 2, time.Hour
	}
	shared := sharedPrefix(b.prev, b.keep, b.started, reset)
	newFixed := max(0, fixed-shared)
	cached := fixed - newFixed
	if b.started && at.Sub(b.prevAt) > life {
		cached = 0 // the pause expired it: written again
	}
	other := max(0, fresh-newFixed)
	b.billed += 0.1*float64(cached) + write*float64(fixed-cached) + write*float64(other)
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
