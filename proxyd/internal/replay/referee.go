package replay

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Needed counts, on one side, the content a request's answer (or the user
// turn it ends with) used that the request no longer showed although its
// history had shown it (see the package doc, "What the user loses").
type Needed struct {
	// Edits are the blind edits: an Edit's old text the request did not
	// show (the same count as Side.BlindEdits).
	Edits int `json:"edits"`
	// Reads are Read calls of a file whose latest content the history
	// showed and the request did not.
	Reads int `json:"reads"`
	// Commands are Bash commands run before whose earlier call the
	// request no longer showed.
	Commands int `json:"commands"`
	// Symbols are code identifiers a call names that the history showed
	// and the request did not (each once per answer).
	Symbols int `json:"symbols"`
	// Quotes are lines of the user's new message that repeat earlier
	// content the request no longer showed (each once per message).
	Quotes int `json:"quotes"`
	// RecoveryTokens is what the priced recoveries read again: the file
	// before a blind edit, the tool result a symbol or a quote came from
	// (see recovery).
	RecoveryTokens int64 `json:"recovery_tokens"`
}

// Total is the number of hidden-then-needed uses of every kind.
func (n Needed) Total() int { return n.Edits + n.Reads + n.Commands + n.Symbols + n.Quotes }

func (n *Needed) add(o Needed) {
	n.Edits += o.Edits
	n.Reads += o.Reads
	n.Commands += o.Commands
	n.Symbols += o.Symbols
	n.Quotes += o.Quotes
	n.RecoveryTokens += o.RecoveryTokens
}

// need is one use of hidden content and what recovering it reads: size
// tokens under key (a file, a tool result); size 0 when the call itself
// is the recovery (a Read, a command run again). A blind edit's re-read is
// priced every time; a symbol's or quote's source once until the next
// rebuild (see recovery).
type need struct {
	kind string // "edit", "read", "command", "symbol", "quote"
	key  string
	size int64
}

func (n *Needed) count(ns []need) {
	for _, x := range ns {
		switch x.kind {
		case "edit":
			n.Edits++
		case "read":
			n.Reads++
		case "command":
			n.Commands++
		case "symbol":
			n.Symbols++
		case "quote":
			n.Quotes++
		}
	}
}

// referee finds what one side's request did not show and its answer used.
// hist is the view of the request as the client sent it (the history
// whole), v the side's; history is the request's messages.
type referee struct {
	history []msg
	hist, v *view
	tok     func([]byte) int
	// known are the identifiers of the client's tool schemas and system
	// prompt (enum values such as in_progress), which every request shows.
	known map[string]bool
}

// answer returns the needs of the calls of resp, the assistant message
// that answered the request.
func (r referee) answer(resp msg) []need {
	var out []need
	for _, c := range unseenIn(editCalls(resp), r.v) {
		n := need{kind: "edit", key: "file " + c.path, size: fileTokens(r.history, c.path, r.tok)}
		if n.size == 0 {
			// Never read whole: what showed the old text is read again.
			n.key, n.size = r.source(firstUnseen(c, r.v), len(r.history))
		}
		out = append(out, n)
	}
	symbols := map[string]bool{}
	for _, c := range resp.Content {
		b := gjson.ParseBytes(c)
		if b.Get("type").String() != "tool_use" {
			continue
		}
		in := b.Get("input")
		name := b.Get("name").String()
		switch name {
		case "Read":
			if parts := fileView(r.history, in.Get("file_path").String()); r.hidden(parts) {
				out = append(out, need{kind: "read"})
			}
		case "Bash":
			if cmd := strings.TrimSpace(in.Get("command").String()); len(cmd) >= minShownLine && r.hist.shows(cmd) && !r.v.shows(cmd) {
				out = append(out, need{kind: "command"})
			}
		}
		if name == "TodoWrite" {
			continue // the agent's own plan, not something it read
		}
		for _, s := range callStrings(in) {
			for _, id := range identifiers(s) {
				if symbols[id] || r.known[id] || !r.hist.idents[id] || r.v.idents[id] {
					continue
				}
				symbols[id] = true
				key, size := r.source(id, len(r.history))
				out = append(out, need{kind: "symbol", key: key, size: size})
			}
		}
	}
	return out
}

// firstUnseen is the first line of an edit's old text the view does not
// show (see unseenIn).
func firstUnseen(c editCall, v *view) string {
	for _, old := range c.olds {
		for _, line := range strings.Split(old, "\n") {
			if t := strings.TrimSpace(line); len(t) >= minShownLine && !strings.Contains(v.text, t) {
				return t
			}
		}
	}
	return ""
}

