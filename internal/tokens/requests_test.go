package tokens

// The calibration's counting of whole Messages API request bodies: what the
// model reads of system, messages and tools, and the structure around it.
// No binary needs it (the proxy measures requests with count_tokens), so it
// lives with the tests that fit and measure the coefficients.

import (
	"bytes"
	"unicode/utf8"
)

// CountJSON returns the features of a Messages API request body; ok is false
// when raw is not a well-formed JSON object.
func CountJSON(raw []byte) (f Features, ok bool) {
	s := scanner{b: raw}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return Features{}, false
	}
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "system":
			return s.text()
		case "messages":
			if s.peek() == '[' {
				return s.array(func() bool { return s.message() })
			}
		case "tools":
			if s.peek() == '[' {
				return s.array(func() bool { return s.tool() })
			}
		}
		return s.skip()
	})
	s.ws()
	if !ok || s.i != len(s.b) {
		return Features{}, false
	}
	s.c.f.Requests = 1
	return s.c.done(), true
}

// maxDepth bounds nesting; deeper bodies are estimated as plain text.
const maxDepth = 256

type scanner struct {
	b     []byte
	i     int
	depth int
	c     counter
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// object calls fn for each key with the scanner at the key's value; fn must
// consume the value.
func (s *scanner) object(fn func(key []byte) bool) bool {
	if s.peek() != '{' || s.depth >= maxDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		start := s.i + 1
		if !s.str(false) {
			return false
		}
		key := s.b[start : s.i-1]
		if s.peek() != ':' {
			return false
		}
		s.i++
		if !fn(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array calls fn with the scanner at each element.
func (s *scanner) array(fn func() bool) bool {
	if s.peek() != '[' || s.depth >= maxDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !fn() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// text counts a string, or an array of strings and blocks.
func (s *scanner) text() bool {
	switch s.peek() {
	case '"':
		return s.str(true)
	case '[':
		return s.array(func() bool {
			switch s.peek() {
			case '"':
				return s.str(true)
			case '{':
				return s.block()
			}
			return s.skip()
		})
	}
	return s.skip()
}

func (s *scanner) message() bool {
	if s.peek() != '{' {
		return s.skip()
	}
	s.c.f.Messages++
	return s.object(func(key []byte) bool {
		if string(key) == "content" {
			return s.text()
		}
		return s.skip()
	})
}

func (s *scanner) block() bool {
	s.c.f.Blocks++
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "text", "thinking", "name":
			return s.text()
		case "content":
			return s.text()
		case "input":
			return s.raw()
		case "type":
			if s.peek() == '"' {
				start := s.i
				if !s.str(false) {
					return false
				}
				switch string(s.b[start:s.i]) {
				case `"image"`, `"document"`:
					s.c.f.Images++
				}
				return true
			}
		}
		return s.skip()
	})
}

func (s *scanner) tool() bool {
	if s.peek() != '{' {
		return s.skip()
	}
	s.c.f.Tools++
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "name", "description":
			return s.text()
		case "input_schema":
			return s.raw()
		}
		return s.skip()
	})
}

// raw counts a value's JSON text as the model reads it.
func (s *scanner) raw() bool {
	s.ws()
	start := s.i
	if !s.skip() {
		return false
	}
	s.c.boundary()
	s.c.add(s.b[start:s.i])
	s.c.boundary()
	return true
}

// skip consumes one value without counting it.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str(false)
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(func() bool { return s.skip() })
	case c == '-' || (c >= '0' && c <= '9'):
		for s.i < len(s.b) && bytes.IndexByte([]byte("+-.eE0123456789"), s.b[s.i]) >= 0 {
			s.i++
		}
		return true
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// str consumes a string at s.i, feeding its unescaped bytes to the counter
// when count is set.
func (s *scanner) str(count bool) bool {
	if s.peek() != '"' {
		return false
	}
	s.i++
	if count {
		s.c.boundary()
	}
	for s.i < len(s.b) {
		x := s.b[s.i]
		switch {
		case x == '"':
			s.i++
			if count {
				s.c.boundary()
			}
			return true
		case x == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			e := s.b[s.i+1]
			s.i += 2
			var cl uint8
			switch e {
			case 'n':
				cl = clNewline
			case 't', 'r':
				cl = clSpace
			case '"', '\\', '/', 'b', 'f':
				cl = clPunct
			case 'u':
				if s.i+4 > len(s.b) {
					return false
				}
				r := hex4(s.b[s.i : s.i+4])
				if r < 0 {
					return false
				}
				s.i += 4
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					continue // low surrogate: its high half was counted
				case r < utf8.RuneSelf:
					cl = class[r]
				default:
					cl = clHigh
				}
			default:
				return false
			}
			if count {
				s.c.addByte(cl)
			}
		default:
			j := s.i + 1
			for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' {
				j++
			}
			if count {
				s.c.add(s.b[s.i:j])
			}
			s.i = j
		}
	}
	return false
}

func hex4(b []byte) rune {
	var r rune
	for _, x := range b {
		r <<= 4
		switch {
		case x >= '0' && x <= '9':
			r |= rune(x - '0')
		case x >= 'a' && x <= 'f':
			r |= rune(x - 'a' + 10)
		case x >= 'A' && x <= 'F':
			r |= rune(x - 'A' + 10)
		default:
			return -1
		}
	}
	return r
}

// Add accumulates o into f.
func (f *Features) Add(o Features) {
	f.Words += o.Words
	f.Letters += o.Letters
	f.Humps += o.Humps
	f.Digits += o.Digits
	f.Punct += o.Punct
	f.Newlines += o.Newlines
	f.Indents += o.Indents
	f.NonASCII += o.NonASCII
	f.Messages += o.Messages
	f.Blocks += o.Blocks
	f.Tools += o.Tools
	f.Requests += o.Requests
	f.Images += o.Images
}

// CoefficientsFrom is the inverse of Coefficients.Vector.
func CoefficientsFrom(v []float64) Coefficients {
	return Coefficients{Word: v[0], Letter: v[1], Hump: v[2], Digit: v[3], Punct: v[4],
		Newline: v[5], Indent: v[6], NonASCII: v[7], Message: v[8], Block: v[9],
		Tool: v[10], Request: v[11], Image: v[12]}
}

// Count returns the features of b, for calibration and diagnostics.
func Count(b []byte) Features {
	var c counter
	c.add(b)
	return c.done()
}

// boundary ends the current word and space run, as between two strings.
func (c *counter) boundary() {
	c.inWord = false
	c.spaceRun = 0
	c.prev = clPunct
}

func (c *counter) add(b []byte)       { feed(c, b) }
func (c *counter) addString(s string) { feed(c, s) }
