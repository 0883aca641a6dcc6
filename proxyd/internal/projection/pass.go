package projection

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// A read the agent passes through — it reads a file, takes what it needs
// in the next turn, and never comes back to it — costs the most when it
// stays in the tail: every later request reads it again from the cache,
// and the tail grows by it until a rebuild rewrites what is left. Folded
// at the end of the cached prefix at the request after the next one,
// such a result is billed once, uncached, as the current turn (its
// curated form differs from its full form, so the breakpoint stays before
// it, see tailWritePoints), and never written to the cache.
//
// Whether the session passes through its reads is learnt from the
// session itself, so the rule is a pure function of the messages: every
// whole-file read of at least passMinTenths of the budget is a sample,
// and it is used late when the file is read, written, edited or referred
// to (refer) two turns or more after it. While the samples decided so far
// (read two turns ago or earlier) number at least passSamples and at most
// passLatePct percent of them were used late:
//
//   - a new such read is a candidate: its curated form names it and says
//     how to see it again. At the next assistant message the candidate is
//     resolved: when that message's calls name its file (or refer to it),
//     the agent is working with it and it is served as sent; otherwise it
//     is folded — its world entry is dropped, so no rebuild writes it
//     again;
//   - a sample not used late counts as idle (world.idle) once its next
//     turn is over, so the working set, the rebuild's estimates and
//     eviction let it go (a read the projection engaged with, or one the
//     agent edited in its next turn, which the tail kept).
//
// Real sessions come back to much of what they read, so there the rule
// rarely turns on (on the replay panel it folded 5 reads, in one of its 23
// transcripts); a survey that reads many files once each turns it on.

// readSample is one whole-file read, for the pass-through statistics.
type readSample struct {
	key  string
	step int
	late bool
}

// passing is a candidate waiting for the next assistant message: its
// result as sent and the tokens of both forms.
type passing struct {
	key         string
	raw         []byte
	stubTokens  int
	blockTokens int
}

// passMinTenths is the smallest read that is a sample and a candidate,
// in tenths of the budget (1,320 tokens for a 200K model); passSamples and
// passLatePct are how many decided samples the share needs and the
// largest share of them used late, in percent, for the session to pass
// through its reads. Chosen on the replay panel (docs/projection.md,
// "Tuning history").
const (
	passMinTenths = 2
	passSamples   = 8
	passLatePct   = 20
)

// noteUse records a use of key at step: the latest read sample of key is
// used late when step is two turns or more after it.
func (w *world) noteUse(key string, step int) {
	i, ok := w.lastRead[key]
	if ok && step >= w.samples[i].step+2 && !w.samples[i].late {
		w.samples[i].late = true
		w.lateSamples++
	}
}

// sample records a whole-file read of key at step.
func (w *world) sample(key string, step int) {
	w.lastRead[key] = len(w.samples)
	w.samples = append(w.samples, readSample{key: key, step: step})
}

// passesThrough reports whether the session so far passes through its
// reads: enough decided samples, few of them used late.
func (w *world) passesThrough(step int) bool {
	// Samples are taken in step order, and one is used late only once
	// decided: the late ones are all among the decided.
	decided := sort.Search(len(w.samples), func(i int) bool { return w.samples[i].step > step-2 })
	return decided >= passSamples && w.lateSamples*100 <= passLatePct*decided
}

// passed reports whether key is a read the session passed through: read
// two turns ago or more and not used late (a use in its next turn, such as
// an edit, is allowed), while the session passes through its reads. It
// counts as idle for the working set and eviction (see idle).
func (w *world) passed(key string, step int) bool {
	i, ok := w.lastRead[key]
	if !ok {
		return false
	}
	s := w.samples[i]
	return !s.late && step >= s.step+2 && w.passesThrough(step)
}

// passCandidate reports whether a Read result, in its curated form, is a
// candidate to fold.
func (f *fold) passCandidate(use block, b *block) bool {
	if !f.engaged() || b.isError || b.images > 0 || use.input.Get("offset").Exists() || use.input.Get("limit").Exists() {
		return false
	}
	if t := strings.TrimSpace(b.text); strings.HasPrefix(t, unchangedStub) || strings.HasPrefix(t, clearedStub) {
		return false
	}
	if b.textTokenCount(f.cfg.tok)*10 < passMinTenths*f.cfg.budget {
		return false
	}
	return f.world.passesThrough(f.step)
}

// passStub is a candidate's curated form.
func (f *fold) passStub(use block, b *block) []byte {
	stub := fmt.Sprintf("[synaxi: the result of Read %s (~%d tokens) was folded after the turn that followed it; call Read again to see the file.]",
		use.input.Get("file_path").String(), b.textTokenCount(f.cfg.tok))
	out := toolResultJSON(b.toolUseID, jsonString(stub))
	f.passing[b.toolUseID] = passing{key: use.input.Get("file_path").String(), raw: b.raw,
		stubTokens: f.cfg.tok(stringOf(out)), blockTokens: b.tokenCount(f.cfg.span)}
	return out
}

// resolvePassing decides the candidates waiting in the tail's user
// messages after its last assistant message. answered says the assistant
// message calls follows them (at f.step): a candidate is then kept as
// sent when a call names its file or referred to it (refer), else
// folded. When another message comes first (the person typed), the model
// has not answered the results yet: they are kept as sent.
func (f *fold) resolvePassing(calls []block, answered bool) {
	if len(f.passing) == 0 {
		return
	}
	defer clear(f.passing)
	named := map[string]bool{}
	for _, c := range calls {
		if p := c.input.Get("file_path").String(); p != "" {
			named[p] = true
		}
	}
	for j := len(f.tail) - 1; j >= 0 && f.tail[j].role != "assistant"; j-- {
		s := &f.tail[j]
		for i, k := range s.kinds {
			if k != "tool_result" {
				continue
			}
			id := gjson.GetBytes(s.blocks[i], "tool_use_id").String()
			p, ok := f.passing[id]
			if !ok {
				continue
			}
			if !answered || named[p.key] || f.world.used[p.key] >= f.step {
				s.blocks = cloneSet(s.blocks, i, p.raw)
				s.tokens += p.blockTokens - p.stubTokens
				f.tailTokens += p.blockTokens - p.stubTokens
				continue
			}
			if e, ok := f.world.entries[p.key]; ok {
				f.world.drop(p.key, recallHint(e), f.step)
			}
			f.folded[id] = true
		}
	}
}

// cloneSet returns bs with element i replaced by v, without changing bs
// (served blocks are shared with memoised states).
func cloneSet(bs [][]byte, i int, v []byte) [][]byte {
	out := append([][]byte(nil), bs...)
	out[i] = v
	return out
}

// changesView reports whether a user message carries the result of an
// edit or write of a file the world holds and the previous turn used: a
// rebuild at this turn would keep it (an entry used in the last two turns
// is never evicted) as it was before the change, since the current turn
// is ingested after the rebuild — a copy stale once the edit's call leaves
// the tail. maybeReproject waits a turn instead.
func (f *fold) changesView(m message) bool {
	for _, b := range m.blocks {
		if b.typ != "tool_result" || b.isError {
			continue
		}
		use, ok := f.uses[b.toolUseID]
		if !ok {
			continue
		}
		switch use.name {
		case "Edit", "MultiEdit", "Write":
			k := use.input.Get("file_path").String()
			if _, ok := f.world.entries[k]; ok && f.step-f.world.used[k] <= 1 {
				return true
			}
		}
	}
	return false
}