// hidden reports whether the side's request lacks one of parts that the
// client's request shows.
func (r referee) hidden(parts []string) bool {
	for _, p := range parts {
		if p != "" && r.hist.shows(p) && !r.v.shows(p) {
			return true
		}
	}
	return false
}

// minQuote is the shortest trimmed line of a user's message taken as a
// quote of earlier content.
const minQuote = 20

// quotes returns the needs of the user turn the request ends with: each
// line of its user-typed text that repeats a line the history showed
// before it and the side's request no longer shows before it.
func (r referee) quotes(summaries map[string]bool, histLines, vLines map[string]bool) []need {
	last := r.history[len(r.history)-1]
	seen := map[string]bool{}
	var out []need
	for _, b := range last.Content {
		if !userTyped(b, summaries) {
			continue
		}
		for _, line := range strings.Split(gjson.GetBytes(b, "text").String(), "\n") {
			t := strings.TrimSpace(line)
			if len(t) < minQuote || seen[t] || !histLines[t] || vLines[t] {
				continue
			}
			seen[t] = true
			key, size := r.source(t, len(r.history)-1)
			out = append(out, need{kind: "quote", key: key, size: size})
		}
	}
	return out
}

// lines is the set of trimmed lines of text.
func lines(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); len(t) >= minQuote {
			out[t] = true
		}
	}
	return out
}

// source is the latest tool result of the history's first n messages that
// holds s, as a recovery key and the tokens a re-read or re-run of it
// returns; 0 when none does (s came from words, not a tool).
func (r referee) source(s string, n int) (string, int64) {
	for i := n - 1; i >= 0; i-- {
		for _, c := range r.history[i].Content {
			b := gjson.ParseBytes(c)
			if b.Get("type").String() != "tool_result" {
				continue
			}
			if t := resultText(b.Get("content")); strings.Contains(t, s) {
				return "result " + b.Get("tool_use_id").String(), int64(r.tok([]byte(t)))
			}
		}
	}
	return "", 0
}

// callStrings are the strings of a call's input a symbol is looked for
// in: all but the old text of an edit (blind edits count it) and paths.
func callStrings(in gjson.Result) []string {
	var out []string
	var walk func(key string, v gjson.Result)
	walk = func(key string, v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			if key != "old_string" && key != "file_path" && key != "path" {
				out = append(out, v.Str)
			}
		case v.IsArray() || v.IsObject():
			v.ForEach(func(k, c gjson.Result) bool { walk(k.String(), c); return true })
		}
	}
	walk("", in)
	return out
}

// userTyped reports whether a user message's block is the user's own:
// text they typed or a slash-command or skill expansion, an image or a
// document — not a tool result, a system reminder Claude Code adds, or a
// compaction summary.
func userTyped(block []byte, summaries map[string]bool) bool {
	b := gjson.ParseBytes(block)
	switch b.Get("type").String() {
	case "image", "document":
		return true
	case "text":
		t := b.Get("text").String()
		return !strings.HasPrefix(strings.TrimSpace(t), "<system-reminder>") && !summaries[t]
	}
	return false
}

// userContent is what a request must show of a user-typed block: its text,
// or an image's or document's data.
func userContent(block []byte) string {
	b := gjson.ParseBytes(block)
	if b.Get("type").String() == "text" {
		return b.Get("text").String()
	}
	if d := b.Get("source.data"); d.Exists() {
		return d.String()
	}
	return b.Get("source.url").String()
}

// fileView is the latest whole view the history gives of path, as the
// strings a request shows it in: a Read result's text parts, or a Write's
// content; nil when there is none.
func fileView(history []msg, path string) []string {
	if path == "" {
		return nil
	}
	reads := map[string]bool{}
	var parts []string
	for _, m := range history {
		for _, c := range m.Content {
			b := gjson.ParseBytes(c)
			switch b.Get("type").String() {
			case "tool_use":
				in := b.Get("input")
				if in.Get("file_path").String() != path {
					continue
				}
				switch b.Get("name").String() {
				case "Read":
					reads[b.Get("id").String()] = true
				case "Write":
					parts = []string{in.Get("content").String()}
				}
			case "tool_result":
				if reads[b.Get("tool_use_id").String()] && !b.Get("is_error").Bool() {
					parts = resultParts(b.Get("content"))
				}
			}
		}
	}
	return parts
}

// resultParts are a tool result's strings: its string content, or the
// text of each text part.
func resultParts(c gjson.Result) []string {
	if c.Type == gjson.String {
		return []string{c.Str}
	}
	var out []string
	c.ForEach(func(_, p gjson.Result) bool {
		if p.Get("type").String() == "text" {
			out = append(out, p.Get("text").String())
		}
		return true
	})
	return out
}
