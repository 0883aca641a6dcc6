package projection

import (
	"strings"
	"sync"

	"github.com/valyala/fastjson"
)

// The fast path reads the messages that carry a conversation's bulk with
// fastjson instead of gjson. gjson finds a value's end and decodes a
// string a byte at a time, and reading a message's blocks with it scans
// their bytes four times (the message's members, the content array, each
// block, each string). fastjson parses a message once and decodes a
// string in runs between escapes. A block's fields keep pointing at the
// request's own bytes: fastjson writes back exactly what it read when the
// JSON is compact (no space between tokens, no escape in a key), so a
// member written back and found verbatim at the next position of the
// message locates its bytes there. Anything else goes to the general path
// (slowMessage, slowBlock), which reads every message; FuzzFastMessage
// holds the two equal wherever the fast path answers.

// scratch is one goroutine's fast-path state.
type scratch struct {
	p   fastjson.Parser
	buf []byte
	raw string // the message being read
	off int    // how far raw has been matched
	ok  bool   // every match so far held
	// The message's members, its content's elements and their members,
	// reused from message to message.
	top, elems, sub []member
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// release forgets the message read last, so that a pooled scratch does
// not keep the request alive.
func (s *scratch) release() {
	s.raw = ""
	clear(s.top)
	clear(s.elems)
	clear(s.sub)
}

// expect matches the literal lit at the current position.
func (s *scratch) expect(lit string) {
	if s.ok && strings.HasPrefix(s.raw[s.off:], lit) {
		s.off += len(lit)
		return
	}
	s.ok = false
}

// value matches v, as fastjson writes it, at the current position and
// returns the bytes it occupies in raw.
func (s *scratch) value(v *fastjson.Value) string {
	if !s.ok {
		return ""
	}
	s.buf = v.MarshalTo(s.buf[:0])
	end := s.off + len(s.buf)
	if end > len(s.raw) || s.raw[s.off:end] != string(s.buf) {
		s.ok = false
		return ""
	}
	s.off = end
	return s.raw[end-len(s.buf) : end]
}

// member is one member of an object (or one element of an array): its
// key, its value, the value's bytes in the message and, for the elements
// of the array read element by element, their own members.
type member struct {
	key     string
	v       *fastjson.Value
	raw     string
	at      int // where raw starts in the message
	members []member
}

// object matches o at the current position and appends its members to
// ms in order. The first member named arr (if not "") whose value is an
// array is matched element by element into s.elems, and each element that
// is an object member by member into s.sub. Nothing is decoded here:
// fastjson decodes a string in place the first time its type is asked,
// so the kind of a value is read from its first byte in raw.
func (s *scratch) object(o *fastjson.Object, arr string, ms []member) []member {
	s.expect("{")
	first, seen := true, false
	o.Visit(func(kb []byte, v *fastjson.Value) {
		if !s.ok {
			return
		}
		// A view of the parser's copy, valid until its next Parse; the
		// members do not outlive the message's reading.
		k := stringOf(kb)
		if !first {
			s.expect(",")
		}
		first = false
		s.expect(`"`)
		s.expect(k) // an escaped key does not match: o.Visit decoded it
		s.expect(`":`)
		m := member{key: k, v: v, at: s.off}
		if s.ok && arr != "" && !seen && k == arr && s.raw[s.off] == '[' {
			seen = true
			start := s.off
			s.expect("[")
			a, _ := v.Array()
			for j, e := range a {
				if j > 0 {
					s.expect(",")
				}
				s.elems = append(s.elems, s.element(e))
			}
			s.expect("]")
			if s.ok {
				m.raw = s.raw[start:s.off]
			}
		} else {
			m.raw = s.value(v)
		}
		ms = append(ms, m)
	})
	s.expect("}")
	return ms
}

// element matches one array element, an object member by member.
func (s *scratch) element(e *fastjson.Value) member {
	start := s.off
	if !s.ok || s.raw[s.off] != '{' {
		return member{v: e, raw: s.value(e), at: start}
	}
	o, _ := e.Object()
	from := len(s.sub)
	s.sub = s.object(o, "", s.sub)
	if !s.ok {
		return member{}
	}
	// A later append may move s.sub; this view keeps the members it has.
	return member{v: e, raw: s.raw[start:s.off], at: start, members: s.sub[from:len(s.sub):len(s.sub)]}
}

// message reads raw as slowMessage would, or reports false.
func (s *scratch) message(raw string) (message, bool) {
	if strings.Contains(raw, `"cache_control"`) || hasSurrogateEscape(raw) {
		return message{}, false
	}
	v, err := s.p.Parse(raw)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return message{}, false
	}
	o, _ := v.Object()
	s.raw, s.off, s.ok = raw, 0, true
	s.elems, s.sub = s.elems[:0], s.sub[:0]
	s.top = s.object(o, "content", s.top[:0])
	members, elems := s.top, s.elems
	if !s.ok || s.off != len(raw) {
		return message{}, false
	}
	// Every byte is located; now decode.
	var msg message
	var content *member
	role := false
	for i := range members {
		m := &members[i]
		switch m.key {
		case "content":
			if content == nil {
				content = m
			}
		case "role":
			if !role {
				role = true
				r, ok := fastString(m.v)
				if !ok || r == "" {
					return message{}, false
				}
				msg.role = r
			}
		default:
			msg.extra = append(msg.extra, `,"`...)
			msg.extra = append(msg.extra, m.key...)
			msg.extra = append(msg.extra, `":`...)
			msg.extra = append(msg.extra, m.raw...)
		}
	}
	if !role || content == nil {
		return message{}, false
	}
	switch content.raw[0] {
	case '"':
		t, _ := fastString(content.v)
		msg.blocks = []block{textBlock(t)}
		return msg, true
	case '[':
	default:
		return message{}, false
	}
	if len(elems) > 0 {
		msg.blocks = make([]block, 0, len(elems))
	}
	for _, e := range elems {
		if e.raw[0] != '{' {
			return message{}, false // slowMessage names the error
		}
		b, ok := fastBlock(e)
		if !ok {
			b = slowBlock(bytesOf(e.raw), e.raw)
		}
		msg.blocks = append(msg.blocks, b)
	}
	return msg, true
}

