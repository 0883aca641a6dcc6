// Package jsonedit changes one key of a JSON document in place and leaves
// every other byte alone: key order, indentation, blank lines and even
// comments (which Claude Code's settings.json may not have, but a user may
// have written) survive an edit.
//
// The document is scanned on a "blanked" copy in which comments are replaced
// by spaces of the same length, so offsets found there are offsets in the
// original. Only the bytes of the edited member change.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNotObject reports that a path runs through a value that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// Blank returns src with every // and /* */ comment outside strings replaced
// by spaces (newlines kept), and whether there was any.
func Blank(src []byte) ([]byte, bool) {
	out := bytes.Clone(src)
	found := false
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"':
			i = skipString(out, i) - 1
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			found = true
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			found = true
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out, found
}

// Check reports whether src is one JSON object once comments are blanked.
// Empty or all-space input counts as an empty object.
func Check(src []byte) error {
	blank, _ := Blank(src)
	if len(bytes.TrimSpace(blank)) == 0 {
		return nil
	}
	if !json.Valid(blank) {
		var v any
		err := json.Unmarshal(blank, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid JSON at line %d: %v", lineAt(src, int(se.Offset)), err)
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if bytes.TrimSpace(blank)[0] != '{' {
		return fmt.Errorf("top level: %w", ErrNotObject)
	}
	return nil
}

// Get returns the raw value at path and whether it exists.
func Get(src []byte, path ...string) ([]byte, bool, error) {
	d, err := parse(src)
	if err != nil {
		return nil, false, err
	}
	if d.root < 0 {
		return nil, false, nil
	}
	obj := d.root
	for i, key := range path {
		ms, _, err := d.members(obj)
		if err != nil {
			return nil, false, err
		}
		m, ok := find(ms, key)
		if !ok {
			return nil, false, nil
		}
		if i == len(path)-1 {
			return src[m.valStart:m.valEnd], true, nil
		}
		if d.blank[m.valStart] != '{' {
			return nil, false, fmt.Errorf("%s: %w", strings.Join(path[:i+1], "."), ErrNotObject)
		}
		obj = m.valStart
	}
	return src[obj:d.end], true, nil
}

// GetString returns the string at path, or "" when it is absent or not a
// string.
func GetString(src []byte, path ...string) string {
	raw, ok, err := Get(src, path...)
	if err != nil || !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// Set makes path hold value (encoded with encoding/json), creating missing
// objects on the way, and returns the edited document. Only the member's own
// bytes change; a new member is laid out like its siblings.
func Set(src []byte, value any, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("jsonedit: empty path")
	}
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	d, err := parse(src)
	if err != nil {
		return nil, err
	}
	obj := d.root
	for i, key := range path {
		ms, closeAt, err := d.members(obj)
		if err != nil {
			return nil, err
		}
		m, ok := find(ms, key)
		if !ok {
			// Build the rest of the path as nested objects and insert it here.
			var v any = value
			for j := len(path) - 1; j > i; j-- {
				v = map[string]any{path[j]: v}
			}
			return d.insert(obj, ms, closeAt, key, v)
		}
		if i == len(path)-1 {
			enc, err := d.encode(value, d.indentOf(m.keyStart))
			if err != nil {
				return nil, err
			}
			return splice(src, m.valStart, m.valEnd, enc), nil
		}
		if d.blank[m.valStart] != '{' {
			return nil, fmt.Errorf("%s: %w", strings.Join(path[:i+1], "."), ErrNotObject)
		}
		obj = m.valStart
	}
	panic("unreachable")
}

// Delete removes the member at path (a missing one is not an error) and
// returns the edited document.
func Delete(src []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("jsonedit: empty path")
	}
	d, err := parse(src)
	if err != nil {
		return nil, err
	}
	if d.root < 0 {
		return src, nil
	}
	obj := d.root
	for i, key := range path {
		ms, closeAt, err := d.members(obj)
		if err != nil {
			return nil, err
		}
		k := -1
		for j := range ms {
			if ms[j].key == key {
				k = j
			}
		}
		if k < 0 {
			return src, nil
		}
		m := ms[k]
		if i < len(path)-1 {
			if d.blank[m.valStart] != '{' {
				return src, nil
			}
			obj = m.valStart
			continue
		}
		switch {
		case len(ms) == 1:
			return splice(src, obj+1, closeAt, nil), nil
		case k > 0:
			return splice(src, ms[k-1].valEnd, m.valEnd, nil), nil
		default:
			return splice(src, m.keyStart, ms[1].keyStart, nil), nil
		}
	}
	return src, nil
}

type doc struct {
	src, blank []byte
	root, end  int // offsets of the top-level '{' and just past its '}'; root -1 if empty
	multiline  bool
}

type member struct {
	key              string
	keyStart, colon  int
	valStart, valEnd int
}

func parse(src []byte) (*doc, error) {
	if err := Check(src); err != nil {
		return nil, err
	}
	blank, _ := Blank(src)
	d := &doc{src: src, blank: blank, root: -1}
	i := skipSpace(blank, 0)
	if i == len(blank) {
		return d, nil
	}
	d.root = i
	d.end = skipValue(blank, i)
	d.multiline = bytes.IndexByte(blank[d.root:d.end], '\n') >= 0
	return d, nil
}

// members lists the members of the object starting at open and returns the
// offset of its closing brace. The document is valid JSON, so the scan
// needs no error recovery.
func (d *doc) members(open int) ([]member, int, error) {
	b := d.blank
	if open < 0 || b[open] != '{' {
		return nil, 0, ErrNotObject
	}
	var ms []member
	i := skipSpace(b, open+1)
	for b[i] != '}' {
		ks := i
		ke := skipString(b, i)
		var key string
		if err := json.Unmarshal(b[ks:ke], &key); err != nil {
			return nil, 0, fmt.Errorf("decode key at %d: %w", ks, err)
		}
		colon := skipSpace(b, ke)
		vs := skipSpace(b, colon+1)
		ve := skipValue(b, vs)
		ms = append(ms, member{key: key, keyStart: ks, colon: colon, valStart: vs, valEnd: ve})
		i = skipSpace(b, ve)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return ms, i, nil
}

func find(ms []member, key string) (member, bool) {
	// JSON allows duplicate keys; the last one wins in encoding/json and in
	// Claude Code, so the last one is the one to edit.
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].key == key {
			return ms[j], true
		}
	}
	return member{}, false
}

