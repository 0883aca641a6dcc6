// Package symbols extracts definitions (with kind, signature, doc comment,
// line range and nesting) and identifier references from source files, one
// parser per language: go/parser for Go, tree-sitter for Python when built
// with cgo.
package symbols

import (
	"path"
	"strings"
	"unicode/utf8"
)

// Version changes whenever the parsers' output changes; the parse cache keys
// on it so stale entries are never served.
const Version = 5

// Definition kinds.
const (
	KindFunc      = "func"
	KindMethod    = "method"
	KindType      = "type"
	KindStruct    = "struct"
	KindInterface = "interface"
	KindConst     = "const"
	KindVar       = "var"
	KindField     = "field"
	KindClass     = "class"
)

// Def is one definition in a file.
type Def struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Recv      string `json:"recv,omitempty"` // receiver type (Go method) or enclosing class (Python method)
	Signature string `json:"sig"`
	Doc       string `json:"doc,omitempty"`
	Start     int    `json:"start"` // 1-based first line
	End       int    `json:"end"`   // 1-based last line
	Children  []Def  `json:"children,omitempty"`
}

// File is what a parser found in one file.
type File struct {
	Lang    string         `json:"lang"`
	Package string         `json:"pkg,omitempty"`
	Lines   int            `json:"lines"`
	Defs    []Def          `json:"defs,omitempty"`
	Refs    map[string]int `json:"refs,omitempty"`    // identifier → number of uses (Go keys: see RefName)
	Imports []string       `json:"imports,omitempty"` // Python: modules imported ("a.b", ".sibling", "..pkg"), sorted
	Err     string         `json:"err,omitempty"`     // syntax error; Defs and Refs are what could be recovered
}

// Language returns the language of a file by its name, or "" when no parser
// for it is built in.
func Language(name string) string {
	switch path.Ext(name) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		if pythonSupported {
			return "python"
		}
	}
	return ""
}

// Languages lists the languages this build parses.
func Languages() []string {
	if pythonSupported {
		return []string{"go", "python"}
	}
	return []string{"go"}
}

// Parse extracts definitions and references from src. name is used for the
// language and in error messages. A syntax error is reported in File.Err with
// whatever could be recovered, not as an error.
func Parse(name string, src []byte) File {
	var f File
	switch Language(name) {
	case "go":
		f = parseGo(name, src)
	case "python":
		f = parsePython(src)
	default:
		return File{Err: "unsupported language"}
	}
	f.Lines = countLines(src)
	if len(f.Refs) == 0 {
		f.Refs = nil // one form for "none", so a cached copy compares equal
	}
	return f
}

func countLines(src []byte) int {
	if len(src) == 0 {
		return 0
	}
	n := strings.Count(string(src), "\n")
	if src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// maxSignature bounds a rendered signature; longer ones end in "…".
const maxSignature = 200

// maxValueSignature bounds the signature of a constant, variable or
// assignment, whose value is rarely worth more than a glance.
const maxValueSignature = 100

// maxDoc bounds a stored doc comment.
const maxDoc = 600

// oneLine collapses whitespace runs to single spaces and bounds the length.
func oneLine(s string, limit int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), limit)
}

// trimDoc trims a doc comment and bounds its length.
func trimDoc(s string) string { return Truncate(strings.TrimSpace(s), maxDoc) }

// Truncate cuts s to at most limit bytes on a UTF-8 boundary and marks the
// cut with "…".
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// RefName returns the identifier a reference key names: Go records "Name",
// "pkg.Name" and ".Name" (see the Go parser), other languages the bare name.
func RefName(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[i+1:]
	}
	return key
}
