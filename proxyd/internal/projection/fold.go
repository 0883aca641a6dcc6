package projection

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
)

// served is one message as the projection serves it.
type served struct {
	role   string
	blocks [][]byte // canonical block JSON, no cache_control
	kinds  []string // block types, parallel to blocks
	tokens int
	bp     map[int]bool // blocks that carry a breakpoint
	// stable marks a user message whose curated form is its full form:
	// served as the current turn, it is re-served unchanged afterwards.
	stable bool
	extra  []byte // the message's other fields, verbatim
}

// fold is the deterministic state of a conversation after its messages
// have been read in order. Everything the projection serves is computed
// here from the messages alone, so a fresh engine reproduces it.
type fold struct {
	cfg   resolved
	world *world
	mem   *memory
	step  int
	uses  map[string]block // tool_use id → call
	// called holds the name of every tool the conversation has called:
	// the tool roster (tools.go) serves them in full.
	called map[string]bool
	// rosterGrew says the latest assistant message called a tool the
	// roster served shortened: the request carrying its result serves
	// another roster, so its whole prefix is written again whatever the
	// engine serves after the tools (see maybeReproject).
	rosterGrew bool
	head       []served
	// gens is the world snapshot, oldest generation first (see
	// generation.go); where maps each entry they serve to its generation.
	gens  []gen
	where map[*entry]int
	// acc is, per cut, the read cost a rebuild from it would have saved
	// since that part was last rebuilt.
	acc  []float64
	tail []served // curated messages since the checkpoint
	// pending is the dialogue of the tail's messages (see words.go): the
	// messages the user typed, the assistant's words they replied to and
	// system notes, as sent, folded into the dialogue at the next
	// re-projection; pendingTokens their estimate.
	pending       []served
	pendingTokens int
	// dialogue is the goal's dialogue: the messages folded by rebuilds
	// from cut 0, served after the goal, only ever extended (see
	// reproject); dialogueTokens its estimate.
	dialogue       []served
	dialogueTokens int
	// headWords are the blocks of dialogue user messages that follow the
	// goal with no assistant words between: served at the end of the
	// goal's last user message, as sent (see appendTurns); their tokens
	// are in dialogueTokens.
	headWords []served
	// words are the text blocks of the latest assistant message: what a
	// user message typed after it replies to.
	words served

	headNotes      [][]byte // the snapshot note carried by the goal message when the world is empty
	headNoteTokens int

	tailTokens int
	origTokens int // the client's messages as sent, for the engagement decision
	firstNow   int // the served size of the first turn accounted

	// shown is, per identity, the latest result the request serves
	// verbatim; refs maps the tool_use id of a result served as a
	// reference to the text it stands for (see dedupe.go).
	shown map[string]shownCopy
	refs  map[string]string

	reminded      bool // the final message carries the memory reminder
	inHead        bool // no assistant message seen yet
	reprojections int
	reprojected   bool // at the last step
	// uncacheable is the stable prefix (tokens) of the projection the
	// last engagement decision declined as too short to cache, else 0.
	uncacheable int
	evictions   int
	lastCut     int // the cut of the last re-projection

	// passing are the candidates to fold waiting for the next assistant
	// message, by tool_use id, and folded the ids of the results folded
	// (pass.go).
	passing map[string]passing
	folded  map[string]bool
	// calls are the folded calls of other tools, by key (foreign.go).
	calls map[string]foldedCall
}

func newFold(cfg resolved) *fold {
	return &fold{cfg: cfg, world: newWorld(cfg.tok), mem: newMemory(), uses: map[string]block{}, called: map[string]bool{}, inHead: true,
		shown: map[string]shownCopy{}, refs: map[string]string{}, where: map[*entry]int{},
		passing: map[string]passing{}, folded: map[string]bool{}, calls: map[string]foldedCall{}}
}

// engaged reports whether the engine serves its projection rather than
// the client's body: from the first re-projection on.
func (f *fold) engaged() bool { return f.cfg.always || f.reprojections > 0 }

