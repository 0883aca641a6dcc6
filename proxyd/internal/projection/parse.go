package projection

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// block is one content block of a message, in canonical form: its JSON has
// no cache_control anywhere (client markers are replaced by ours).
type block struct {
	raw []byte // canonical JSON
	typ string

	// tool_use
	id    string
	name  string
	input gjson.Result

	// tool_result
	toolUseID string
	isError   bool
	content   []byte // the result's raw "content" (string or array JSON); nil if absent
	contentAt int    // where content starts in raw
	text      string // the result's text (text parts joined), or a text block's text
	images    int    // image parts of a tool_result

	tokens        int // estimated tokens of raw
	contentTokens int // estimated tokens of content, counted with raw's
	counted       bool

	textTokens  int // estimated tokens of text
	textCounted bool
}

// spanFunc estimates the tokens of a text and of its part s[i:j] (see
// tokens.EstimateSpan).
type spanFunc func(s string, i, j int) (whole, part int)

// tokenCount estimates the block's tokens, and its content's with them,
// once.
func (b *block) tokenCount(span spanFunc) int {
	if !b.counted {
		i, j := 0, 0
		if b.content != nil {
			i, j = b.contentAt, b.contentAt+len(b.content)
		}
		b.tokens, b.contentTokens = span(stringOf(b.raw), i, j)
		b.counted = true
	}
	return b.tokens
}

// contentTokenCount estimates the tokens of the block's content once.
func (b *block) contentTokenCount(span spanFunc) int {
	b.tokenCount(span)
	return b.contentTokens
}

// textTokenCount estimates the tokens of the block's text once.
func (b *block) textTokenCount(tok func(string) int) int {
	if !b.textCounted {
		b.textTokens, b.textCounted = tok(b.text), true
	}
	return b.textTokens
}

// stringOf views bytes the engine never mutates as a string, without a
// copy, for read-only use (token estimates, hashing).
func stringOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// message is one entry of the request's messages, canonical: content is
// always a list of blocks.
type message struct {
	role   string
	blocks []block
	extra  []byte // other fields of the message (",\"output_config\":{…}"), verbatim
}

// tokens estimates the message's tokens as sent (its blocks, each once).
func (m *message) tokens(span spanFunc) int {
	n := 0
	for i := range m.blocks {
		n += m.blocks[i].tokenCount(span)
	}
	return n
}

var errNoMessages = errors.New("request has no messages")

// request is a body's top-level fields, read in one pass by the gate
// (each field's first occurrence, as Get finds it). Its results are views
// of one copy of the body, so folded state may keep them.
type request struct {
	top                            []gate.Member
	model, messages, system, tools gjson.Result
}

func parseRequest(in *gate.Body) request {
	return request{top: in.Members(), model: in.Field("model"), messages: in.Field("messages"),
		system: in.Field("system"), tools: in.Field("tools")}
}

// splitMessages returns the raw messages of the request. It reads them
// with ForEach, which skips over a message about three times faster than
// Array (the same results on valid JSON; an invalid body is never served).
func splitMessages(ms gjson.Result) ([]gjson.Result, error) {
	if !ms.IsArray() {
		return nil, errNoMessages
	}
	var out []gjson.Result
	ms.ForEach(func(_, m gjson.Result) bool {
		out = append(out, m)
		return true
	})
	if len(out) == 0 {
		return nil, errNoMessages
	}
	return out, nil
}

// parseMessage reads one message into canonical form.
func parseMessage(m gjson.Result, i int) (message, error) {
	sc := scratches.Get().(*scratch)
	msg, ok := sc.message(m.Raw)
	sc.release() // the pool must not keep the request alive
	scratches.Put(sc)
	if ok {
		return msg, nil
	}
	return slowMessage(m, i)
}

// slowMessage reads any message with gjson (see fastparse.go for why most
// do not come here).
func slowMessage(m gjson.Result, i int) (message, error) {
	role := m.Get("role").String()
	if role == "" {
		return message{}, fmt.Errorf("message %d has no role", i)
	}
	msg := message{role: role}
	var c gjson.Result
	m.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "content":
			if !c.Exists() {
				c = v // the first, as Get finds it
			}
		case k.Str != "role":
			msg.extra = append(msg.extra, ',')
			msg.extra = append(msg.extra, k.Raw...)
			msg.extra = append(msg.extra, ':')
			msg.extra = append(msg.extra, v.Raw...)
		}
		return true
	})
	var err error
	switch {
	case c.Type == gjson.String:
		msg.blocks = []block{textBlock(c.Str)}
	case c.IsArray():
		c.ForEach(func(_, b gjson.Result) bool {
			var pb block
			pb, err = parseBlockString(b.Raw)
			if err != nil {
				return false
			}
			msg.blocks = append(msg.blocks, pb)
			return true
		})
	default:
		err = fmt.Errorf("message %d has content of type %s", i, c.Type)
	}
	return msg, err
}

// prefixHash identifies a conversation prefix in the memo: two 64-bit
// keyed hashes, with keys drawn afresh by each engine (the memo lives in
// memory only, so nothing outside the process can aim at a collision).
type prefixHash [16]byte

// hashKeys are an engine's keys for prefix hashes.
type hashKeys [2]maphash.Seed

func newHashKeys() hashKeys { return hashKeys{maphash.MakeSeed(), maphash.MakeSeed()} }

