package replay

// TargetRawReduction is the raw-context reduction issue 8 asks of every
// main session ("raw context ≥ 3.5× below baseline"); the report's
// hit_ceiling_at_target_raw is the hit-ratio ceiling at exactly this
// reduction.
const TargetRawReduction = 3.5

// newContent accumulates N, the tokens of new content a sequence of
// baseline requests sends: all of the first request; then each request's
// growth over the one before it (never negative), which it extends; and,
// for the first request of a new history (after a compaction), all of it
// but the prefix it shares with the request before it, the client's tool
// list and system prompt (keep tokens; a cache may still hold them).
type newContent struct {
	keep    int64
	n, prev int64
	started bool
}

// add counts one baseline request of raw tokens; reset says it starts a
// new history. It returns the request's new content.
func (c *newContent) add(raw int64, reset bool) int64 {
	shared := sharedPrefix(c.prev, c.keep, c.started, reset)
	fresh := max(0, raw-shared)
	c.n += fresh
	c.prev, c.started = raw, true
	return fresh
}

// sharedPrefix is what a request shares with the one before it (prev
// tokens of it, or of its fixed part): nothing for the first, the tools
// and system prompt (keep) after a compaction, else all of it.
func sharedPrefix(prev, keep int64, started, reset bool) int64 {
	switch {
	case !started:
		return 0
	case reset:
		return min(keep, prev)
	}
	return prev
}

// hitCeiling is the highest cache-hit ratio a layout sending raw tokens in
// all can reach when newTokens of them are new content, each token of
// which is written or sent uncached at least once: 1 − newTokens/raw,
// and 0 when raw is not above newTokens (no layout can send less than
// the new content).
func hitCeiling(newTokens int64, raw float64) float64 {
	if raw <= float64(newTokens) {
		return 0
	}
	return 1 - float64(newTokens)/raw
}
