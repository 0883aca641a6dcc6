package repomap

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// ErrUnsupported is returned (wrapped) for a file no built-in parser reads.
var ErrUnsupported = errors.New("unsupported file type")

// ParseFile parses one file inside the root, whatever the ignore rules say:
// asking for a file by name is deliberate. (One file parses in
// milliseconds; the persisted index serves whole-repository questions.)
func ParseFile(root walk.Root, p string) (rel string, f symbols.File, err error) {
	abs, rel, err := root.Resolve(p)
	if err != nil {
		return "", symbols.File{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", symbols.File{}, fmt.Errorf("stat %s: %w", rel, err)
	}
	if st.IsDir() {
		return "", symbols.File{}, fmt.Errorf("%s is a directory; give a file", rel)
	}
	lang := symbols.Language(rel)
	if known := symbols.Detect(rel); lang == "" && known != "" {
		return "", symbols.File{}, fmt.Errorf("%s is %s, which this build of synaxi-mapgen cannot parse (built without cgo; it parses %s): %w",
			rel, known, strings.Join(symbols.Languages(), ", "), ErrUnsupported)
	}
	if lang == "" {
		return "", symbols.File{}, fmt.Errorf("%s: %w (supported: %s)", rel, ErrUnsupported, strings.Join(symbols.Languages(), ", "))
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", symbols.File{}, fmt.Errorf("read %s: %w", rel, err)
	}
	if walk.Classify(data) == walk.Binary {
		return "", symbols.File{}, fmt.Errorf("%s is not a text file", rel)
	}
	return rel, symbols.Parse(rel, data), nil
}

// Outline renders every definition of a file with kind, line range and
// signature, nested by indentation, with the first line of its doc comment.
func Outline(rel string, f symbols.File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# outline of %s (%s", rel, f.Lang)
	if f.Package != "" {
		fmt.Fprintf(&b, ", package %s", f.Package)
	}
	n := countDefs(f.Defs)
	fmt.Fprintf(&b, ", %s, %s)\n", plural(f.Lines, "line"), plural(n, "definition"))
	if f.Err != "" {
		fmt.Fprintf(&b, "# syntax error, outline may be partial: %s\n", firstLine(f.Err))
	}
	if len(f.Defs) == 0 {
		b.WriteString("(no definitions found)\n")
	}
	writeDefs(&b, f.Defs, 0)
	return b.String()
}

func countDefs(defs []symbols.Def) int {
	n := len(defs)
	for _, d := range defs {
		n += countDefs(d.Children)
	}
	return n
}

func writeDefs(b *strings.Builder, defs []symbols.Def, depth int) {
	for _, d := range defs {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(lineRange(d))
		b.WriteByte(' ')
		b.WriteString(kindAndSignature(d))
		if doc := firstLine(d.Doc); doc != "" {
			fmt.Fprintf(b, "  // %s", doc)
		}
		b.WriteByte('\n')
		writeDefs(b, d.Children, depth+1)
	}
}

// kindAndSignature prints the kind before the signature unless the
// signature already opens with it ("const Sentinel = …", "class A(B)").
func kindAndSignature(d symbols.Def) string {
	if first, _, _ := strings.Cut(d.Signature, " "); first == d.Kind {
		return d.Signature
	}
	return d.Kind + " " + d.Signature
}

func lineRange(d symbols.Def) string {
	if d.End > d.Start {
		return fmt.Sprintf("L%d-%d", d.Start, d.End)
	}
	return fmt.Sprintf("L%d", d.Start)
}

// firstLine returns the first line of s, bounded to 120 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return symbols.Truncate(s, 120)
}

// plural renders "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