// messageHash chains the canonical form of message m onto prev. A message
// without cache_control is hashed as sent; one with it is hashed in its
// canonical (marker-free) form, so the client moving its markers does not
// change the hash of what the fold reads.
func (k hashKeys) messageHash(prev prefixHash, m gjson.Result, i int) (prefixHash, error) {
	var h [2]maphash.Hash
	for j := range h {
		h[j].SetSeed(k[j])
		h[j].Write(prev[:])
	}
	write := func(b []byte) {
		h[0].Write(b)
		h[1].Write(b)
	}
	if !strings.Contains(m.Raw, `"cache_control"`) {
		write([]byte("raw\x00"))
		write(bytesOf(m.Raw))
	} else {
		pm, err := parseMessage(m, i)
		if err != nil {
			return prev, err
		}
		write([]byte("canon\x00" + pm.role + "\x00"))
		write(pm.extra)
		for _, b := range pm.blocks {
			write([]byte{0})
			write(b.raw)
		}
	}
	var out prefixHash
	binary.LittleEndian.PutUint64(out[:8], h[0].Sum64())
	binary.LittleEndian.PutUint64(out[8:], h[1].Sum64())
	return out, nil
}

// textBlock is a canonical text block.
func textBlock(s string) block {
	raw := append(append([]byte(`{"type":"text","text":`), jsonString(s)...), '}')
	return block{raw: raw, typ: "text", text: s}
}

// bytesOf views a string as bytes, without a copy, for read-only use.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// parseBlockString canonicalises one content block from its JSON text,
// reading its fields in one pass.
func parseBlockString(rs string) (block, error) {
	if len(rs) == 0 || rs[0] != '{' {
		return block{}, fmt.Errorf("content block is not an object")
	}
	// rs is immutable; so are the raw bytes viewed from it (nothing writes
	// into a block's bytes, and their capacity ends at their length, so an
	// append copies).
	raw := bytesOf(rs)
	if strings.Contains(rs, `"cache_control"`) {
		raw = stripCacheControl([]byte(rs))
		rs = string(raw)
	}
	return slowBlock(raw, rs), nil
}

// slowBlock reads the fields of a block without cache_control: raw, and
// rs, the same bytes as a string.
func slowBlock(raw []byte, rs string) block {
	// The first occurrence of each field, as gjson's Get finds it.
	var typ, text, id, name, input, toolUseID, isError, content gjson.Result
	gjson.Parse(rs).ForEach(func(k, v gjson.Result) bool {
		var p *gjson.Result
		switch k.Str {
		case "type":
			p = &typ
		case "text":
			p = &text
		case "id":
			p = &id
		case "name":
			p = &name
		case "input":
			p = &input
		case "tool_use_id":
			p = &toolUseID
		case "is_error":
			p = &isError
		case "content":
			p = &content
		default:
			return true
		}
		if !p.Exists() {
			*p = v
		}
		return true
	})
	b := block{raw: raw, typ: typ.String()}
	switch b.typ {
	case "text":
		b.text = text.String()
	case "tool_use", "server_tool_use":
		b.id = id.String()
		b.name = name.String()
		b.input = input
	case "tool_result":
		b.toolUseID = toolUseID.String()
		b.isError = isError.Bool()
		if content.Exists() {
			b.content, b.contentAt = bytesOf(content.Raw), content.Index
		}
		b.text, b.images = resultText(content)
	}
	return b
}

// resultText joins the text parts of a tool_result's content and counts its
// images.
func resultText(c gjson.Result) (string, int) {
	if c.Type == gjson.String {
		return c.Str, 0
	}
	if !c.IsArray() {
		return "", 0
	}
	var sb strings.Builder
	images := 0
	c.ForEach(func(_, p gjson.Result) bool {
		switch p.Get("type").String() {
		case "text":
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(p.Get("text").String())
		case "image", "document":
			images++
		}
		return true
	})
	return sb.String(), images
}

var cacheControlKey = []byte(`"cache_control"`)

// stripCacheControl removes cache_control from a block and from the parts
// of a tool_result's content.
func stripCacheControl(raw []byte) []byte {
	if !bytes.Contains(raw, cacheControlKey) {
		return raw
	}
	out := raw
	if gjson.GetBytes(out, "cache_control").Exists() {
		out, _ = sjson.DeleteBytes(out, "cache_control")
	}
	if c := gjson.GetBytes(out, "content"); c.IsArray() {
		n := len(c.Array())
		for i := n - 1; i >= 0; i-- {
			p := fmt.Sprintf("content.%d.cache_control", i)
			if gjson.GetBytes(out, p).Exists() {
				out, _ = sjson.DeleteBytes(out, p)
			}
		}
	}
	return out
}

// clientTTL returns "1h" when any client cache_control asks for a one-hour
// time to live, else "" (the default five minutes).
func clientTTL(body []byte, req request) string {
	if !bytes.Contains(body, []byte(`"1h"`)) {
		return ""
	}
	found := ""
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		if found != "" {
			return
		}
		if r.IsObject() {
			if r.Get("cache_control.ttl").String() == "1h" {
				found = "1h"
				return
			}
			if c := r.Get("content"); c.IsArray() {
				walk(c)
			}
			return
		}
		if r.IsArray() {
			r.ForEach(func(_, v gjson.Result) bool { walk(v); return found == "" })
		}
	}
	walk(req.system)
	walk(req.tools)
	req.messages.ForEach(func(_, m gjson.Result) bool {
		walk(m.Get("content"))
		return found == ""
	})
	return found
}
