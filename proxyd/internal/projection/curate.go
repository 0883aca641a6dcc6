package projection

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// unchangedStub starts Claude Code's answer to a Read of a file it believes
// is still in context.
const unchangedStub = "File unchanged since last read."

// clearedStub is Claude Code's placeholder for an old tool result it cleared.
const clearedStub = "[Old tool result content cleared]"

// curateResult restores evicted content behind Claude Code's unchanged stub
// and, outside the current turn, replaces a result identical to one the
// request still shows by a reference to it, shortens very large non-Read
// output to its head and tail with a note on how to see the rest, and
// names a Read the session passes through (pass.go).
func (f *fold) curateResult(b *block, full bool) ([]byte, curation) {
	use, ok := f.uses[b.toolUseID]
	if !ok {
		return b.raw, curOther
	}
	if use.name == "Read" && strings.HasPrefix(strings.TrimSpace(b.text), unchangedStub) {
		path := use.input.Get("file_path").String()
		if e, ok := f.world.observed[path]; ok && !f.visible(path) {
			return toolResultJSON(b.toolUseID, e.content), curOther
		}
	}
	if full || b.images > 0 {
		return b.raw, curVerbatim
	}
	if c, ok := f.earlierCopy(use, *b); ok {
		return toolResultJSON(b.toolUseID, jsonString(reference(c))), curReference
	}
	if use.name == "Read" {
		if f.passCandidate(use, b) {
			return f.passStub(use, b), curOther
		}
		return b.raw, curVerbatim
	}
	limit := f.cfg.resultCap
	n := b.textTokenCount(f.cfg.tok)
	if n <= limit {
		return b.raw, curVerbatim
	}
	short := digest(b.text, n, use, 4*limit/2)
	out := openToolResultJSON(b.toolUseID, jsonString(short))
	if b.isError {
		out = append(out, `,"is_error":true`...)
	}
	return append(out, '}'), curOther
}

// visible reports whether a file's full content is in the served context:
// in the snapshot world or in a tail Read result.
func (f *fold) visible(path string) bool {
	if e, ok := f.world.entries[path]; ok && f.inSnapshot(e.key) {
		return true
	}
	for _, s := range f.tail {
		for i, k := range s.kinds {
			if k != "tool_result" {
				continue
			}
			id := gjson.GetBytes(s.blocks[i], "tool_use_id").String()
			if f.folded[id] {
				continue
			}
			if u, ok := f.uses[id]; ok && u.name == "Read" && u.input.Get("file_path").String() == path &&
				!strings.HasPrefix(strings.TrimSpace(gjson.GetBytes(s.blocks[i], "content").String()), unchangedStub) {
				return true
			}
		}
	}
	return false
}

func (f *fold) inSnapshot(key string) bool {
	e, ok := f.world.entries[key]
	if !ok {
		return false
	}
	_, ok = f.where[e]
	return ok
}

// digest keeps the first and last lines of a long output, about keep
// bytes of each, with a note saying how much was left out and how to see it.
func digest(text string, tokens int, use block, keep int) string {
	if len(text) <= 2*keep {
		return text
	}
	head := cutAtLine(text[:keep], false)
	tail := cutAtLine(text[len(text)-keep:], true)
	omitted := text[len(head) : len(text)-len(tail)]
	lines := strings.Count(omitted, "\n")
	return head + fmt.Sprintf("\n[... %d lines (~%d tokens) omitted by synaxi; %s ...]\n", lines, tokens*len(omitted)/max(1, len(text)), rerunHint(use)) + tail
}

// cutAtLine trims s to whole lines: its start when fromEnd, else its end;
// a single long line is kept as it is.
func cutAtLine(s string, fromEnd bool) string {
	if fromEnd {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			return s[i+1:]
		}
		return s
	}
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i+1]
	}
	return s
}

func rerunHint(use block) string {
	if use.name == "Bash" {
		return "re-run the command (piping through sed -n or grep) to see them"
	}
	return "repeat the call to see them"
}
