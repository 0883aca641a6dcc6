package repomap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// Limits on what Find reports.
const (
	MaxSites      = 20  // definition sites
	MaxKeyLines   = 14  // key lines per site
	FullBodyLines = 12  // definitions this short are shown whole
	keyLineWindow = 220 // key lines come from the first lines of a definition
	MaxRefs       = 100 // reference lines
	maxLineBytes  = 160
)

// keyPrefixes start the lines worth quoting from a definition's body:
// control flow, exits and nested definitions.
var keyPrefixes = []string{
	"if ", "if(", "else", "elif ", "for ", "for(", "while ", "switch", "case ", "select",
	"return", "raise", "assert", "throw", "panic(", "defer ", "go ", "yield",
	"try:", "except", "with ", "def ", "func ", "class ", "type ", "match ",
}

// Site is one definition of a name.
type Site struct {
	Rel string
	Def symbols.Def
}

// Sites returns the definitions named name, or "Recv.name" for a method or
// field, in path and line order. Fields and nested definitions count.
func (ix *Index) Sites(name string) []Site {
	recv, base, qualified := strings.Cut(name, ".")
	if !qualified {
		base, recv = name, ""
	}
	var out []Site
	var visit func(rel string, defs []symbols.Def, parent string)
	visit = func(rel string, defs []symbols.Def, parent string) {
		for _, d := range defs {
			owner := d.Recv
			if owner == "" {
				owner = parent
			}
			if d.Name == base && (recv == "" || owner == recv) {
				out = append(out, Site{Rel: rel, Def: d})
			}
			visit(rel, d.Children, d.Name)
		}
	}
	for _, f := range ix.candidates(base, false) {
		visit(f.Rel, f.Defs, "")
	}
	return out
}

// candidates returns the entries that may define name (refs false) or refer
// to it (refs true): from a persisted index, only the files its name tables
// list, decoded on their own; otherwise every entry.
func (ix *Index) candidates(name string, refs bool) []Entry {
	if ix.snap == nil {
		return ix.Entries()
	}
	idx := ix.snap.DefinedIn(name)
	if refs {
		idx = ix.snap.ReferencedIn(name)
	}
	out := make([]Entry, 0, len(idx))
	for _, i := range idx {
		if f, err := ix.snap.File(i); err == nil {
			out = append(out, Entry{Rel: ix.meta.Files[i].Rel, File: f})
		}
	}
	return out
}

// Find renders the definition sites of name with signature, doc and key
// lines, and, when refs is set, the lines that use it.
func (ix *Index) Find(name string, refs bool) string {
	sites := ix.Sites(name)
	var b strings.Builder
	if len(sites) == 0 {
		fmt.Fprintf(&b, "no definition of %q found in %d indexed source files\n", name, ix.Stats.Files)
	}
	for i, s := range sites {
		if i == MaxSites {
			fmt.Fprintf(&b, "… and %d more definition sites\n", len(sites)-MaxSites)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		ix.writeSite(&b, s)
	}
	if refs {
		ix.writeRefs(&b, name, sites)
	}
	return b.String()
}

func qualifiedName(d symbols.Def) string {
	if d.Recv != "" {
		return d.Recv + "." + d.Name
	}
	return d.Name
}

func (ix *Index) writeSite(b *strings.Builder, s Site) {
	fmt.Fprintf(b, "%s %s — %s:%s\n", s.Def.Kind, qualifiedName(s.Def), s.Rel, strings.TrimPrefix(lineRange(s.Def), "L"))
	fmt.Fprintf(b, "  %s\n", s.Def.Signature)
	if s.Def.Doc != "" {
		for _, l := range strings.Split(s.Def.Doc, "\n") {
			fmt.Fprintf(b, "  // %s\n", l)
		}
	}
	lines := ix.fileLines(s.Rel)
	if lines == nil {
		return
	}
	from, to := s.Def.Start, min(s.Def.End, len(lines))
	full := to-from+1 <= FullBodyLines
	shown := 0
	for n := from; n <= to && n < from+keyLineWindow; n++ {
		text := strings.TrimRight(lines[n-1], " \t\r")
		if !full && n != from && !isKeyLine(text) {
			continue
		}
		if shown == MaxKeyLines {
			b.WriteString("  …\n")
			break
		}
		fmt.Fprintf(b, "  L%d: %s\n", n, clip(text))
		shown++
	}
}

func isKeyLine(line string) bool {
	t := strings.TrimLeft(line, " \t}")
	t = strings.TrimLeft(t, " \t")
	for _, p := range keyPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func clip(s string) string { return symbols.Truncate(s, maxLineBytes) }

// fileLines reads a file of the index as lines (nil if it cannot be read).
func (ix *Index) fileLines(rel string) []string {
	data, err := os.ReadFile(filepath.Join(ix.Root.Dir(), filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// writeRefs lists the lines that use the (base) name.
func (ix *Index) writeRefs(b *strings.Builder, name string, sites []Site) {
	base := name
	if _, after, ok := strings.Cut(name, "."); ok {
		base = after
	}
	refs, total := ix.refLines(name, sites)
	fmt.Fprintf(b, "\n# references to %s: %d\n", base, total)
	for _, r := range refs {
		fmt.Fprintf(b, "%s:%d: %s\n", r.File, r.Line, r.Text)
	}
	if total > len(refs) {
		fmt.Fprintf(b, "… and %d more\n", total-len(refs))
	}
}

// containsWord reports whether word occurs in line as a whole identifier.
func containsWord(line, word string) bool {
	s := []byte(line)
	for i := 0; ; {
		j := bytes.Index(s[i:], []byte(word))
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !isIdentByte(s[start-1])) && (end == len(s) || !isIdentByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// refersTo reports whether a file's reference keys include name in any form.
func refersTo(refs map[string]int, name string) bool {
	if refs[name] > 0 || refs["."+name] > 0 {
		return true
	}
	for key := range refs {
		if symbols.RefName(key) == name {
			return true
		}
	}
	return false
}
