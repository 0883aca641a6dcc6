package replay

import (
	"strings"

	"github.com/tidwall/gjson"
)

// view is what one request body shows the model: every string of its
// messages, as text (one string a line) and as a set of exact values, and
// the identifiers in it. prefix is the text of every message but the last
// (the user turn the request ends with), for quotes of earlier content.
type view struct {
	text, prefix string
	strs         map[string]bool
	idents       map[string]bool
}

// newView reads the messages of a request body.
func newView(body []byte) *view {
	v := &view{strs: map[string]bool{}, idents: map[string]bool{}}
	msgs := gjson.GetBytes(body, "messages").Array()
	var sb strings.Builder
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		switch {
		case r.Type == gjson.String:
			v.strs[r.Str] = true
			sb.WriteString(r.Str)
			sb.WriteByte('\n')
		case r.IsArray() || r.IsObject():
			r.ForEach(func(_, c gjson.Result) bool { walk(c); return true })
		}
	}
	for i, m := range msgs {
		if i == len(msgs)-1 {
			v.prefix = sb.String()
		}
		walk(m)
	}
	v.text = sb.String()
	for _, id := range identifiers(v.text) {
		v.idents[id] = true
	}
	return v
}

// shows reports whether s is among the strings the view shows, whole or
// inside one of them.
func (v *view) shows(s string) bool {
	return v.strs[s] || strings.Contains(v.text, s)
}

// minIdent is the shortest identifier counted as a symbol: shorter ones
// ("err", "path", "config") are everywhere.
const minIdent = 8

// identifiers lists the code identifiers in s: words of letters, digits
// and underscores, minIdent characters or more, that start with a letter
// or underscore and contain an underscore, a digit, or a lower-case letter
// followed by an upper-case one (snake_case, camelCase, TestPanel), which
// English words do not.
func identifiers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isWord(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWord(s[j]) {
			j++
		}
		if w := s[i:j]; len(w) >= minIdent && (w[0] < '0' || w[0] > '9') && isCode(w) {
			out = append(out, w)
		}
		i = j
	}
	return out
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isCode reports whether a word looks like code: an underscore or a digit
// after its first character, or a lower-case letter followed by an
// upper-case one.
func isCode(w string) bool {
	for i := 1; i < len(w); i++ {
		c, p := w[i], w[i-1]
		if c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' && p >= 'a' && p <= 'z' {
			return true
		}
	}
	return false
}