// insert adds key: v to the object at open, after its last member.
func (d *doc) insert(open int, ms []member, closeAt int, key string, v any) ([]byte, error) {
	k, _ := json.Marshal(key)
	if len(ms) > 0 {
		first := ms[0]
		sep := ":"
		if first.valStart > first.colon+1 {
			sep = ": "
		}
		indent := d.indentOf(first.keyStart)
		enc, err := d.encode(v, indent)
		if err != nil {
			return nil, err
		}
		lead := ","
		if bytes.IndexByte(d.blank[open:first.keyStart], '\n') >= 0 {
			lead = ",\n" + indent
		}
		ins := append([]byte(lead), k...)
		ins = append(append(ins, sep...), enc...)
		last := ms[len(ms)-1].valEnd
		return splice(d.src, last, last, ins), nil
	}
	// An empty object has no layout of its own to follow: a compact document
	// stays compact, but an empty top level (a new file) is laid out readably.
	if !d.multiline && open != d.root {
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		ins := append(append(k, ':'), enc...)
		return splice(d.src, open+1, closeAt, ins), nil
	}
	outer := d.indentOf(open)
	inner := outer + d.unit()
	enc, err := d.encode(v, inner)
	if err != nil {
		return nil, err
	}
	ins := []byte("\n" + inner)
	ins = append(append(append(ins, k...), ": "...), enc...)
	ins = append(ins, "\n"+outer...)
	return splice(d.src, open+1, closeAt, ins), nil
}

// encode marshals v laid out for a member whose line starts with indent.
func (d *doc) encode(v any, indent string) ([]byte, error) {
	if !d.multiline && !d.emptyRoot() {
		return json.Marshal(v)
	}
	return json.MarshalIndent(v, indent, d.unit())
}

// unit guesses the document's indentation step from its first indented line.
func (d *doc) unit() string {
	for _, line := range bytes.Split(d.blank, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) {
			return string(line[:len(line)-len(t)])
		}
	}
	return "  "
}

// indentOf is the whitespace between the start of the line holding offset
// and the line's first non-space byte.
func (d *doc) indentOf(off int) string {
	start := bytes.LastIndexByte(d.blank[:off], '\n') + 1
	end := start
	for end < off && (d.blank[end] == ' ' || d.blank[end] == '\t') {
		end++
	}
	return string(d.blank[start:end])
}

func (d *doc) emptyRoot() bool {
	return d.root >= 0 && skipSpace(d.blank, d.root+1) < len(d.blank) && d.blank[skipSpace(d.blank, d.root+1)] == '}'
}

func splice(src []byte, from, to int, ins []byte) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(ins))
	out = append(out, src[:from]...)
	out = append(out, ins...)
	return append(out, src[to:]...)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the offset just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
			j++
		}
		return j
	}
}

func lineAt(src []byte, off int) int {
	if off > len(src) {
		off = len(src)
	}
	return bytes.Count(src[:off], []byte("\n")) + 1
}
