// Package settings reads and edits Claude Code's settings.json with gjson
// and sjson, changing only the bytes of the member it edits.
//
// Invariants: a document is checked once, when it is read, to be one JSON
// object (or empty); an edit never touches another member's bytes, so key
// order, indentation and every untouched key survive byte for byte; a new
// member is laid out like its siblings (same indentation, same separator);
// a key that appears twice on an edited path is refused rather than guessed
// at, because Claude Code reads the last one and gjson the first.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ErrNotObject reports that a path runs through a value that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// SyntaxError reports a settings file that is not one JSON object.
type SyntaxError struct {
	Path      string
	Line, Col int // 1-based; Col counts characters
	Msg       string
	Hint      string // how to fix it
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s; %s", e.Path, e.Line, e.Col, e.Msg, e.Hint)
}

// Doc is one settings file's bytes, known to hold one JSON object or
// nothing at all.
type Doc struct {
	path string
	src  []byte
}

// Read reads and checks the settings file at path. A missing file is an
// empty document.
func Read(path string) (*Doc, error) {
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return Parse(path, src)
}

// Parse checks src, read from path (named in errors).
func Parse(path string, src []byte) (*Doc, error) {
	d := &Doc{path: path, src: src}
	if d.empty() {
		return d, nil
	}
	if !json.Valid(src) {
		var v any
		err := json.Unmarshal(src, &v)
		var se *json.SyntaxError
		off := len(src)
		msg := "invalid JSON"
		if errors.As(err, &se) {
			off, msg = int(se.Offset), se.Error()
		}
		return nil, syntaxError(path, src, off, msg)
	}
	if r := d.root(); !r.IsObject() {
		return nil, syntaxError(path, src, r.Index+1, "the top level is not a JSON object")
	}
	return d, nil
}

func syntaxError(path string, src []byte, off int, msg string) *SyntaxError {
	// encoding/json's offset is just past the byte it stopped at, or the
	// length of the input when it ran out.
	at := min(max(off-1, 0), len(src))
	if strings.HasPrefix(msg, "unexpected end") {
		at = len(src)
	}
	lineStart := bytes.LastIndexByte(src[:at], '\n') + 1
	e := &SyntaxError{Path: path, Line: bytes.Count(src[:at], []byte("\n")) + 1,
		Col: utf8.RuneCount(src[lineStart:at]) + 1, Msg: msg,
		Hint: "fix it there by hand (Claude Code cannot read it either)"}
	if rest := src[at:]; bytes.HasPrefix(rest, []byte("//")) || bytes.HasPrefix(rest, []byte("/*")) {
		e.Hint = "remove the comments: settings.json is plain JSON and Claude Code rejects comments"
	}
	return e
}

// Bytes returns the document as it is now.
func (d *Doc) Bytes() []byte { return d.src }

func (d *Doc) empty() bool { return len(bytes.TrimSpace(d.src)) == 0 }

// root is the top-level value with Index set to its offset.
func (d *Doc) root() gjson.Result {
	r := gjson.ParseBytes(d.src)
	r.Index = len(d.src) - len(bytes.TrimLeft(d.src, " \t\r\n"))
	return r
}

type member struct{ key, val gjson.Result } // Index fields are offsets in src

func (m member) end() int { return m.val.Index + len(m.val.Raw) }

func members(obj gjson.Result) []member {
	var ms []member
	obj.ForEach(func(k, v gjson.Result) bool {
		ms = append(ms, member{k, v})
		return true
	})
	return ms
}

// step is where a lookup of a path ended.
type step struct {
	obj   gjson.Result // the object the last key found (or missing) belongs in
	m     member       // the member found, when found
	depth int          // how many keys were found
}

// walk follows keys as far as they exist.
func (d *Doc) walk(keys []string) (step, error) {
	if len(keys) == 0 {
		return step{}, errors.New("settings: empty key path")
	}
	s := step{obj: d.root()}
	if d.empty() {
		return s, nil
	}
	for i, key := range keys {
		found := 0
		for _, m := range members(s.obj) {
			if m.key.Str == key {
				s.m = m
				found++
			}
		}
		switch {
		case found == 0:
			return s, nil
		case found > 1:
			return s, fmt.Errorf("%s: key %q appears %d times in %s; Claude Code uses the last one: remove the others", d.path, key, found, dotted(keys[:i]))
		}
		s.depth = i + 1
		if i < len(keys)-1 {
			if !s.m.val.IsObject() {
				return s, fmt.Errorf("%s: %s: %w", d.path, dotted(keys[:i+1]), ErrNotObject)
			}
			s.obj = s.m.val
		}
	}
	return s, nil
}

func dotted(keys []string) string {
	if len(keys) == 0 {
		return "the top level"
	}
	return strings.Join(keys, ".")
}

// Get returns the raw value at keys and whether it is there.
func (d *Doc) Get(keys ...string) ([]byte, bool, error) {
	s, err := d.walk(keys)
	if err != nil || s.depth < len(keys) {
		return nil, false, err
	}
	return []byte(s.m.val.Raw), true, nil
}

