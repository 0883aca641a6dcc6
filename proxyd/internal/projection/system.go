package projection

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// Contract is the lean loop contract the synaxi-worker's system prompt is
// replaced with, after Claude Code's identity.
const Contract = `You are an autonomous coding agent working in the user's repository through tools.
- Work in a loop: look at the latest tool result, act with a tool, look again.
- Read a file before you edit it; use Edit for small changes and Write for new files.
- After changing code, run the tests or the task's check and trust only real results.
- Never repeat a failed call unchanged: use the error to change approach.
- Results already shown in this conversation are current; a note may list results that were dropped to save space: repeat such a call if you need it again.
- When the task is done and proven by a tool result, stop and give a short summary.`

// fit sets what the fold needs of the request's system prompt and tools.
func (r *resolved) fit(req request, sys []sysBlock, ro roster) {
	r.overhead, r.origOverhead = overheads(r.tok, req, sys, ro)
	names := shortened(req.tools, ro)
	r.shortened, r.roster = make(map[string]bool, len(names)), strings.Join(names, ",")
	for _, n := range names {
		r.shortened[n] = true
	}
}

// overheads estimates the tokens of the projected system prompt and tools
// and of those the engine serves before it engages: the client's system
// prompt and the same roster.
func overheads(tok func(string) int, req request, sys []sysBlock, ro roster) (projected, original int) {
	tools := 0
	for _, t := range projectTools(req.tools, ro, nil) {
		tools += tok(stringOf(t))
	}
	for _, s := range sys {
		projected += tok(s.text)
	}
	return projected + tools, tok(req.system.Raw) + tools
}

// sysBlock is one system text block of the served request.
type sysBlock struct {
	text string
	bp   bool
}

// FoldNotice is appended to the system prompt of every conversation but
// the synaxi-worker's, which is otherwise served as the client sent it.
const FoldNotice = `Earlier tool results in this conversation may have been dropped to save space; a note then lists them. Results still shown are current; repeat a listed call if you need its result again.`

// projectSystem serves the system prompt of a conversation. The
// synaxi-worker's (gate.SystemIsWorker) becomes Claude Code's billing
// header and identity block, in their order, and the loop contract. Any
// other's — the user's main session, a subagent — is served as the client
// sent it, every block's text verbatim and in order, since its
// instructions are the agent's (Claude Code's rules, its memory, a
// subagent's role), with the fold notice appended; it is what the client's
// own requests cached, so engaging and a compaction read it from the cache.
func projectSystem(sys gjson.Result) []sysBlock {
	if !gate.SystemIsWorker(sys) {
		var out []sysBlock
		switch {
		case sys.Type == gjson.String:
			out = append(out, sysBlock{text: sys.Str})
		case sys.IsArray():
			sys.ForEach(func(_, b gjson.Result) bool {
				out = append(out, sysBlock{text: b.Get("text").String()})
				return true
			})
		}
		return append(out, sysBlock{text: FoldNotice})
	}
	var out []sysBlock
	keep := func(t string) {
		if strings.HasPrefix(t, "x-anthropic-billing-header") || isIdentity(t) {
			out = append(out, sysBlock{text: t})
		}
	}
	switch {
	case sys.Type == gjson.String:
		// A single string: its identity line, if it starts with one.
		if line, _, _ := strings.Cut(sys.Str, "\n"); isIdentity(line) {
			out = append(out, sysBlock{text: line})
		}
	case sys.IsArray():
		sys.ForEach(func(_, b gjson.Result) bool {
			keep(b.Get("text").String())
			return true
		})
	}
	if !slices.ContainsFunc(out, func(b sysBlock) bool { return isIdentity(b.text) }) {
		out = append(out, sysBlock{text: "You are Claude Code, Anthropic's official CLI for Claude."})
	}
	return append(out, sysBlock{text: Contract})
}

func isIdentity(t string) bool {
	return strings.HasPrefix(t, "You are Claude Code") || strings.HasPrefix(t, "You are a Claude agent")
}
