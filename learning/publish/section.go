package publish

import (
	"bytes"
	"errors"
	"fmt"
)

// The markers around synaxi's managed section in another agent's
// instruction file. Each sits alone on its line; the text between them is
// synaxi's, everything outside them is never touched.
const (
	BeginMarker = "<!-- synaxi:guidance:begin (managed by synaxi; edit outside these markers) -->"
	EndMarker   = "<!-- synaxi:guidance:end -->"
)

// beginPrefix and endPrefix find the marker lines: a begin line whose note
// was edited still counts.
var (
	beginPrefix = []byte("<!-- synaxi:guidance:begin")
	endPrefix   = []byte("<!-- synaxi:guidance:end")
)

// ErrMarkers reports marker lines synaxi cannot pair up safely.
var ErrMarkers = errors.New("synaxi's guidance markers are unbalanced")

// span is the byte range of a managed section: from the start of the begin
// line to the end of the end line, its line break included when it has one.
type span struct {
	start, end int
	// body is the range strictly between the two marker lines.
	bodyStart, bodyEnd int
}

// eol is the line break the file already uses: CRLF if its first line break
// is one, else LF.
func eol(src []byte) string {
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// findSection locates the managed section. found is false when there are no
// marker lines at all; an unpaired, repeated or reversed marker is
// ErrMarkers, naming the line.
func findSection(src []byte) (sp span, found bool, err error) {
	begin, end := -1, -1
	var beginLine, endLine, beginNext, endNext int
	line := 0
	for off := 0; off < len(src); {
		line++
		next := len(src)
		if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		t := bytes.TrimSpace(src[off:next])
		switch {
		case bytes.HasPrefix(t, beginPrefix):
			if begin >= 0 {
				return span{}, false, fmt.Errorf("%w: a second begin marker on line %d (the first is on line %d); keep one pair", ErrMarkers, line, beginLine)
			}
			if end >= 0 {
				return span{}, false, fmt.Errorf("%w: the end marker on line %d comes before the begin marker on line %d", ErrMarkers, endLine, line)
			}
			begin, beginLine, beginNext = off, line, next
		case bytes.HasPrefix(t, endPrefix):
			if end >= 0 {
				return span{}, false, fmt.Errorf("%w: a second end marker on line %d (the first is on line %d); keep one pair", ErrMarkers, line, endLine)
			}
			end, endLine, endNext = off, line, next
		}
		off = next
	}
	switch {
	case begin < 0 && end < 0:
		return span{}, false, nil
	case begin < 0:
		return span{}, false, fmt.Errorf("%w: an end marker on line %d without a begin marker; remove it or add %q above it", ErrMarkers, endLine, BeginMarker)
	case end < 0:
		return span{}, false, fmt.Errorf("%w: a begin marker on line %d without an end marker; remove it or add %q below it", ErrMarkers, beginLine, EndMarker)
	}
	return span{start: begin, end: endNext, bodyStart: beginNext, bodyEnd: end}, true, nil
}

// sectionBytes is a whole managed section around body, in the file's line
// breaks. body's own line breaks are normalised; the section ends with a
// line break when final is true.
func sectionBytes(body, nl string, final bool) []byte {
	var b bytes.Buffer
	b.WriteString(BeginMarker)
	b.WriteString(nl)
	for _, l := range splitLines(body) {
		b.WriteString(l)
		b.WriteString(nl)
	}
	b.WriteString(EndMarker)
	if final {
		b.WriteString(nl)
	}
	return b.Bytes()
}

// splitLines splits text into lines without their breaks (LF or CRLF),
// dropping one trailing empty line.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := bytes.IndexByte([]byte(s), '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		l := s[:i]
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		out = append(out, l)
		s = s[i+1:]
	}
	return out
}

// replaceSection rewrites the body of the existing section and leaves every
// byte outside it as it was.
func replaceSection(src []byte, sp span, body string) []byte {
	final := sp.end > 0 && src[sp.end-1] == '\n'
	out := make([]byte, 0, len(src)+len(body))
	out = append(out, src[:sp.start]...)
	out = append(out, sectionBytes(body, eol(src), final)...)
	return append(out, src[sp.end:]...)
}

// appendSection adds a section at the end of src and returns the new text
// and the separator it put between the old text and the section (an empty
// file gets none; otherwise a blank line, after ending an unterminated last
// line), which removeSection needs to restore src byte for byte.
func appendSection(src []byte, body string) (out []byte, sep string) {
	nl := eol(src)
	switch {
	case len(src) == 0:
	case src[len(src)-1] == '\n':
		sep = nl
	default:
		sep = nl + nl
	}
	out = append(append(append([]byte(nil), src...), sep...), sectionBytes(body, nl, true)...)
	return out, sep
}

// removeSection cuts the section out. When sep is what appendSection put
// before it and the section ends the file, sep goes too, so an appended
// section leaves no trace.
func removeSection(src []byte, sp span, sep string) []byte {
	start := sp.start
	if sep != "" && sp.end == len(src) && bytes.HasSuffix(src[:start], []byte(sep)) {
		start -= len(sep)
	}
	return append(append([]byte(nil), src[:start]...), src[sp.end:]...)
}

// sectionBody is the text between the markers with LF line breaks.
func sectionBody(src []byte, sp span) string {
	return string(bytes.ReplaceAll(src[sp.bodyStart:sp.bodyEnd], []byte("\r\n"), []byte("\n")))
}
