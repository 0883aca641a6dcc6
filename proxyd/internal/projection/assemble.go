package projection

import (
	"bytes"
)

// servedSize is about the size of the served body: its system text,
// tools and messages, and room for the client's other fields and the
// JSON around them.
func servedSize(sys []sysBlock, tools [][]byte, msgs []served) int {
	n := 4096
	for _, s := range sys {
		n += len(s.text) + 64
	}
	for _, t := range tools {
		n += len(t) + 1
	}
	for _, m := range msgs {
		n += len(m.extra) + 32
		for _, b := range m.blocks {
			n += len(b) + 48
		}
	}
	return n
}

// marks are the cache_control objects the breakpoints of a projection
// carry. What the engine never rewrites — the system prompt and the goal,
// the messages up to goalEnd — keeps the client's time to live; what its
// rebuilds replace — the generations and the tail — is written at five
// minutes whatever the client asks, since a rebuild writes it again
// within minutes and an hour's write costs 2× the input price against
// 1.25×. Every one-hour mark therefore precedes every five-minute one, as
// the API requires.
type marks struct {
	stable, fresh string // cache_control JSON
	goalEnd       int    // the goal's last message
}

const ephemeral = `{"type":"ephemeral"}`

// newMarks returns the marks of a projection for the client's time to
// live ttl ("" or "1h") whose goal ends at message goalEnd.
func newMarks(ttl string, goalEnd int) marks {
	m := marks{stable: ephemeral, fresh: ephemeral, goalEnd: goalEnd}
	if ttl != "" {
		m.stable = `{"type":"ephemeral","ttl":"` + ttl + `"}`
	}
	return m
}

// at returns the mark of a breakpoint in message i.
func (m marks) at(i int) string {
	if i <= m.goalEnd {
		return m.stable
	}
	return m.fresh
}

// assemble writes the served body: the client's top-level fields in their
// order with system, tools and messages replaced.
func assemble(req request, size int, sys []sysBlock, tools [][]byte, msgs []served, cc marks) []byte {
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	for _, field := range req.top {
		k, v := field.Key, field.Value
		switch k.Str {
		case "system":
			sep()
			writeSystem(&b, sys, cc.stable)
		case "tools":
			if len(tools) == 0 {
				continue // never send an empty tools list
			}
			sep()
			b.WriteString(`"tools":[`)
			b.Write(bytes.Join(tools, []byte(",")))
			b.WriteByte(']')
		case "tool_choice":
			if len(tools) == 0 {
				continue
			}
			sep()
			b.WriteString(k.Raw + ":" + v.Raw)
		case "messages":
			sep()
			b.WriteString(`"messages":[`)
			for i, m := range msgs {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"role":`)
				b.Write(jsonString(m.role))
				if len(m.blocks) == 0 {
					b.WriteString(`,"content":""`)
					b.Write(m.extra)
					b.WriteByte('}')
					continue
				}
				b.WriteString(`,"content":[`)
				for j, blk := range m.blocks {
					if j > 0 {
						b.WriteByte(',')
					}
					if m.bp[j] {
						b.Write(blk[:len(blk)-1])
						b.WriteString(`,"cache_control":`)
						b.WriteString(cc.at(i))
						b.WriteByte('}')
					} else {
						b.Write(blk)
					}
				}
				b.WriteByte(']')
				b.Write(m.extra)
				b.WriteByte('}')
			}
			b.WriteByte(']')
		case "cache_control":
			// Top-level automatic caching would take a fifth slot.
		default:
			sep()
			b.WriteString(k.Raw + ":" + v.Raw)
		}
	}
	if !req.system.Exists() {
		// The engine's system prompt is always served (the worker's
		// identity and contract, or the fold notice).
		sep()
		writeSystem(&b, sys, cc.stable)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeSystem writes the "system" field with its breakpoint.
func writeSystem(b *bytes.Buffer, sys []sysBlock, cc string) {
	b.WriteString(`"system":[`)
	for i, s := range sys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"text","text":`)
		b.Write(jsonString(s.text))
		if s.bp {
			b.WriteString(`,"cache_control":` + cc)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

// withTools writes the client's body with only its tools replaced: every
// other top-level field as sent, in the client's order.
func withTools(req request, size int, tools [][]byte) []byte {
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('{')
	for i, field := range req.top {
		if i > 0 {
			b.WriteByte(',')
		}
		if field.Key.Str == "tools" {
			b.WriteString(field.Key.Raw + `:[`)
			b.Write(bytes.Join(tools, []byte(",")))
			b.WriteByte(']')
			continue
		}
		b.WriteString(field.Key.Raw + ":" + field.Value.Raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}
