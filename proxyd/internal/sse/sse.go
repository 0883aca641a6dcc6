// Package sse parses a server-sent event stream incrementally, as bytes pass
// through the proxy. It never blocks or buffers the stream itself: the caller
// copies bytes to the client and hands the same bytes to Parser.Write.
//
// The parser follows the WHATWG event-stream rules that matter for the
// Messages API: lines end in LF, CRLF or CR; "event:" names the event,
// "data:" lines are joined with LF; a blank line dispatches; lines starting
// with ":" are comments; a single space after the colon is dropped.
package sse

import "bytes"

// MaxLine bounds one line (and one event's data). A longer line is dropped,
// so a hostile or broken stream cannot grow memory without limit.
const MaxLine = 8 << 20

// Event is one dispatched event. Data is only valid during the callback.
type Event struct {
	Name string // "message" when the stream gave none
	Data []byte
}

// Parser splits a byte stream into events and calls OnEvent for each.
type Parser struct {
	OnEvent func(Event)

	line     []byte
	name     string
	data     []byte
	hasData  bool
	skipLine bool // the current line overflowed MaxLine
	lastCR   bool // previous chunk ended in CR: a following LF belongs to it
	overflow int  // lines dropped because they were too long
}

// Write feeds the next bytes of the stream. It never fails.
func (p *Parser) Write(b []byte) (int, error) {
	n := len(b)
	if n == 0 {
		return 0, nil
	}
	if p.lastCR && len(b) > 0 && b[0] == '\n' {
		b = b[1:]
	}
	p.lastCR = false
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.appendLine(b)
			break
		}
		p.appendLine(b[:i])
		if b[i] == '\r' {
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			} else if i+1 == len(b) {
				p.lastCR = true
			}
		}
		p.endLine()
		b = b[i+1:]
	}
	return n, nil
}

// Close dispatches nothing: per the spec an incomplete event at the end of
// the stream is discarded. It reports how many over-long lines were dropped.
func (p *Parser) Close() (dropped int) {
	p.line, p.data = nil, nil
	return p.overflow
}

func (p *Parser) appendLine(b []byte) {
	if p.skipLine {
		return
	}
	if len(p.line)+len(b) > MaxLine {
		p.skipLine = true
		p.line = p.line[:0]
		p.overflow++
		return
	}
	p.line = append(p.line, b...)
}

func (p *Parser) endLine() {
	if p.skipLine {
		p.skipLine = false
		return
	}
	line := p.line
	p.line = p.line[:0]
	if len(line) == 0 {
		p.dispatch()
		return
	}
	if line[0] == ':' {
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		p.name = string(value)
	case "data":
		if len(p.data)+len(value)+1 > MaxLine {
			p.overflow++
			return
		}
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	}
}

func (p *Parser) dispatch() {
	if !p.hasData {
		p.name = ""
		return
	}
	name := p.name
	if name == "" {
		name = "message"
	}
	if p.OnEvent != nil {
		p.OnEvent(Event{Name: name, Data: p.data})
	}
	p.name, p.data, p.hasData = "", p.data[:0], false
}
