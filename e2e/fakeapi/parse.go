package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// cacheControl is a parsed cache_control marker.
type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// ttlOrDefault returns the marker's TTL, "5m" when unset.
func (c *cacheControl) ttlOrDefault() string {
	if c.TTL == "" {
		return "5m"
	}
	return c.TTL
}

// block is one element of the cacheable prefix: a tool definition, a system
// text block or a message content block.
type block struct {
	where string          // position for error messages, e.g. "messages.3.content.1"
	raw   json.RawMessage // as sent
	canon []byte          // compact JSON without cache_control: hashed and counted
	cc    *cacheControl   // nil: no breakpoint here
	ccRaw json.RawMessage // the cache_control value as sent, when present
	// nested are cache_control markers inside a tool_result's content
	// blocks: each counts against the limit and marks this block.
	nested []*cacheControl

	// Fields of content blocks (zero for tools and system blocks).
	Type      string
	Text      *string
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	Content   json.RawMessage
	IsError   bool
	Thinking  *string
	Signature *string
	Tool      json.RawMessage // a tool_addition's or tool_removal's tool
}

// message is one entry of "messages".
type message struct {
	Role       string
	strContent *string  // content given as a plain string
	Blocks     []*block // content blocks (one synthetic text block for string content)
	where      string
}

// parsedRequest is a decoded messages or count_tokens body.
type parsedRequest struct {
	fields    map[string]json.RawMessage
	Model     string
	MaxTokens *int64
	Stream    bool
	Tools     []*block
	toolsNull bool
	toolsSet  bool
	System    []*block
	sysString bool
	Messages  []*message
	topCC     *cacheControl
	betas     map[string]bool // the anthropic-beta header's values
}

// wireBlock is the decoding target for one content block.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     *string         `json:"thinking"`
	Signature    *string         `json:"signature"`
	CacheControl json.RawMessage `json:"cache_control"`
	Tool         json.RawMessage `json:"tool"`
}

// invalidError is a request the real API would reject with 400.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// parseRequest decodes a request body. Structural problems (not JSON, wrong
// types) come back as *invalidError.
func parseRequest(body []byte) (*parsedRequest, error) {
	p := &parsedRequest{}
	if err := json.Unmarshal(body, &p.fields); err != nil || p.fields == nil {
		return nil, invalidf("Request body is not a valid JSON object")
	}
	if raw, ok := p.fields["model"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p.Model); err != nil {
			return nil, invalidf("model: Input should be a valid string")
		}
	}
	if raw, ok := p.fields["max_tokens"]; ok && !isNull(raw) {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, invalidf("max_tokens: Input should be a valid integer")
		}
		p.MaxTokens = &n
	}
	if raw, ok := p.fields["stream"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p.Stream); err != nil {
			return nil, invalidf("stream: Input should be a valid boolean")
		}
	}
	if raw, ok := p.fields["tools"]; ok {
		p.toolsSet = true
		if isNull(raw) {
			p.toolsNull = true
		} else {
			var tools []json.RawMessage
			if err := json.Unmarshal(raw, &tools); err != nil {
				return nil, invalidf("tools: Input should be a valid list")
			}
			for i, t := range tools {
				b, err := newBlock(t, fmt.Sprintf("tools.%d", i))
				if err != nil {
					return nil, err
				}
				p.Tools = append(p.Tools, b)
			}
		}
	}
	if raw, ok := p.fields["system"]; ok && !isNull(raw) {
		sys, isString, err := parseContent(raw, "system")
		if err != nil {
			return nil, err
		}
		p.System, p.sysString = sys, isString
	}
	if raw, ok := p.fields["cache_control"]; ok && !isNull(raw) {
		cc, err := parseCacheControl(raw, "cache_control")
		if err != nil {
			return nil, err
		}
		p.topCC = cc
	}
	if raw, ok := p.fields["messages"]; ok && !isNull(raw) {
		var msgs []json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, invalidf("messages: Input should be a valid list")
		}
		for i, m := range msgs {
			msg, err := parseMessage(m, i)
			if err != nil {
				return nil, err
			}
			p.Messages = append(p.Messages, msg)
		}
	}
	return p, nil
}

func parseMessage(raw json.RawMessage, i int) (*message, error) {
	where := fmt.Sprintf("messages.%d", i)
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidf("%s: Input should be a valid dictionary", where)
	}
	if isNull(m.Content) {
		return nil, invalidf("%s.content: Field required", where)
	}
	blocks, isString, err := parseContent(m.Content, where+".content")
	if err != nil {
		return nil, err
	}
	msg := &message{Role: m.Role, Blocks: blocks, where: where}
	if isString {
		msg.strContent = blocks[0].Text
	}
	return msg, nil
}