// fastBlock reads a text block, or a tool_result whose content is absent
// or a string, as slowBlock would, or reports false.
func fastBlock(e member) (block, bool) {
	field := func(key string) *member {
		for i := range e.members {
			if e.members[i].key == key {
				return &e.members[i] // the first, as gjson's Get finds it
			}
		}
		return nil
	}
	str := func(key string) (string, bool) {
		m := field(key)
		if m == nil {
			return "", true // gjson reads a missing field as ""
		}
		if m.raw[0] != '"' {
			return "", false
		}
		return fastString(m.v)
	}
	typ, ok := str("type")
	if !ok {
		return block{}, false
	}
	b := block{raw: bytesOf(e.raw), typ: typ}
	switch typ {
	case "text":
		b.text, ok = str("text")
		return b, ok
	case "tool_result":
		if b.toolUseID, ok = str("tool_use_id"); !ok {
			return block{}, false
		}
		if m := field("is_error"); m != nil {
			switch m.raw {
			case "true":
				b.isError = true
			case "false":
			default:
				return block{}, false
			}
		}
		if m := field("content"); m != nil {
			if m.raw[0] != '"' {
				return block{}, false
			}
			b.content, b.contentAt = bytesOf(m.raw), m.at-e.at
			b.text, ok = fastString(m.v)
		}
		return b, ok
	}
	return block{}, false
}

// fastString returns a string value's text.
func fastString(v *fastjson.Value) (string, bool) {
	b, err := v.StringBytes()
	if err != nil {
		return "", false
	}
	return string(b), true
}

// hasSurrogateEscape reports whether s may hold a \u escape of a UTF-16
// surrogate (\ud800 to \udfff), which fastjson and gjson decode
// differently when it is unpaired; it errs towards yes.
func hasSurrogateEscape(s string) bool {
	for {
		i := strings.Index(s, `\u`)
		if i < 0 || i+3 >= len(s) {
			return i >= 0
		}
		if c, d := s[i+2], s[i+3]; (c == 'd' || c == 'D') && strings.IndexByte("89abcdefABCDEF", d) >= 0 {
			return true
		}
		s = s[i+2:]
	}
}
