package projection

import (
	"fmt"
	"slices"
)

// The snapshot is a list of generations, oldest first. Each generation is
// the exchanges one re-projection rendered (its surviving and new world
// entries, then a note naming what was dropped and the user's folded
// words), served byte-identical until a later re-projection rebuilds it. A
// re-projection rebuilds the generations from a cut on — the youngest cut
// that pays — and keeps everything before the cut, so the provider's
// cache still reads it: the served bytes up to the cut are unchanged, and
// each generation's end carries a breakpoint.
//
// The cut and the moment are chosen by billed cost. For every cut c the
// fold estimates, at each turn, how many input tokens a rebuild from c
// would remove (the served size now minus the size after rebuilding:
// evicting the rebuilt part's coldest entries down to the budget and
// folding the tail into it). Every turn served without that rebuild pays
// those tokens again at the cache-read price; a rebuild pays its rebuilt
// tokens once at the cache-write price. Rebuilding at cut c when the
// read cost accumulated since c's part was last rebuilt reaches the
// write cost is the classic rent-or-buy rule: it never pays more than
// twice the best schedule in hindsight, and it needs no guess of how long
// the session will last. A rebuild from c leaves the accumulations of
// deeper cuts with only what the parts before c contributed.
//
// The first re-projection is the projection engaging: until then the
// engine serves the client's body unchanged, and the comparison is with
// the client's own request (its system prompt, tools and every message),
// which the cache reads in full.

// maxGens bounds the generations: with the write point of the tail and
// the goal's end, their ends use the four breakpoints.
const maxGens = 2

// readPrice is the billed weight of a cache read.
const readPrice = 0.1

// gen is one generation of the snapshot.
type gen struct {
	list   []*entry // its entries, in order
	msgs   []served // the rendered exchanges, notes on the last one
	tokens int
	// dialogue is the folded dialogue (words.go) served after its last
	// message by rebuilds from the cut after it (see reproject), and
	// dialogueTokens its estimate (part of tokens).
	dialogue       []served
	dialogueTokens int
	// listed are the dropped keys its note names.
	listed []string
}

// extend appends the dialogue folded by a rebuild from the cut after g
// after its messages: the bytes before them stay as they were served.
func (g *gen) extend(words []served, tokens int) {
	if len(words) == 0 {
		return
	}
	g.msgs, _ = appendTurns(g.msgs, words) // g ends on a user message: nothing spills
	g.tokens += tokens
	g.dialogue = append(slices.Clip(g.dialogue), words...)
	g.dialogueTokens += tokens
}

// snapTokens is the served size of the generations.
func (f *fold) snapTokens() int {
	n := 0
	for _, g := range f.gens {
		n += g.tokens
	}
	return n
}

// headTokens is the served size of the goal, with notes riding on it.
func (f *fold) headTokens() int {
	n := f.headNoteTokens + f.dialogueTokens
	for _, s := range f.head {
		n += s.tokens
	}
	return n
}

// cutEstimate is what a rebuild from one cut would leave: the tokens
// served before the cut (kept), the rebuilt world entries after eviction
// (rebuilt), and the folded words the rebuild writes at the cut (words:
// those the rebuilt generations carried and the tail's, see reproject).
// A rebuild writes rebuilt + words, and its note. The note is left out:
// counting it as long as the notes it replaces billed up to 7% more on
// the panel (docs/projection.md, "Tuning history").
type cutEstimate struct{ kept, rebuilt, words int }

// write is what a rebuild from the cut writes, besides the tail message it
// keeps and the current turn.
func (e cutEstimate) write() int { return e.rebuilt + e.words }

// estimates is what a rebuild from every cut, 0 to len(gens), would
// leave, in one pass over the world.
func (f *fold) estimates() []cutEstimate {
	n := len(f.gens) + 1
	head := f.headTokens()
	out := make([]cutEstimate, n)
	out[0].kept = head
	// keptWorld[c]: the world entries' share of the generations before
	// c, which the budget bounds (their folded words are not entries).
	keptWorld := make([]int, n)
	for c := 1; c < n; c++ {
		g := f.gens[c-1]
		out[c].kept = out[c-1].kept + g.tokens
		keptWorld[c] = keptWorld[c-1] + g.tokens - g.dialogueTokens
	}
	out[n-1].words = f.pendingTokens
	for c := n - 2; c >= 0; c-- {
		g := f.gens[c]
		out[c].words = out[c+1].words + g.dialogueTokens
	}
	// all[c] and pinned[c]: the entries a rebuild from c would rebuild
	// (those not served before c), and those of them used this turn or
	// the previous one. An entry served by generation g is rebuilt by
	// cuts 0..g; one not yet served, by every cut.
	all, pinned := make([]int, n), make([]int, n)
	ws, steps := 0, f.wsTurns()
	for _, e := range f.world.entries {
		since := f.step - f.world.used[e.key]
		if f.world.idle(e.key, f.step) < steps {
			ws += e.size()
		}
		upto := n - 1
		if g, ok := f.where[e]; ok && g < upto {
			upto = g
		}
		all[upto] += e.size()
		if since <= 1 {
			pinned[upto] += e.size()
		}
	}
	t := f.targetFrom(ws)
	for c := n - 2; c >= 0; c-- {
		all[c] += all[c+1]
		pinned[c] += pinned[c+1]
	}
	for c := range out {
		room := t
		if c > 0 {
			room = max(t-keptWorld[c], 0)
		}
		out[c].rebuilt = min(all[c], max(room, pinned[c]))
	}
	return out
}