// String returns the string at keys, or "" when it is absent or not a
// string.
func (d *Doc) String(keys ...string) string {
	s, err := d.walk(keys)
	if err != nil || s.depth < len(keys) || s.m.val.Type != gjson.String {
		return ""
	}
	return s.m.val.Str
}

// Set makes keys hold value (JSON-encoded), creating missing objects on the
// way. Only the member's own bytes change; a new member is laid out like
// its siblings.
func (d *Doc) Set(value any, keys ...string) error {
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return fmt.Errorf("settings: key %q is not valid UTF-8", k)
		}
	}
	raw, err := encode(value)
	if err != nil {
		return err
	}
	s, err := d.walk(keys)
	if err != nil {
		return err
	}
	if d.empty() {
		d.src = []byte("{}\n")
		s.obj = d.root()
	}
	if s.depth == len(keys) {
		indent := d.indentOf(s.m.key.Index)
		out, err := sjson.SetRawBytes(d.src, gpath(keys), d.layout(raw, indent, spans(s.obj)))
		if err != nil {
			return fmt.Errorf("%s: set %s: %w", d.path, dotted(keys), err)
		}
		d.src = out
		return nil
	}
	// Nest the value in the keys that are missing, innermost first.
	for i := len(keys) - 1; i > s.depth; i-- {
		k, _ := encode(keys[i])
		raw = append(append(append([]byte("{"), k...), ':'), append(raw, '}')...)
	}
	d.src = d.insert(s.obj, keys[s.depth], raw)
	return nil
}

// Delete removes the member at keys; a missing one is not an error.
func (d *Doc) Delete(keys ...string) error {
	s, err := d.walk(keys)
	if err != nil || s.depth < len(keys) {
		return err
	}
	out, err := sjson.DeleteBytes(d.src, gpath(keys))
	if err != nil {
		return fmt.Errorf("%s: delete %s: %w", d.path, dotted(keys), err)
	}
	d.src = out
	return nil
}

// insert adds key: raw to obj after its last member, or into it when empty.
func (d *Doc) insert(obj gjson.Result, key string, raw []byte) []byte {
	k, _ := encode(key)
	var ins []byte
	at, end := 0, 0
	if ms := members(obj); len(ms) > 0 {
		first, last := ms[0], ms[len(ms)-1]
		sep := d.src[first.key.Index+len(first.key.Raw) : first.val.Index]
		var lead []byte
		if len(ms) > 1 {
			lead = d.src[first.end():ms[1].key.Index]
		} else {
			lead = append([]byte(","), d.src[obj.Index+1:first.key.Index]...)
			if !bytes.ContainsRune(lead, '\n') && bytes.ContainsRune(sep, ' ') {
				lead = []byte(", ")
			}
		}
		enc := d.layout(raw, d.indentOf(first.key.Index), spans(obj))
		ins = append(append(append(append(ins, lead...), k...), sep...), enc...)
		at, end = last.end(), last.end()
	} else {
		at = obj.Index + 1
		end = at + bytes.IndexByte(d.src[at:], '}')
		if d.isRoot(obj) || spans(d.root()) {
			outer := d.indentOf(obj.Index)
			inner := outer + d.unit()
			ins = fmt.Appendf(nil, "\n%s%s: %s\n%s", inner, k, d.layout(raw, inner, true), outer)
		} else {
			ins = append(append(k, ':'), raw...)
		}
	}
	out := make([]byte, 0, len(d.src)+len(ins))
	out = append(append(out, d.src[:at]...), ins...)
	return append(out, d.src[end:]...)
}

func (d *Doc) isRoot(obj gjson.Result) bool { return obj.Index == d.root().Index }

// spans reports whether a value is laid out over several lines.
func spans(v gjson.Result) bool { return strings.Contains(strings.TrimSpace(v.Raw), "\n") }

// layout formats compact JSON for a member whose line starts with indent:
// indented like the document when pretty, compact otherwise.
func (d *Doc) layout(raw []byte, indent string, pretty bool) []byte {
	if !pretty {
		return raw
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, indent, d.unit()) != nil {
		return raw
	}
	return b.Bytes()
}

// unit is the document's indentation step, from its first indented line.
// Strings cannot hold raw newlines, so every line start is layout.
func (d *Doc) unit() string {
	for line := range bytes.SplitSeq(d.src, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) {
			return string(line[:len(line)-len(t)])
		}
	}
	return "  "
}

// indentOf is the whitespace that starts the line holding offset.
func (d *Doc) indentOf(off int) string {
	start := bytes.LastIndexByte(d.src[:off], '\n') + 1
	end := start
	for end < off && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[start:end])
}

// encode is compact JSON that leaves <, > and & as they are.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode setting: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// gpath is keys as one gjson/sjson path, each key escaped.
func gpath(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		e := gjson.Escape(k)
		if strings.HasPrefix(e, ":") {
			e = `\` + e // sjson reads a leading ':' as "force an object key"
		}
		parts[i] = e
	}
	return strings.Join(parts, ".")
}