// parseContent decodes a string-or-blocks value (system or message content).
// A string becomes one text block.
func parseContent(raw json.RawMessage, where string) ([]*block, bool, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return nil, false, invalidf("%s: Input should be a valid string", where)
		}
		// A string renders exactly like one text block, so it hashes and
		// counts like one: the real client sends the same system message
		// first as blocks, then as a string.
		canon, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		b := &block{where: where, raw: raw, canon: canon, Type: "text", Text: &s}
		return []*block{b}, true, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return nil, false, invalidf("%s: Input should be a valid list", where)
	}
	blocks := make([]*block, 0, len(items))
	for j, it := range items {
		b, err := newBlock(it, fmt.Sprintf("%s.%d", where, j))
		if err != nil {
			return nil, false, err
		}
		var w wireBlock
		if err := json.Unmarshal(it, &w); err != nil {
			return nil, false, invalidf("%s.%d: Input should be a valid dictionary", where, j)
		}
		b.Type, b.Text, b.ID, b.Name, b.Input = w.Type, w.Text, w.ID, w.Name, w.Input
		b.ToolUseID, b.Content, b.IsError = w.ToolUseID, w.Content, w.IsError
		b.Thinking, b.Signature, b.Tool = w.Thinking, w.Signature, w.Tool
		if b.Type == "tool_result" {
			if err := b.parseNested(); err != nil {
				return nil, false, err
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, false, nil
}

// newBlock makes a prefix block from one JSON object: its canonical form
// drops cache_control so moving a breakpoint changes neither hash nor count.
func newBlock(raw json.RawMessage, where string) (*block, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, invalidf("%s: Input should be a valid dictionary", where)
	}
	b := &block{where: where, raw: raw}
	if cc, ok := obj["cache_control"]; ok {
		delete(obj, "cache_control")
		if !isNull(cc) {
			parsed, err := parseCacheControl(cc, where+".cache_control")
			if err != nil {
				return nil, err
			}
			b.cc, b.ccRaw = parsed, cc
		}
	}
	canon, err := json.Marshal(obj)
	if err != nil {
		return nil, invalidf("%s: cannot encode block: %v", where, err)
	}
	b.canon = canon
	return b, nil
}

// parseNested finds cache_control markers in a tool_result's content blocks.
// The first one makes the tool_result a breakpoint when it has none itself.
func (b *block) parseNested() error {
	trimmed := bytes.TrimSpace(b.Content)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil
	}
	var items []struct {
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return invalidf("%s.content: Input should be a valid list", b.where)
	}
	for j, it := range items {
		if isNull(it.CacheControl) {
			continue
		}
		cc, err := parseCacheControl(it.CacheControl, fmt.Sprintf("%s.content.%d.cache_control", b.where, j))
		if err != nil {
			return err
		}
		b.nested = append(b.nested, cc)
	}
	if b.cc == nil && len(b.nested) > 0 {
		b.cc = b.nested[len(b.nested)-1]
		b.nested = b.nested[:len(b.nested)-1]
	}
	return nil
}

func parseCacheControl(raw json.RawMessage, where string) (*cacheControl, error) {
	var cc cacheControl
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, invalidf("%s: Input should be a valid dictionary", where)
	}
	if cc.Type != "ephemeral" {
		return nil, invalidf("%s.type: Input should be 'ephemeral'", where)
	}
	if cc.TTL != "" && cc.TTL != "5m" && cc.TTL != "1h" {
		return nil, invalidf("%s.ttl: Input should be '5m' or '1h'", where)
	}
	return &cc, nil
}

// prefix returns every block in cache prefix order: tools, system, messages.
func (p *parsedRequest) prefix() []*block {
	out := make([]*block, 0, len(p.Tools)+len(p.System)+4*len(p.Messages))
	out = append(out, p.Tools...)
	out = append(out, p.System...)
	for _, m := range p.Messages {
		out = append(out, m.Blocks...)
	}
	return out
}

// textOf joins the text of a tool_result's content (a string or blocks).
// toolReferences are the tool names of the tool_reference blocks in a
// tool_result's content (a tool search result).
func toolReferences(raw json.RawMessage) []string {
	var items []struct {
		Type     string `json:"type"`
		ToolName string `json:"tool_name"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var names []string
	for _, it := range items {
		if it.Type == "tool_reference" {
			names = append(names, it.ToolName)
		}
	}
	return names
}

func textOf(raw json.RawMessage) string {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return ""
	}
	if trimmed[0] == '"' {
		var s string
		_ = json.Unmarshal(trimmed, &s)
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		if it.Type == "text" {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}
