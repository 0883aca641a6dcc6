package replay

import (
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// editCall is one Edit or MultiEdit call: the file it edits and the old
// text of each of its edits.
type editCall struct {
	path string
	olds []string
}

// rereads prices, on one side, the reads its blind edits leave out of the
// billed figures (see the package doc, "Edits of text the request did not
// show"). An agent served a request that does not show the text it is
// about to replace reads the file first: one more turn, which reads the
// request it follows from the cache, and the file's content, written once
// and read by every later request until the side's next re-projection
// rebuilds its context (or, on the baseline, until a compaction). A file
// read again is read once per such stretch: the edits after it see it.
type rereads struct {
	held  int64           // tokens of the files read again, served until the next rebuild
	paths map[string]bool // those files
	ttl1h bool            // writes last an hour (the client asked for it)
	u     cachesim.Usage  // what the reads add
	calls int             // how many reads were added
}

// edit prices reading path (size tokens, 0 when the history never showed
// it whole) before an edit that answers a request of before tokens.
func (r *rereads) edit(path string, size, before int64) {
	if r.paths[path] {
		return
	}
	if r.paths == nil {
		r.paths = map[string]bool{}
	}
	r.paths[path] = true
	r.calls++
	r.u.Read += before
	if r.ttl1h {
		r.u.Write1h += size
	} else {
		r.u.Write5m += size
	}
	r.held += size
}

// request accounts for one more request of the side: a rebuild (or a
// compaction) ends the stretch, any other request reads the files held.
func (r *rereads) request(rebuilt bool) {
	if rebuilt {
		r.held = 0
		clear(r.paths)
		return
	}
	r.u.Read += r.held
}

// fileTokens is the size of the latest whole view the history gives of
// path: a Read result of it (the file as the agent read it) or the
// content of a Write of it; 0 when there is none.
func fileTokens(history []msg, path string, tok func([]byte) int) int64 {
	reads := map[string]bool{}
	var size int64
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
					size = int64(tok([]byte(in.Get("content").String())))
				}
			case "tool_result":
				if reads[b.Get("tool_use_id").String()] && !b.Get("is_error").Bool() {
					size = int64(tok([]byte(resultText(b.Get("content")))))
				}
			}
		}
	}
	return size
}

// resultText is a tool result's text: its string content, or the text
// parts of an array content.
func resultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var s string
	c.ForEach(func(_, p gjson.Result) bool {
		if p.Get("type").String() == "text" {
			s += p.Get("text").String()
		}
		return true
	})
	return s
}
