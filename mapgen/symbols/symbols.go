// Package symbols extracts definitions (with kind, signature, doc comment,
// line range and nesting) and identifier references from source files, one
// parser per language: go/parser for Go, tree-sitter (one binding, with a
// tag query per language) for Python, TypeScript/TSX, JavaScript/JSX, Rust,
// Java, C, C++, Ruby, C# and Bash when built with cgo. A build without cgo
// parses Go only and says so: Missing lists what it lacks, and Parse of such
// a file reports the missing cgo in File.Err instead of an empty result.
//
// Invariants of a parsed File: Defs (and each Children list) are in source
// order; a child's lines lie within its parent's (except Go methods, listed
// under their receiver type wherever they are in the file); Start ≤ End, both
// 1-based; Refs and RefLines have the same keys, and a definition's own name
// is never counted as a reference to it. Parse never panics, whatever the
// bytes (fuzzed per language), and a syntax error leaves what could be
// recovered plus File.Err.
//
// Parse is safe for concurrent use; tree-sitter parsers and query cursors
// come from sync.Pools (per-P caches, no lock on the hot path), never shared
// by two parses at once.
package symbols

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Version changes whenever the parsers' output changes; the parse cache keys
// on it so stale entries are never served.
const Version = 9

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
	KindEnum      = "enum"
	KindTrait     = "trait"    // Rust trait
	KindImpl      = "impl"     // Rust impl block, named by the type it is for
	KindModule    = "module"   // Ruby module, Rust mod, C++/C#/TypeScript namespace
	KindMacro     = "macro"    // C/C++ #define, Rust macro_rules!
	KindProperty  = "property" // C# property or event
	KindCtor      = "ctor"     // Java/C# constructor
	KindVariant   = "variant"  // enum member
)

// Def is one definition in a file.
type Def struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Recv      string `json:"recv,omitempty"` // receiver type (Go method) or enclosing type, class, module or impl (the parent's name)
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
	Refs    map[string]int `json:"refs,omitempty"` // identifier → number of uses (Go keys: see RefName)
	// RefLines holds, per key of Refs, the 1-based lines the uses are on,
	// ascending and without repeats (a line with two uses appears once).
	RefLines map[string][]int `json:"ref_lines,omitempty"`
	Imports  []string         `json:"imports,omitempty"` // Python: modules imported ("a.b", ".sibling", "..pkg"), sorted
	Err      string           `json:"err,omitempty"`     // syntax error; Defs and Refs are what could be recovered
}

// extensions maps a file name extension to the language it is written in.
// The walker uses Language (this table filtered by what the build parses) to
// decide which files are source.
var extensions = map[string]string{
	".go":      "go",
	".py":      "python",
	".pyi":     "python",
	".ts":      "typescript",
	".mts":     "typescript",
	".cts":     "typescript",
	".tsx":     "tsx",
	".js":      "javascript",
	".mjs":     "javascript",
	".cjs":     "javascript",
	".jsx":     "javascript",
	".rs":      "rust",
	".java":    "java",
	".c":       "c",
	".h":       "c",
	".cc":      "cpp",
	".cpp":     "cpp",
	".cxx":     "cpp",
	".c++":     "cpp",
	".hh":      "cpp",
	".hpp":     "cpp",
	".hxx":     "cpp",
	".h++":     "cpp",
	".inl":     "cpp",
	".ipp":     "cpp",
	".rb":      "ruby",
	".rake":    "ruby",
	".gemspec": "ruby",
	".cs":      "csharp",
	".sh":      "bash",
	".bash":    "bash",
}

// basenames maps whole file names without a telling extension.
var basenames = map[string]string{
	"Rakefile": "ruby",
	"Gemfile":  "ruby",
}

// Detect returns the language a file is written in, judged by its name,
// whether or not this build can parse it; "" for a file of no known
// language.
func Detect(name string) string {
	base := path.Base(filepath.ToSlash(name))
	if l, ok := basenames[base]; ok {
		return l
	}
	return extensions[strings.ToLower(path.Ext(base))]
}

// Language returns the language of a file by its name, or "" when no parser
// for it is built in.
func Language(name string) string {
	l := Detect(name)
	if l == "" || !Supported(l) {
		return ""
	}
	return l
}

// Supported reports whether this build parses lang.
func Supported(lang string) bool {
	if lang == "go" {
		return true
	}
	_, ok := treeSitter[lang]
	return ok
}

// Extensions lists the file name extensions and whole names that Detect
// maps to lang, sorted.
func Extensions(lang string) []string {
	var out []string
	for ext, l := range extensions {
		if l == lang {
			out = append(out, ext)
		}
	}
	for base, l := range basenames {
		if l == lang {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out
}

// Known lists every language the extension table names, sorted.
func Known() []string {
	seen := map[string]bool{}
	for _, l := range extensions {
		seen[l] = true
	}
	for _, l := range basenames {
		seen[l] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// Languages lists the languages this build parses, sorted.
func Languages() []string {
	var out []string
	for _, l := range Known() {
		if Supported(l) {
			out = append(out, l)
		}
	}
	return out
}

// Missing lists the languages the extension table names that this build
// cannot parse (all but Go in a build without cgo), sorted.
func Missing() []string {
	var out []string
	for _, l := range Known() {
		if !Supported(l) {
			out = append(out, l)
		}
	}
	return out
}

// Parse extracts definitions and references from src. name is used for the
// language and in error messages. A syntax error is reported in File.Err with
// whatever could be recovered, not as an error.
func Parse(name string, src []byte) File {
	var f File
	switch lang := Detect(name); {
	case lang == "":
		return File{Err: "unsupported language"}
	case !Supported(lang):
		return File{Lang: lang, Err: lang + " needs a build of synaxi-mapgen with cgo; this one has none"}
	case lang == "go":
		f = parseGo(name, src)
	case lang == "python":
		f = parsePython(src)
	default:
		f = parseTreeSitter(lang, src)
	}
	f.Lines = countLines(src)
	if len(f.Refs) == 0 {
		f.Refs, f.RefLines = nil, nil // one form for "none", so a cached copy compares equal
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
