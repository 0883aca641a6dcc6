// Package validate checks that a Messages API request body is one the
// upstream accepts: the rules the projection must never break (pairing of
// tool calls and results, alternating roles, at most four cache
// breakpoints, thinking blocks with their signatures, no empty tools).
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/tidwall/gjson"
)

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// MaxBreakpoints is the API's limit on cache_control markers.
const MaxBreakpoints = 4

// Request returns the first rule body breaks, or nil.
func Request(body []byte) error {
	if !gjson.ValidBytes(body) {
		return errors.New("body is not valid JSON")
	}
	r := gjson.ParseBytes(body)
	if !r.Get("model").Exists() || r.Get("model").String() == "" {
		return errors.New("model: field required")
	}
	if !r.Get("max_tokens").Exists() {
		return errors.New("max_tokens: field required")
	}
	var c checker
	hasTools, err := c.tools(r.Get("tools"))
	if err != nil {
		return err
	}
	if tc := r.Get("tool_choice"); tc.Exists() && !hasTools {
		return errors.New("tool_choice: requires tools")
	}
	if err := c.system(r.Get("system")); err != nil {
		return err
	}
	if err := c.messages(r.Get("messages")); err != nil {
		return err
	}
	if c.toolBlocks && !hasTools {
		return errors.New("requests which include tool_use or tool_result blocks must define tools")
	}
	return c.breakpoints()
}

// checker carries what the checks of one request collect: its cache
// breakpoints, in prefix order, and whether it has tool blocks.
type checker struct {
	ttls       []string // each breakpoint's time to live
	toolBlocks bool
	ids        map[string]bool // tool_use ids seen
}

// cacheControl counts the breakpoint b carries, if any.
func (c *checker) cacheControl(where string, b gjson.Result) error {
	cc := b.Get("cache_control")
	if !cc.Exists() {
		return nil
	}
	if cc.Get("type").String() != "ephemeral" {
		return fmt.Errorf("%s: cache_control.type must be ephemeral", where)
	}
	ttl := cc.Get("ttl").String()
	if ttl == "" {
		ttl = "5m"
	}
	c.ttls = append(c.ttls, ttl)
	return nil
}

// breakpoints checks their number and that no one-hour breakpoint
// follows a five-minute one.
func (c *checker) breakpoints() error {
	if len(c.ttls) > MaxBreakpoints {
		return fmt.Errorf("a maximum of %d blocks with cache_control may be provided, found %d", MaxBreakpoints, len(c.ttls))
	}
	seen5m := false
	for _, t := range c.ttls {
		if t == "5m" {
			seen5m = true
		} else if t == "1h" && seen5m {
			return errors.New("a ttl=1h cache_control block must not come after a ttl=5m one")
		}
	}
	return nil
}

// tools checks the tool list; has says there is one.
func (c *checker) tools(t gjson.Result) (has bool, err error) {
	if !t.Exists() {
		return false, nil
	}
	if !t.IsArray() || len(t.Array()) == 0 {
		return false, errors.New("tools: must be a non-empty list when present")
	}
	seen := map[string]bool{}
	for i, tool := range t.Array() {
		name := tool.Get("name").String()
		if !toolName.MatchString(name) {
			return false, fmt.Errorf("tools.%d.name: %q does not match %s", i, name, toolName)
		}
		if seen[name] {
			return false, fmt.Errorf("tools: tool names must be unique (%q)", name)
		}
		seen[name] = true
		if !tool.Get("type").Exists() && !tool.Get("input_schema").IsObject() {
			return false, fmt.Errorf("tools.%d.input_schema: field required", i)
		}
		if err := c.cacheControl(fmt.Sprintf("tools.%d", i), tool); err != nil {
			return false, err
		}
	}
	return true, nil
}

