package repomap

import (
	"fmt"
	"strings"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// JSONSite is a definition as the --json outputs give it: file relative to
// the root, 1-based first and last line, kind, name and signature, nested
// definitions under Children (outline only).
type JSONSite struct {
	File      string     `json:"file"`
	Line      int        `json:"line"`
	EndLine   int        `json:"end_line"`
	Kind      string     `json:"kind"`
	Name      string     `json:"name"`
	Signature string     `json:"signature"`
	Recv      string     `json:"recv,omitempty"`
	Doc       string     `json:"doc,omitempty"`
	Children  []JSONSite `json:"children,omitempty"`
}

func jsonSite(rel string, d symbols.Def, nested bool) JSONSite {
	s := JSONSite{File: rel, Line: d.Start, EndLine: max(d.End, d.Start), Kind: d.Kind, Name: d.Name,
		Signature: d.Signature, Recv: d.Recv, Doc: d.Doc}
	if nested {
		for _, c := range d.Children {
			s.Children = append(s.Children, jsonSite(rel, c, true))
		}
	}
	return s
}

// MapSection is one file of a map with the definitions it shows.
type MapSection struct {
	File string     `json:"file"`
	Defs []JSONSite `json:"defs,omitempty"`
}

// OutlineJSON is a file outline for --json.
type OutlineJSON struct {
	File    string     `json:"file"`
	Lang    string     `json:"lang"`
	Package string     `json:"package,omitempty"`
	Lines   int        `json:"lines"`
	Error   string     `json:"error,omitempty"` // syntax error; the outline may be partial
	Defs    []JSONSite `json:"defs"`
}

// OutlineData returns the outline of a parsed file as data.
func OutlineData(rel string, f symbols.File) OutlineJSON {
	o := OutlineJSON{File: rel, Lang: f.Lang, Package: f.Package, Lines: f.Lines, Error: firstLine(f.Err), Defs: []JSONSite{}}
	for _, d := range f.Defs {
		o.Defs = append(o.Defs, jsonSite(rel, d, true))
	}
	return o
}

// RefLine is one line that uses a name.
type RefLine struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// FindResult is what Find reports, as data.
type FindResult struct {
	Name       string     `json:"name"`
	Files      int        `json:"indexed_files"`
	Sites      []JSONSite `json:"sites"`
	MoreSites  int        `json:"more_sites,omitempty"`       // definition sites beyond MaxSites, not listed
	References []RefLine  `json:"references,omitempty"`       // with refs: up to MaxRefs lines
	RefsTotal  int        `json:"references_total,omitempty"` // with refs: every line found
}

// Lookup returns the definition sites of name (up to MaxSites) and, when
// refs is set, the lines that use it.
func (ix *Index) Lookup(name string, refs bool) FindResult {
	sites := ix.Sites(name)
	r := FindResult{Name: name, Files: ix.Stats.Files, Sites: []JSONSite{}}
	for i, s := range sites {
		if i == MaxSites {
			r.MoreSites = len(sites) - MaxSites
			break
		}
		r.Sites = append(r.Sites, jsonSite(s.Rel, s.Def, false))
	}
	if refs {
		r.References, r.RefsTotal = ix.refLines(name, sites)
	}
	return r
}

// refLines finds the lines that use the (base) name in files whose parse
// recorded a reference to it, leaving out the definition lines themselves.
func (ix *Index) refLines(name string, sites []Site) ([]RefLine, int) {
	base := name
	if _, after, ok := strings.Cut(name, "."); ok {
		base = after
	}
	defLine := map[string]bool{}
	for _, s := range sites {
		defLine[fmt.Sprintf("%s:%d", s.Rel, s.Def.Start)] = true
	}
	var refs []RefLine
	total := 0
	for _, f := range ix.candidates(base, true) {
		if !refersTo(f.Refs, base) {
			continue
		}
		for n, line := range ix.fileLines(f.Rel) {
			if !containsWord(line, base) || defLine[fmt.Sprintf("%s:%d", f.Rel, n+1)] {
				continue
			}
			total++
			if len(refs) < MaxRefs {
				refs = append(refs, RefLine{File: f.Rel, Line: n + 1, Text: clip(strings.TrimSpace(line))})
			}
		}
	}
	return refs, total
}
