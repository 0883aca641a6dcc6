package replay

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// editCall is one Edit or MultiEdit call: the file it edits and the old
// text of each of its edits.
type editCall struct {
	path string
	olds []string
}

// recovery prices, on one side, the calls its hidden-then-needed content
// leaves out of the billed figures (see the package doc, "What the user
// loses"). Each recovery is one more turn at that moment, which reads the
// request it follows from the cache, and what it reads again (the file
// before a blind edit, the tool result a symbol or quote came from),
// written once and read by every later request until the side's next
// rebuild (a re-projection, or a compaction) drops it. A blind edit's
// re-read is priced every time, even of a file read again before in the
// same stretch (the replay serves the side's requests as they were,
// without it, and an edit needs the file's current text); the source of a
// symbol or a quote once per stretch (what was read again stays in view
// until the rebuild).
type recovery struct {
	held  map[string]int64 // tokens read again, by what was read, served until the next rebuild
	sum   int64            // their total
	ttl1h bool             // writes last an hour (the client asked for it)
	u     cachesim.Usage   // what the recoveries add
	calls int              // how many were added
}

// add prices reading size tokens of key again after a request of before
// tokens, every time or only when key is not held; size 0 adds nothing
// (the call itself recovered it).
func (r *recovery) add(key string, size, before int64, every bool) {
	if _, held := r.held[key]; size <= 0 || held && !every {
		return
	}
	if r.held == nil {
		r.held = map[string]int64{}
	}
	r.calls++
	r.u.Read += before
	if r.ttl1h {
		r.u.Write1h += size
	} else {
		r.u.Write5m += size
	}
	r.sum += size - r.held[key]
	r.held[key] = size
}

// request accounts for one more request of the side: a rebuild (or a
// compaction) ends the stretch, any other request reads what is held.
func (r *recovery) request(rebuilt bool) {
	if rebuilt {
		clear(r.held)
		r.sum = 0
		return
	}
	r.u.Read += r.sum
}

// fileTokens is the size of the latest whole view the history gives of
// path (see fileView); 0 when there is none.
func fileTokens(history []msg, path string, tok func([]byte) int) int64 {
	parts := fileView(history, path)
	if parts == nil {
		return 0
	}
	return int64(tok([]byte(strings.Join(parts, ""))))
}

// resultText is a tool result's text: its string content, or the text
// parts of an array content.
func resultText(c gjson.Result) string { return strings.Join(resultParts(c), "") }
