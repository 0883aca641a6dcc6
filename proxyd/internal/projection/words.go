package projection

import (
	"slices"
	"strings"
)

// What is never folded (issue 28, a person in the loop): every message the
// user typed — their words, the images and documents they gave, the
// expansion of a slash command or a skill — and the assistant's words
// they replied to are served in every later request exactly as Claude
// Code sent them; only tool traffic folds. Claude Code's own volatile
// notes (a text block that is one <system-reminder>) do not make a
// message typed.

// isReminder reports whether a text block is one of Claude Code's
// <system-reminder> notes and nothing else.
func isReminder(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<system-reminder>") && strings.HasSuffix(t, "</system-reminder>")
}

// assistantWords is the assistant's words in m: its non-empty text
// blocks, as sent, in an assistant message of their own; no blocks when it
// has none.
func assistantWords(m message, span spanFunc) served {
	s := served{role: "assistant"}
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ == "text" && b.text != "" {
			s.blocks = append(s.blocks, b.raw)
			s.kinds = append(s.kinds, b.typ)
			s.tokens += b.tokenCount(span)
		}
	}
	return s
}

// dialogueOf is what a user message leaves in the dialogue when it folds:
// nothing when the user typed none of it (tool results, Claude Code's
// reminders); else the assistant's words it replies to, if any, then the
// message's blocks other than its tool results, each as sent (all of
// them, with its other fields, when it carries no tool result).
func (f *fold) dialogueOf(m message) []served {
	typed := served{role: "user", extra: m.extra}
	person := false
	for i := range m.blocks {
		b := &m.blocks[i]
		switch {
		case b.typ == "tool_result" || b.typ == "text" && b.text == "":
			continue // tool traffic folds; an empty text block is invalid
		case b.typ != "text" || !isReminder(b.text):
			person = true // words, an image, a document
		}
		typed.blocks = append(typed.blocks, b.raw)
		typed.kinds = append(typed.kinds, b.typ)
		typed.tokens += b.tokenCount(f.cfg.span)
	}
	if !person {
		return nil
	}
	if len(f.words.blocks) == 0 {
		return []served{typed}
	}
	return []served{f.words, typed}
}

// appendTurns appends dialogue messages to region keeping user and
// assistant messages alternating, as the API requires: a user message
// that would follow a user message (role "system" messages between them
// do not count) is merged into it, its blocks as sent after the blocks it
// already has. Messages that would have to merge into the message before
// the region (it has no user message yet) are returned as spill, for the
// caller to append their blocks to that message. Merged messages are copies: region's
// messages may be shared with earlier folds.
func appendTurns(region []served, msgs []served) (out, spill []served) {
	out = slices.Clip(region)
	for _, m := range msgs {
		if m.role != "user" {
			out = append(out, m)
			continue
		}
		prev := len(out) - 1
		for prev >= 0 && out[prev].role == "system" {
			prev--
		}
		switch {
		case prev >= 0 && out[prev].role == "assistant":
			out = append(out, m)
		case prev >= 0:
			p := out[prev]
			p.blocks = slices.Concat(p.blocks, m.blocks)
			p.kinds = slices.Concat(p.kinds, m.kinds)
			p.tokens += m.tokens
			p.stable = false
			out = append(slices.Clone(out[:prev]), append([]served{p}, out[prev+1:]...)...)
		default:
			spill = append(spill, m)
		}
	}
	return out, spill
}