// system checks the top-level system prompt.
func (c *checker) system(s gjson.Result) error {
	switch {
	case !s.Exists(), s.Type == gjson.String:
		return nil
	case s.IsArray():
		for i, b := range s.Array() {
			if b.Get("type").String() != "text" {
				return fmt.Errorf("system.%d.type: must be text", i)
			}
			if b.Get("text").String() == "" {
				return fmt.Errorf("system.%d: text content blocks must be non-empty", i)
			}
			if err := c.cacheControl(fmt.Sprintf("system.%d", i), b); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("system: must be a string or a list of text blocks")
}

// messages checks every message's content, that user and assistant
// alternate (role "system" messages are carried in place), and that each
// tool_use is answered first thing in the next message.
func (c *checker) messages(ms gjson.Result) error {
	if !ms.IsArray() || len(ms.Array()) == 0 {
		return errors.New("messages: must be a non-empty list")
	}
	c.ids = map[string]bool{}
	prevRole := ""
	var pending map[string]bool // tool_use ids awaiting results
	for i, m := range ms.Array() {
		role := m.Get("role").String()
		where := fmt.Sprintf("messages.%d", i)
		blocks, err := c.content(where, role, m.Get("content"))
		if err != nil {
			return err
		}
		switch role {
		case "system":
			continue // carried in place; not part of the alternation
		case "user", "assistant":
		default:
			return fmt.Errorf("%s.role: unexpected role %q", where, role)
		}
		if prevRole == "" && role != "user" {
			return fmt.Errorf("%s: the first message must use the user role", where)
		}
		if role == prevRole {
			return fmt.Errorf("%s: roles must alternate between user and assistant", where)
		}
		if role == "user" {
			if err := answers(where, blocks, pending); err != nil {
				return err
			}
			pending = nil
		} else {
			if len(pending) > 0 {
				return fmt.Errorf("%s: tool_use ids were found without tool_result blocks immediately after", where)
			}
			pending = map[string]bool{}
			for _, b := range blocks {
				if b.Get("type").String() == "tool_use" {
					pending[b.Get("id").String()] = true
				}
			}
		}
		prevRole = role
	}
	return nil
}

// content checks one message's content and returns its blocks (none for
// string content).
func (c *checker) content(where, role string, content gjson.Result) ([]gjson.Result, error) {
	var blocks []gjson.Result
	switch {
	case content.Type == gjson.String:
		if content.Str == "" && role != "assistant" && role != "system" {
			return nil, fmt.Errorf("%s: content must be non-empty", where)
		}
	case content.IsArray():
		blocks = content.Array()
		if len(blocks) == 0 {
			return nil, fmt.Errorf("%s: content must be non-empty", where)
		}
	default:
		return nil, fmt.Errorf("%s.content: must be a string or a list", where)
	}
	for j, b := range blocks {
		if err := c.block(fmt.Sprintf("%s.content.%d", where, j), role, b); err != nil {
			return nil, err
		}
	}
	return blocks, nil
}

// block checks one content block of a message with the given role.
func (c *checker) block(where, role string, b gjson.Result) error {
	typ := b.Get("type").String()
	switch typ {
	case "text":
		if b.Get("text").String() == "" {
			return fmt.Errorf("%s: text content blocks must be non-empty", where)
		}
	case "thinking", "redacted_thinking":
		if typ == "thinking" && role != "assistant" {
			return fmt.Errorf("%s: thinking only in assistant messages", where)
		}
		field := map[string]string{"thinking": "signature", "redacted_thinking": "data"}[typ]
		if b.Get(field).String() == "" {
			return fmt.Errorf("%s.%s: field required", where, field)
		}
		if b.Get("cache_control").Exists() {
			return fmt.Errorf("%s: thinking blocks cannot carry cache_control", where)
		}
	case "tool_use":
		c.toolBlocks = true
		if role != "assistant" {
			return fmt.Errorf("%s: tool_use only in assistant messages", where)
		}
		id := b.Get("id").String()
		if id == "" || c.ids[id] {
			return fmt.Errorf("%s.id: tool_use ids must be unique and non-empty (%q)", where, id)
		}
		c.ids[id] = true
		if !b.Get("input").IsObject() {
			return fmt.Errorf("%s.input: must be an object", where)
		}
	case "tool_result":
		c.toolBlocks = true
		if role != "user" {
			return fmt.Errorf("%s: tool_result only in user messages", where)
		}
	case "":
		return fmt.Errorf("%s.type: field required", where)
	}
	if err := c.cacheControl(where, b); err != nil {
		return err
	}
	if rc := b.Get("content"); typ == "tool_result" && rc.IsArray() {
		for k, p := range rc.Array() {
			if err := c.cacheControl(fmt.Sprintf("%s.content.%d", where, k), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// answers checks that a user message's tool_result blocks come first and
// answer exactly the tool_use ids pending from the assistant message
// before it.
func answers(where string, blocks []gjson.Result, pending map[string]bool) error {
	seenText := false
	got := map[string]bool{}
	for j, b := range blocks {
		if b.Get("type").String() != "tool_result" {
			seenText = true
			continue
		}
		id := b.Get("tool_use_id").String()
		if seenText && pending[id] {
			return fmt.Errorf("%s.content.%d: tool_result blocks must come first in the user message", where, j)
		}
		if !pending[id] {
			return fmt.Errorf("%s.content.%d: unexpected tool_use_id %q in tool_result blocks: each tool_result must answer a tool_use of the previous message", where, j, id)
		}
		if got[id] {
			return fmt.Errorf("%s.content.%d: duplicate tool_result for %q", where, j, id)
		}
		got[id] = true
	}
	for id := range pending {
		if !got[id] {
			return fmt.Errorf("%s: tool_use ids were found without tool_result blocks immediately after: %s", where, id)
		}
	}
	return nil
}

// PrefixBreak compares two consecutive served requests: tools, system and
// every message of prev but its last (the sanctioned re-fold of the
// previous current turn) must be re-served byte-identical in next, ignoring
// cache_control. It returns the index of the first message that differs
// (len(messages) for tools or system), or -1.
func PrefixBreak(prev, next []byte) int {
	pm := gjson.GetBytes(prev, "messages").Array()
	nm := gjson.GetBytes(next, "messages").Array()
	if !bytes.Equal(canon(gjson.GetBytes(prev, "system")), canon(gjson.GetBytes(next, "system"))) ||
		!bytes.Equal(canon(gjson.GetBytes(prev, "tools")), canon(gjson.GetBytes(next, "tools"))) {
		return len(pm)
	}
	for i := 0; i < len(pm)-1; i++ {
		if i >= len(nm) || !bytes.Equal(canon(pm[i]), canon(nm[i])) {
			return i
		}
	}
	return -1
}

// canon is JSON without cache_control anywhere.
func canon(r gjson.Result) []byte {
	var v any
	if err := json.Unmarshal([]byte(r.Raw), &v); err != nil {
		return []byte(r.Raw)
	}
	var strip func(any) any
	strip = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			delete(t, "cache_control")
			for k, e := range t {
				t[k] = strip(e)
			}
		case []any:
			for i, e := range t {
				t[i] = strip(e)
			}
		}
		return x
	}
	b, _ := json.Marshal(strip(v))
	return b
}
