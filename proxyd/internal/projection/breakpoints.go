package projection

import (
	"github.com/tidwall/gjson"
)

// placeBreakpoints marks at most 4 byte-stable positions, in this order
// of priority: the tail's write point (see tailWritePoints), the end of
// every generation of the snapshot, youngest first (what a re-projection
// from a later cut reads), the end of the goal (what a rebuild of the
// whole snapshot reads), and the last system block. It returns how many
// were placed.
func placeBreakpoints(sys []sysBlock, msgs []served, f *fold) int {
	mk := &marker{msgs: msgs}
	end := len(f.head) + len(f.dialogue)
	ends := make([]int, len(f.gens))
	for i, g := range f.gens {
		end += len(g.msgs)
		ends[i] = end - 1
	}
	mk.tailWritePoints(end, f.reminded)
	for i := len(ends) - 1; i >= 0; i-- {
		mk.end(ends[i])
	}
	mk.end(len(f.head) + len(f.dialogue) - 1)
	if mk.n < 4 && len(sys) > 0 {
		sys[len(sys)-1].bp = true
		mk.n++
	}
	return mk.n
}

// marker places breakpoints on served messages, at most four.
type marker struct {
	msgs []served
	n    int
}

// block marks block j of message i if it can carry a breakpoint (not a
// thinking block or an empty text) and has none yet.
func (mk *marker) block(i, j int) bool {
	if mk.n >= 4 || i < 0 || i >= len(mk.msgs) || j < 0 || j >= len(mk.msgs[i].blocks) {
		return false
	}
	m := &mk.msgs[i]
	switch m.kinds[j] {
	case "thinking", "redacted_thinking":
		return false
	case "tool_addition", "tool_removal":
		// Claude Code's mid-conversation tool changes (a role:"system"
		// message, foreign.go): whether the API takes cache_control on
		// them is not established, so they are never marked.
		return false
	case "text":
		if gjson.GetBytes(m.blocks[j], "text").String() == "" {
			return false
		}
	}
	if m.bp == nil {
		m.bp = map[int]bool{}
	}
	if m.bp[j] {
		return false
	}
	m.bp[j] = true
	mk.n++
	return true
}

// last marks the last markable block of message i, skipping its last
// skip blocks, and reports whether it marked one.
func (mk *marker) last(i, skip int) bool {
	if i < 0 || i >= len(mk.msgs) {
		return false
	}
	for j := len(mk.msgs[i].blocks) - 1 - skip; j >= 0; j-- {
		if mk.block(i, j) {
			return true
		}
	}
	return false
}

// end marks the end of a stable part that ends with message i: its last
// markable block, or, when i is a role:"system" message with none (a
// tool change), the messages before it.
func (mk *marker) end(i int) {
	for ; i >= 0 && !mk.last(i, 0) && mk.msgs[i].role == "system"; i-- {
	}
}

// tailWritePoints marks the write point W of this request — the end of
// the current turn when it will be re-served unchanged (its curated form
// is its full form; the volatile reminder after it is not covered), else
// the end of the assistant message it answers — and, when it lies too
// far back for W's read to find it, the previous request's write point,
// which this request reads exactly. tailStart is the tail's first message.
func (mk *marker) tailWritePoints(tailStart int, reminder bool) {
	last := len(mk.msgs) - 1
	if last < 0 || mk.msgs[last].role != "user" {
		return
	}
	skip := 0
	if w := mk.writePoint(tailStart, last); w == last {
		if reminder {
			skip = 1
		}
		mk.last(w, skip)
	} else {
		mk.last(w, 0)
	}
	// The previous turn: the user message before the assistant message
	// this turn answers.
	for p := last - 2; p >= tailStart; p-- {
		if mk.msgs[p].role != "user" {
			continue
		}
		if r := mk.writePoint(tailStart, p); r >= 0 && mk.blocksBetween(r, last) >= cacheLookback-2 {
			mk.last(r, 0)
		}
		break
	}
}

// cacheLookback is how many blocks back a breakpoint's read looks for an
// earlier write.
const cacheLookback = 20

// writePoint is the message whose end the request ending at message i
// writes: i itself when its curated form is its full form, else the
// assistant message before it; -1 when neither is in the tail.
func (mk *marker) writePoint(tailStart, i int) int {
	if i >= tailStart && mk.msgs[i].role == "user" && mk.msgs[i].stable {
		return i
	}
	if i-1 >= tailStart && mk.msgs[i-1].role == "assistant" {
		return i - 1
	}
	return -1
}

// blocksBetween counts the blocks after message i up to message j.
func (mk *marker) blocksBetween(i, j int) int {
	n := 0
	for k := i + 1; k <= j; k++ {
		n += len(mk.msgs[k].blocks)
	}
	return n
}