// target is the snapshot's size after a re-projection: the world budget
// when pinned, else the session's working set (the tokens of the entries
// used in the last wsTurns turns), bounded to a range around the
// budget.
func (f *fold) target() int {
	if f.cfg.pinned {
		return f.cfg.target
	}
	ws, steps := 0, f.wsTurns()
	for _, e := range f.world.entries {
		if f.world.idle(e.key, f.step) < steps {
			ws += e.size()
		}
	}
	return f.targetFrom(ws)
}

// targetFrom is target given the working set's tokens.
func (f *fold) targetFrom(ws int) int {
	if f.cfg.pinned {
		return f.cfg.target
	}
	return min(max(ws, f.cfg.target*floorTenths/10), f.cfg.target*capTenths/10)
}

// floorTenths and capTenths bound the working-set snapshot, in tenths of
// the budget: it never shrinks below a fifth of it when the recent turns
// used little (a margin for what the agent may come back to), and never
// grows past 1.6 times it. Chosen on the replay panel (docs/projection.md,
// "Tuning history").
const (
	floorTenths = 2
	capTenths   = 16
)

// workingSteps is how many recent turns make the working set, and
// engageSteps how many make it when the projection engages. Engaging
// writes everything the snapshot keeps with nothing cached (the client's
// layout differs from the projection's from the system prompt on), and a
// session may end a few turns later having paid that write for nothing;
// so the first snapshot holds the working set of the last 4 turns, and
// what the agent uses again from the 4 before comes back with its next
// call. Chosen on the replay panel (docs/projection.md, "Tuning history").
const (
	workingSteps = 8
	engageSteps  = 4
)

// wsTurns is how many recent turns make the working set now.
func (f *fold) wsTurns() int {
	if !f.engaged() {
		return engageSteps
	}
	return workingSteps
}

// room is how many tokens of world entries a rebuild from cut c keeps,
// given the tokens of the generations before it: what the target leaves.
// When the old part already fills the target, a rebuild from c keeps only
// the entries the last two turns used (see estimates), and one that would
// keep none is not an option (see chooseCut).
func (f *fold) room(c, keptSnap int) int {
	t := f.target()
	if c == 0 {
		return t
	}
	return max(t-keptSnap, 0)
}

// keptIn reports whether entry e is served by a generation before cut c.
func (f *fold) keptIn(e *entry, c int) bool {
	g, ok := f.where[e]
	return ok && g < c
}

// account adds one turn's avoidable read cost to every cut's account,
// given the served size of this turn without a rebuild and the size of
// its current message.
func (f *fold) account(servedNow, current int, est []cutEstimate) {
	if len(f.acc) != len(f.gens)+1 {
		f.acc = slices.Grow(f.acc[:0:0], len(f.gens)+1)[:len(f.gens)+1]
	}
	if f.firstNow == 0 {
		f.firstNow = servedNow
	}
	for c := range f.acc {
		after := est[c].kept + est[c].write() + f.tailKeepTokens() + current
		if !f.engaged() {
			after += f.cfg.overhead
		}
		if saved := servedNow - after; saved > 0 {
			f.acc[c] += readPrice * float64(saved)
		}
	}
}

// tailKeepTokens is the size of the tail message a rebuild keeps.
func (f *fold) tailKeepTokens() int {
	if len(f.tail) == 0 {
		return 0
	}
	return f.tail[len(f.tail)-1].tokens
}

// chooseCut returns the cut whose accumulated read cost most exceeds the
// cost of writing what it rebuilds, or -1 when no rebuild pays yet.
// Before the projection engages the only cut is the whole conversation,
// and the decision looks ahead (see engagePays). A cut after the goal
// whose rebuild would keep no entry is never chosen: a generation needs
// an entry to carry its note, so reproject would rebuild from an earlier
// cut, at that cut's cost, which its own account decides.
func (f *fold) chooseCut(now, current int, est []cutEstimate) int {
	if !f.engaged() {
		if f.engagePays(now, current, est[0]) {
			return 0
		}
		return -1
	}
	best, bestNet := -1, 0.0
	for c := range f.acc {
		if c > 0 && est[c].rebuilt == 0 {
			continue
		}
		if !f.cacheable(est[c].kept + est[c].write() + f.tailKeepTokens() + f.cfg.overhead) {
			continue
		}
		write := est[c].write() + f.tailKeepTokens() + current
		net := f.acc[c] - rebuildMargin*writePrice*float64(write)
		if net >= 0 && (best < 0 || net > bestNet) {
			best, bestNet = c, net
		}
	}
	return best
}