// clone copies the state so that folding more messages into the copy
// leaves the original untouched (entries, rendered messages and the
// where map are immutable and shared).
func (f *fold) clone() *fold {
	c := *f
	c.world = f.world.clone()
	c.mem = f.mem.clone()
	c.uses = maps.Clone(f.uses)
	c.called = maps.Clone(f.called)
	c.head = slices.Clone(f.head)
	c.gens = slices.Clone(f.gens)
	c.acc = slices.Clone(f.acc)
	c.tail = slices.Clone(f.tail)
	c.pending = slices.Clone(f.pending)
	c.dialogue = slices.Clone(f.dialogue)
	c.headNotes = slices.Clone(f.headNotes)
	c.headWords = slices.Clone(f.headWords)
	c.shown = maps.Clone(f.shown)
	c.refs = maps.Clone(f.refs)
	c.passing = maps.Clone(f.passing)
	c.folded = maps.Clone(f.folded)
	c.calls = maps.Clone(f.calls)
	return &c
}

// consume folds the next message; last says it is the request's final message
// (the current turn, served in full).
func (f *fold) consume(m message, last bool) error {
	if f.inHead {
		if m.role != "assistant" {
			f.head = append(f.head, f.render(m, false, nil))
			return nil
		}
		if !hasRole(f.head, "user") {
			return fmt.Errorf("no user message before the first assistant message")
		}
		f.inHead = false
		for _, h := range f.head {
			f.origTokens += h.tokens
		}
	}
	switch m.role {
	case "assistant":
		f.origTokens += m.tokens(f.cfg.span)
		f.step++
		f.reprojected = false
		var calls []block
		f.rosterGrew = false
		for _, b := range m.blocks {
			if b.typ == "tool_use" {
				f.uses[b.id] = b
				f.rosterGrew = f.rosterGrew || f.cfg.shortened[b.name] && !f.called[b.name]
				f.called[b.name] = true
				f.refer(b, f.step)
				calls = append(calls, b)
			}
		}
		f.resolvePassing(calls, true)
		s := f.render(m, false, nil)
		f.tail = append(f.tail, s)
		f.tailTokens += s.tokens
		f.words = assistantWords(m, f.cfg.span)
	case "user":
		f.resolvePassing(nil, false)
		full := f.render(m, true, nil)
		f.origTokens += m.tokens(f.cfg.span)
		f.maybeReproject(full.tokens, f.changesView(m))
		// The curated form is decided after any re-projection, against
		// exactly what this request serves before the message.
		cur := f.render(m, false, f.indexResult)
		f.ingest(m)
		f.addPending(f.dialogueOf(m)...)
		full.stable = sameBlocks(full.blocks, cur.blocks)
		cur.stable = full.stable
		if last {
			f.tail = append(f.tail, full)
		} else {
			f.tail = append(f.tail, cur)
			f.tailTokens += cur.tokens
		}
	default: // role "system" inside messages, carried in place
		f.resolvePassing(nil, false)
		f.origTokens += m.tokens(f.cfg.span)
		s := f.render(m, false, nil)
		f.tail = append(f.tail, s)
		f.tailTokens += s.tokens
		f.addPending(s)
	}
	return nil
}

// addPending adds messages to the dialogue the next re-projection folds.
func (f *fold) addPending(msgs ...served) {
	f.pending = append(f.pending, msgs...)
	for _, m := range msgs {
		f.pendingTokens += m.tokens
	}
}

// served assembles the request's messages from the folded state.
func (f *fold) served() []served {
	f.reminded = false
	n := len(f.head) + len(f.dialogue) + len(f.tail) + 1
	for _, g := range f.gens {
		n += len(g.msgs)
	}
	out := make([]served, 0, n)
	out = append(out, f.head...)
	if len(f.headWords) > 0 || len(f.headNotes) > 0 {
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].role == "user" {
				h := &out[i]
				h.blocks, h.kinds = slices.Clip(h.blocks), slices.Clip(h.kinds)
				for _, w := range f.headWords {
					h.blocks = append(h.blocks, w.blocks...)
					h.kinds = append(h.kinds, w.kinds...)
				}
				h.blocks = append(h.blocks, f.headNotes...)
				for range f.headNotes {
					h.kinds = append(h.kinds, "text")
				}
				break
			}
		}
	}
	out = append(out, f.dialogue...)
	for _, g := range f.gens {
		out = append(out, g.msgs...)
	}
	out = append(out, f.tail...)
	if len(out) > 0 && out[len(out)-1].role == "user" {
		if r := f.mem.reminder(); r != "" {
			f.reminded = true
			l := &out[len(out)-1]
			l.blocks = append(append([][]byte(nil), l.blocks...), textBlock(r).raw)
			l.kinds = append(append([]string(nil), l.kinds...), "text")
		}
	}
	return out
}

func sameBlocks(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func hasRole(ms []served, role string) bool {
	for _, m := range ms {
		if m.role == role {
			return true
		}
	}
	return false
}
