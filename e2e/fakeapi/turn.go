package fakeapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// toolLoadedRE is the meta text Claude Code sends beside a ToolSearch
// result.
var toolLoadedRE = regexp.MustCompile(`^Tool loaded\.(?:\n\[id:[^\]\n]+\])*$`)

// TypedTurn returns the text of the latest user message that carries text
// of its own (its text blocks without <system-reminder> sections: what the
// person typed, or a slash command's expansion) and the calls made since
// it, in order. A user message holding only tool results is not a turn,
// nor is the text Claude Code adds beside a tool search result ("Tool
// loaded.", optionally followed by "[id:…]" lines).
func (v *View) TypedTurn() (text string, since []Call) {
	for i := len(v.Messages) - 1; i >= 0; i-- {
		m := v.Messages[i]
		if m.Role != "user" {
			continue
		}
		text = userText(m)
		if text == "" || toolLoadedRE.MatchString(text) {
			continue
		}
		ids := map[string]bool{}
		for _, m := range v.Messages[i+1:] {
			for _, b := range m.Blocks {
				if b.Type == "tool_use" {
					ids[b.ID] = true
				}
			}
		}
		for _, c := range v.calls {
			if ids[c.ID] {
				since = append(since, c)
			}
		}
		return text, since
	}
	return "", nil
}

// JSONText is s as it appears inside a JSON string the way Claude Code
// writes it (JSON.stringify: no HTML escaping), for finding text in a
// request's raw bytes.
func JSONText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}