// engagePays predicts whether engaging now saves: switching from the
// client's layout to the projection writes the whole projection once,
// and every later turn reads the projection instead of the client's
// growing request. The client's request is taken to keep growing at its
// average rate so far, and the session to last half as many turns again
// as it has (at most horizonMax): a cautious guess, as a short session
// that engages just before it ends pays the write for nothing.
func (f *fold) engagePays(now, current int, e0 cutEstimate) bool {
	after := e0.kept + e0.write() + f.tailKeepTokens() + current + f.cfg.overhead
	f.uncacheable = 0
	gap := float64(now - after)
	if gap <= 0 || f.step == 0 {
		return false
	}
	if !f.cacheable(after - current) {
		f.uncacheable = after - current
		return false
	}
	h := float64(min(f.step/2, horizonMax))
	growth := max(0, float64(now-f.firstNow)/float64(f.step))
	saved := readPrice * (gap*h + growth*h*h/2)
	return saved >= rebuildMargin*writePrice*float64(after)
}

// rebuildFree returns 0, a rebuild from the first cut, when the tool
// roster changes at this request and the rebuild would serve less than
// the request would without it, else -1. A roster change re-writes the
// whole served prefix anyway (the tools come first in it), so a rebuild
// then costs no write the request does not already pay, and every later
// turn reads less. Before the projection engages the same holds of the
// client's whole request: engaging then writes less than not engaging.
func (f *fold) rebuildFree(now, current int, e0 cutEstimate) int {
	after := e0.kept + e0.write() + f.tailKeepTokens() + current
	if !f.engaged() {
		after += f.cfg.overhead
	}
	if after >= now || !f.cacheable(after-current) {
		return -1
	}
	return 0
}

// cacheable reports whether a served prefix of about n tokens (the
// engine's estimate) is long enough for the model's prompt cache. A
// shorter one is never cached: every request would pay for it in full
// (1× instead of 0.1×), more than the client's own cached request, and the
// cost model, which prices writes and reads, would not see it. So the
// projection neither engages nor rebuilds into a context whose stable
// part (everything before the current turn, the part the next request
// reads) is below the minimum, with cacheMargin for the estimate's error.
func (f *fold) cacheable(n int) bool {
	return float64(n) >= cacheMargin*float64(f.cfg.minCache)
}

// cacheMargin is how far above the model's minimum cacheable length the
// estimated stable prefix must be: the token estimate is within 11–17%
// of the API's count for 90% of the real requests and prompt-growth steps
// it was measured on (internal/tokens), and one found beside the panel
// (docs/projection.md, "Beside the panel") engaged 6% above the minimum
// by the estimate and below it by the cache's count.
const cacheMargin = 1.25

// rebuildMargin is how many times its write cost the read cost a rebuild
// would have saved must reach: above 1, a rebuild waits until its saving
// is established rather than merely even (chosen on the panel,
// docs/projection.md, "Tuning history").
const rebuildMargin = 5.0 / 3

// writePrice is the billed weight of what a rebuild or an engagement
// writes: the generations and the tail are written at five minutes
// whatever time to live the client asks for (assemble.go, marks).
const writePrice = 1.25

// horizonMax bounds the number of coming turns a prediction counts on.
const horizonMax = 40

// settle moves the accounts after a rebuild from cut c: the rebuilt cuts
// start over, and deeper cuts keep what their older parts contributed.
func (f *fold) settle(c int, gensBefore int) {
	acc := make([]float64, len(f.gens)+1)
	if gensBefore+1 == len(f.acc) {
		for k := 0; k < c && k < len(acc); k++ {
			acc[k] = max(0, f.acc[k]-f.acc[c])
		}
	}
	f.acc = acc
}

// notEngagedReason says why the projection has not engaged yet.
func (f *fold) notEngagedReason() string {
	if f.inHead || len(f.acc) == 0 {
		return "no tool exchange yet: nothing to project"
	}
	if n := f.uncacheable; n > 0 {
		return fmt.Sprintf("the projection would be too short to cache: about %d tokens before the current turn, under %.0f (%.2f× the model's minimum cacheable prompt of %d)",
			n, cacheMargin*float64(f.cfg.minCache), cacheMargin, f.cfg.minCache)
	}
	e := f.estimates()[0]
	write := writePrice * float64(e.kept+e.write()+f.tailKeepTokens()+f.cfg.overhead)
	return fmt.Sprintf("no saving predicted yet: the cache reads a projection would have saved so far (%.0f token-equivalents) do not pay for writing it (%.0f)", f.acc[0], write)
}
