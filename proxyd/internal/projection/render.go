package projection

import (
	"fmt"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/internal/recall"
)

// maxDropNotes bounds the list of dropped results in the snapshot note,
// most recent first, and maxCallNotes the list of folded calls of other
// tools (foreign.go) beside it.
const (
	maxDropNotes = 60
	maxCallNotes = 40
)

// renderGen emits entries as paired exchanges, with the notes on the last
// one (or alone, as one user message, when there is no entry).
func (f *fold) renderGen(list []*entry, notes [][]byte) []served {
	var out []served
	for _, e := range list {
		res := toolResultJSON(e.id(), e.content)
		out = append(out,
			served{role: "assistant", blocks: [][]byte{e.use}, kinds: []string{"tool_use"}, tokens: e.useTokens},
			served{role: "user", blocks: [][]byte{res}, kinds: []string{"tool_result"}, tokens: e.tokens},
		)
	}
	if len(out) == 0 {
		if len(notes) == 0 {
			return nil
		}
		out = append(out, served{role: "user"})
	}
	l := &out[len(out)-1]
	l.blocks = append(l.blocks, notes...)
	for range notes {
		l.kinds = append(l.kinds, "text")
	}
	l.tokens += blocksTokens(f.cfg.tok, notes)
	return out
}

func blocksTokens(tok func(string) int, bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += tok(stringOf(b))
	}
	return n
}

// notes are a generation's note: the results dropped since the
// generations it follows and the calls of other tools folded since
// (keys, most recently dropped first), and how to get them back. It lists
// the maxDropNotes most recent drops and the maxCallNotes most recent
// calls, and hands the results its call lines name by reference to the
// proxy (world.recalled). Calls of one tool with the same start of result
// are one line, the latest's, which says how many earlier ones it stands
// for and names their own lines by recall reference, so what they did
// still costs one call to get back: a session that rewrites its todo
// list at every step would otherwise carry a line per rewrite in every
// note, each rewritten by every rebuild.
func (f *fold) notes(keys []string) [][]byte {
	if len(keys) == 0 {
		return nil
	}
	var lines []string
	var earlier [][]string     // per line, the lines of the earlier calls it stands for
	lineOf := map[string]int{} // a call group → its line
	drops, calls, leftCalls, grouped := 0, 0, 0, 0
	for _, k := range keys {
		c, call := f.calls[k]
		switch {
		case !call && drops < maxDropNotes:
			drops++
		case call:
			if i, seen := lineOf[c.group]; seen {
				earlier[i] = append(earlier[i], f.world.evicted[k])
				grouped++
				continue
			}
			if calls == maxCallNotes {
				leftCalls++
				continue
			}
			calls++
			lineOf[c.group] = len(lines)
			if c.text != "" {
				f.recall(c.text)
			}
		default:
			continue
		}
		lines = append(lines, f.world.evicted[k])
		earlier = append(earlier, nil)
	}
	var sb strings.Builder
	sb.WriteString("<system-reminder>\nTo keep this context small, the results of these earlier calls were dropped from it. Nothing is known to have changed unless said; to see a result again, repeat its call (that is not a loop), or, for one marked [recall r…], ask the synaxi recall tool for that reference")
	if calls > 0 {
		sb.WriteString(". A line with → is a call that took effect, the start of its result after the arrow: do not make such a call again unless it only reads")
	}
	sb.WriteString(":\n")
	for i, l := range lines {
		sb.WriteString("- ")
		sb.WriteString(l)
		if len(earlier[i]) > 0 {
			text := strings.Join(earlier[i], "\n")
			f.recall(text)
			fmt.Fprintf(&sb, " (the latest of %d such calls; the earlier ones: [recall %s])", len(earlier[i])+1, recall.Ref(text))
		}
		sb.WriteByte('\n')
	}
	switch left := len(keys) - len(lines) - grouped; {
	case left > 0 && leftCalls == 0:
		fmt.Fprintf(&sb, "- and %d earlier ones: repeat any call whose result you need\n", left)
	case left > 0:
		fmt.Fprintf(&sb, "- and %d earlier ones, %d of them calls that took effect: repeat one only if it just reads\n", left, leftCalls)
	}
	sb.WriteString("</system-reminder>")
	return [][]byte{textBlock(sb.String()).raw}
}

// recall hands text to the proxy's recall store (world.recalled), once.
func (f *fold) recall(text string) {
	if !slices.Contains(f.world.recalled, text) {
		f.world.recalled = append(f.world.recalled, text)
	}
}

// render produces a message's served form. full is the current turn's form:
// nothing curated away. note, if set, is told how each tool_result was
// curated.
func (f *fold) render(m message, full bool, note func(block, curation)) served {
	s := served{role: m.role, extra: m.extra,
		blocks: make([][]byte, 0, len(m.blocks)), kinds: make([]string, 0, len(m.blocks))}
	for i := range m.blocks {
		b := &m.blocks[i]
		raw := b.raw
		if b.typ == "tool_result" {
			var how curation
			raw, how = f.curateResult(b, full)
			if note != nil {
				note(*b, how)
			}
		}
		if (b.typ == "text" && b.text == "") || len(raw) == 0 {
			continue // empty text blocks are invalid
		}
		s.blocks = append(s.blocks, raw)
		s.kinds = append(s.kinds, b.typ)
		if &raw[0] == &b.raw[0] {
			s.tokens += b.tokenCount(f.cfg.span)
		} else {
			s.tokens += f.cfg.tok(stringOf(raw))
		}
	}
	if len(s.blocks) == 0 && m.role != "system" {
		// Claude Code sends an empty role:"system" message after /compact;
		// it is carried as sent. Other roles need content.
		s.blocks = [][]byte{textBlock("(empty)").raw}
		s.kinds = []string{"text"}
	}
	return s
}
