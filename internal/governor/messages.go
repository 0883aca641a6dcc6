package governor

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Latest runs the detector over a Messages API request's messages (the
// JSON array, as the proxy sees every request of a conversation) and
// returns the fires completed by the tool results after its last assistant
// message: what this request shows that the one before it did not. (Claude
// Code may put messages of its own, such as a hook's additional context,
// after the tool results.) It is
// deterministic over the messages, so a replayed or restarted proxy
// records the same fires for the same request. The context size is not
// known per call here, so the stall rule stays off.
func Latest(messages []byte, shell Shell, th Thresholds) []Fire {
	msgs := gjson.ParseBytes(messages).Array()
	last := -1
	for i, m := range msgs {
		if m.Get("role").Str == "assistant" {
			last = i
		}
	}
	var (
		st    State
		uses  = pairs{}
		fires []Fire
	)
	for i, m := range msgs {
		content := m.Get("content")
		switch m.Get("role").Str {
		case "assistant":
			for _, b := range content.Array() {
				if b.Get("type").Str == "tool_use" {
					uses[b.Get("id").Str] = pending{name: b.Get("name").Str, input: []byte(b.Get("input").Raw)}
				}
			}
		case "user":
			for _, b := range content.Array() {
				if b.Get("type").Str != "tool_result" {
					continue
				}
				c, _, ok := uses.result(b.Get("tool_use_id").Str, b.Get("is_error").Bool(), resultText(b.Get("content")), shell)
				if !ok {
					continue
				}
				if f, fired := st.Observe(c, th); fired && i > last {
					fires = append(fires, f)
				}
			}
		}
	}
	return fires
}

// resultText is a tool result's content as text: a string, or its text
// blocks joined by newlines.
func resultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var parts []string
	for _, b := range c.Array() {
		if b.Get("type").Str == "text" {
			parts = append(parts, b.Get("text").Str)
		}
	}
	return strings.Join(parts, "\n")
}
