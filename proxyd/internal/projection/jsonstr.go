package projection

import "unicode/utf8"

// jsonString encodes s as a JSON string without HTML escaping, byte for
// byte as encoding/json's Encoder with SetEscapeHTML(false) does (the
// differential fuzz test holds it to that), so text re-encoded here keeps
// the bytes the engine served before. It appends instead of going through
// an Encoder: the fold re-encodes every folded result, and the encoder's
// buffer and reflection were a tenth of a cold fold.
func jsonString(s string) []byte {
	return appendJSONString(make([]byte, 0, len(s)+len(s)/8+2), s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s to dst as a JSON string: quotes, backslashes
// and control characters escaped (\b \f \n \r \t, else \u00XX), invalid
// UTF-8 replaced by \ufffd, and U+2028 and U+2029 escaped, as
// encoding/json does; everything else verbatim.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// openToolResultJSON is a tool_result block's JSON up to its content:
// {"type":"tool_result","tool_use_id":ID,"content":CONTENT, without the
// closing brace, so a caller can add a field. The id is written as a JSON
// string (not Go's %q, which differs outside printable ASCII); content is
// raw JSON.
func openToolResultJSON(id string, content []byte) []byte {
	out := make([]byte, 0, 48+len(id)+len(content))
	out = append(out, `{"type":"tool_result","tool_use_id":`...)
	out = appendJSONString(out, id)
	out = append(out, `,"content":`...)
	return append(out, content...)
}

// toolResultJSON is a whole tool_result block with the given id and raw content.
func toolResultJSON(id string, content []byte) []byte {
	return append(openToolResultJSON(id, content), '}')
}

// toolUseJSON is a tool_use block with the given id and name and raw input JSON.
func toolUseJSON(id, name string, input []byte) []byte {
	out := make([]byte, 0, 40+len(id)+len(name)+len(input))
	out = append(out, `{"type":"tool_use","id":`...)
	out = appendJSONString(out, id)
	out = append(out, `,"name":`...)
	out = appendJSONString(out, name)
	out = append(out, `,"input":`...)
	out = append(out, input...)
	return append(out, '}')
}
