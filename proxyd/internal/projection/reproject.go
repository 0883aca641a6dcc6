package projection

import (
	"slices"
)

// maybeReproject accounts for the turn whose full form has current
// tokens and rebuilds the snapshot from the cut that pays, if any (see
// generation.go). The checkpoint is the assistant message this turn
// answers, so the latest completed exchange stays verbatim. hold defers
// the rebuild a turn, unless what a rebuild can fold is over the ceiling
// (see changesView).
func (f *fold) maybeReproject(current int, hold bool) {
	now := f.headTokens() + f.snapTokens() + f.tailTokens + current
	if !f.engaged() {
		now = f.cfg.origOverhead + f.origTokens
	}
	est := f.estimates()
	f.account(now, current, est)
	if len(f.tail) <= 1 || f.tail[len(f.tail)-1].role != "assistant" || f.tailTokens < f.cfg.threshold {
		return
	}
	c := -1
	if f.rosterGrew {
		c = f.rebuildFree(now, current, est[0])
	}
	if c < 0 && (!hold || !f.engaged()) {
		c = f.chooseCut(now, current, est)
	}
	if c < 0 && f.engaged() && now-est[0].kept > f.cfg.ceiling {
		// Over the hard ceiling: rebuild whatever it costs. The ceiling
		// bounds what a rebuild can fold (the snapshot and the tail); what
		// a rebuild from the first cut keeps (the head, the user's words)
		// is served however large it is, so a conversation over the
		// ceiling by that part alone is not rebuilt at every turn.
		c = 0
	}
	if c >= 0 {
		f.reproject(c)
	}
}

// reproject folds every tail message but the last assistant one into the
// world and rebuilds the generations from cut c on: the world entries they
// do not keep are evicted down to the target, and the survivors are
// rendered as one new generation — those the rebuilt generations served,
// in their previous order, then the new ones — followed by a note of what
// was dropped since.
//
// The user's folded words (and system notes) are never part of a rebuilt
// generation: they go at the cut, appended to what stays served before
// it — the goal's dialogue for a rebuild from cut 0, else the end of the
// generation before the cut — so the bytes before them are re-served
// unchanged and they are written once there. A rebuild from cut c moves
// the words the generations from c on carried to the cut with the new
// ones, in order; words in the goal's dialogue are never moved again.
func (f *fold) reproject(c int) {
	keep := f.tail[len(f.tail)-1]
	before := len(f.gens)
	var g gen
	for {
		var ok bool
		if g, ok = f.rebuild(c); ok || c == 0 {
			break
		}
		c-- // an empty generation cannot carry its note
	}
	var words []served
	wordTokens := 0
	for _, old := range f.gens[c:] {
		words = append(words, old.dialogue...)
		wordTokens += old.dialogueTokens
	}
	words = append(words, f.pending...)
	wordTokens += f.pendingTokens
	f.pending, f.pendingTokens = nil, 0
	f.gens = append(f.gens[:c:c], g)
	switch {
	case len(g.list) == 0:
		// No world: the note rides on the goal message, before its dialogue.
		f.gens = f.gens[:0]
		f.headNotes, f.headNoteTokens = nil, 0
		if len(g.msgs) > 0 {
			f.headNotes, f.headNoteTokens = g.msgs[0].blocks, g.tokens
		}
	case c == 0:
		f.headNotes, f.headNoteTokens = nil, 0
	}
	if c == 0 {
		var spill []served
		f.dialogue, spill = appendTurns(f.dialogue, words)
		f.headWords = append(slices.Clip(f.headWords), spill...)
		f.dialogueTokens += wordTokens
	} else {
		f.gens[c-1].extend(words, wordTokens)
	}
	if len(f.gens) > maxGens {
		// Promote: the two oldest generations become one, unchanged.
		a, b := f.gens[0], f.gens[1]
		merged := gen{list: slices.Concat(a.list, b.list), msgs: slices.Concat(a.msgs, b.msgs),
			tokens:   a.tokens + b.tokens,
			dialogue: slices.Concat(a.dialogue, b.dialogue), dialogueTokens: a.dialogueTokens + b.dialogueTokens,
			listed: slices.Concat(a.listed, b.listed)}
		f.gens = append([]gen{merged}, f.gens[2:]...)
		if c > 0 {
			c--
		}
	}
	f.where = make(map[*entry]int)
	for i, g := range f.gens {
		for _, e := range g.list {
			f.where[e] = i
		}
	}
	f.settle(c, before)
	f.indexSnapshot()
	f.tail = []served{keep}
	f.tailTokens = keep.tokens
	f.reprojections++
	f.reprojected = true
	f.lastCut = c
}

// rebuild renders the generation that replaces those from cut c on; ok is
// false when it has no entry (its note has nothing to ride on).
func (f *fold) rebuild(c int) (gen, bool) {
	keptSnap := 0
	listed := map[string]bool{}
	for _, g := range f.gens[:c] {
		keptSnap += g.tokens - g.dialogueTokens
		for _, k := range g.listed {
			listed[k] = true
		}
	}
	var cands []*entry
	for _, e := range f.world.entries {
		if !f.keptIn(e, c) {
			cands = append(cands, e)
		}
	}
	stale := func(e *entry) bool { return f.staleKept(e.key, c) }
	f.evictions += f.world.evict(cands, f.room(c, keptSnap), f.step, stale)
	in := map[*entry]bool{}
	var list []*entry
	for _, g := range f.gens[c:] {
		for _, e := range g.list {
			if f.world.entries[e.key] == e && !in[e] {
				list = append(list, e)
				in[e] = true
			}
		}
	}
	for _, e := range f.world.ordered() {
		if !in[e] && !f.keptIn(e, c) {
			list = append(list, e)
		}
	}
	var drops []string
	for _, k := range f.world.dropped() {
		if !listed[k] || f.staleKept(k, c) {
			drops = append(drops, k)
		}
	}
	g := gen{list: list, listed: drops}
	g.msgs = f.renderGen(list, f.notes(drops))
	for _, s := range g.msgs {
		g.tokens += s.tokens
	}
	return g, len(list) > 0 || c == 0
}

// staleKept reports whether a generation before cut c shows a copy of key
// that is no longer its current version.
func (f *fold) staleKept(key string, c int) bool {
	for _, g := range f.gens[:c] {
		for _, e := range g.list {
			if e.key == key && f.world.entries[key] != e {
				return true
			}
		}
	}
	return false
}
