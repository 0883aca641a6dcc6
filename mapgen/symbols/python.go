//go:build cgo

package symbols

import (
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

func parsePython(src []byte) File {
	f := File{Lang: "python"}
	err := treeSitter["python"].parse(src, func(root *sitter.Node) {
		if root.HasError() {
			f.Err = syntaxError(root)
		}
		py := pyFile{src: src, lines: newLineIndex(src), defining: map[uintptr]bool{}}
		f.Defs = py.block(root, "")
		r := newRefs()
		imports := map[string]bool{}
		py.refs(root, r, imports)
		r.store(&f)
		for m := range imports {
			f.Imports = append(f.Imports, m)
		}
		slices.Sort(f.Imports)
	})
	if err != nil {
		f.Err = err.Error()
	}
	return f
}

type pyFile struct {
	src      []byte
	lines    lineIndex
	defining map[uintptr]bool // node ids of identifiers that name a definition
}

func (py *pyFile) text(n *sitter.Node) string { return n.Content(py.src) }

func (py *pyFile) line(n *sitter.Node) int { return py.lines.line(n.StartByte()) }

// block collects the definitions directly inside a module, class body or
// function body; class is the enclosing class's name, if any.
func (py *pyFile) block(n *sitter.Node, class string) []Def {
	var defs []Def
	for i := range n.NamedChildCount() {
		child := n.NamedChild(int(i))
		defs = append(defs, py.statement(child, child, class)...)
	}
	return defs
}

// statement turns one statement into definitions; outer is the node whose
// range the definition covers (the decorated_definition, if decorated).
func (py *pyFile) statement(n, outer *sitter.Node, class string) []Def {
	switch n.Type() {
	case "decorated_definition":
		if d := n.ChildByFieldName("definition"); d != nil {
			return py.statement(d, outer, class)
		}
	case "function_definition":
		return []Def{py.function(n, outer, class)}
	case "class_definition":
		return []Def{py.class(n, outer)}
	case "expression_statement":
		return py.assignment(n, class)
	}
	return nil
}

func (py *pyFile) header(n *sitter.Node) string {
	body := n.ChildByFieldName("body")
	end := n.EndByte()
	if body != nil {
		end = body.StartByte()
	}
	h := strings.TrimRight(strings.TrimSpace(string(py.src[n.StartByte():end])), ":")
	return oneLine(h, maxSignature)
}

// named starts the definition of a function or class node n spanning outer,
// and returns its body.
func (py *pyFile) named(n, outer *sitter.Node, kind string) (Def, *sitter.Node) {
	start, end := lines(outer)
	d := Def{Kind: kind, Signature: py.header(n), Start: start, End: end}
	if name := n.ChildByFieldName("name"); name != nil {
		d.Name = py.text(name)
		py.defining[name.ID()] = true
	}
	body := n.ChildByFieldName("body")
	if body != nil {
		d.Doc = py.docstring(body)
		d.End = lastStatementEnd(body, d.End)
	}
	return d, body
}

// lastStatementEnd is the last line of a body's last token that is not a
// comment: tree-sitter lets a block (and blocks nested at its end) run on
// over the comments that follow it, Python (and the ast module's
// end_lineno) ends it at its last statement.
func lastStatementEnd(body *sitter.Node, end int) int {
	n := body
	for {
		var last *sitter.Node
		for i := int(n.ChildCount()) - 1; i >= 0; i-- {
			if c := n.Child(i); c.Type() != "comment" {
				last = c
				break
			}
		}
		if last == nil {
			if n == body {
				return end
			}
			_, e := lines(n)
			return e
		}
		n = last
	}
}

func (py *pyFile) function(n, outer *sitter.Node, class string) Def {
	d, body := py.named(n, outer, KindFunc)
	if class != "" {
		d.Kind, d.Recv = KindMethod, class
	}
	if body != nil {
		d.Children = py.nestedFunctions(body)
	}
	return d
}

// nestedFunctions keeps only the functions and classes defined in a function
// body; its local assignments are not definitions worth listing.
func (py *pyFile) nestedFunctions(body *sitter.Node) []Def {
	var out []Def
	for _, d := range py.block(body, "") {
		if d.Kind != KindVar {
			out = append(out, d)
		}
	}
	return out
}

func (py *pyFile) class(n, outer *sitter.Node) Def {
	d, body := py.named(n, outer, KindClass)
	if body != nil {
		d.Children = py.block(body, d.Name)
	}
	return d
}

// assignment returns "NAME = …" (and "A, B = …") at module or class level
// as variables (fields inside a class).
func (py *pyFile) assignment(n *sitter.Node, class string) []Def {
	if n.NamedChildCount() == 0 {
		return nil
	}
	a := n.NamedChild(0)
	if a.Type() != "assignment" {
		return nil
	}
	left := a.ChildByFieldName("left")
	if left == nil {
		return nil
	}
	var names []*sitter.Node
	switch left.Type() {
	case "identifier":
		names = append(names, left)
	case "pattern_list", "tuple_pattern", "list_pattern":
		for i := range left.NamedChildCount() {
			if c := left.NamedChild(int(i)); c.Type() == "identifier" {
				names = append(names, c)
			}
		}
	}
	start, end := lines(n)
	kind := KindVar
	if class != "" {
		kind = KindField
	}
	sig := oneLine(py.text(n), maxValueSignature)
	var defs []Def
	for _, name := range names {
		py.defining[name.ID()] = true
		defs = append(defs, Def{Name: py.text(name), Kind: kind, Recv: class, Signature: sig, Start: start, End: end})
	}
	return defs
}

// imports records the modules an import statement names: "import a.b" →
// a.b; "from a import b, c" → a, a.b, a.c (b and c may be submodules);
// relative imports keep their leading dots.
func (py *pyFile) imports(n *sitter.Node, out map[string]bool) {
	module := func(m *sitter.Node) string {
		switch m.Type() {
		case "aliased_import":
			if name := m.ChildByFieldName("name"); name != nil {
				return py.text(name)
			}
			return ""
		case "dotted_name", "relative_import":
			return strings.Join(strings.Fields(py.text(m)), "")
		}
		return ""
	}
	from := n.ChildByFieldName("module_name")
	base := ""
	if from != nil {
		base = module(from)
		if base != "" {
			out[base] = true
		}
	}
	for i := range n.NamedChildCount() {
		c := n.NamedChild(int(i))
		if from != nil && c.ID() == from.ID() {
			continue
		}
		name := module(c)
		switch {
		case name == "":
		case from == nil:
			out[name] = true
		case strings.HasSuffix(base, "."):
			out[base+name] = true
		case base != "":
			out[base+"."+name] = true
		}
	}
}

// docstring returns the string literal that opens a body, unquoted.
func (py *pyFile) docstring(body *sitter.Node) string {
	if body.NamedChildCount() == 0 {
		return ""
	}
	first := body.NamedChild(0)
	if first.Type() != "expression_statement" || first.NamedChildCount() == 0 {
		return ""
	}
	s := first.NamedChild(0)
	if s.Type() != "string" {
		return ""
	}
	text := py.text(s)
	text = strings.TrimLeft(text, "rRbBuUfF")
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(text, q) && strings.HasSuffix(text, q) && len(text) >= 2*len(q) {
			text = text[len(q) : len(text)-len(q)]
			break
		}
	}
	return trimDoc(text)
}

// refs counts identifier uses (attribute names included) other than the
// names being defined and self/cls, and collects imported modules.
func (py *pyFile) refs(root *sitter.Node, out refs, imports map[string]bool) {
	l := treeSitter["python"]
	qc := cursors.Get().(*sitter.QueryCursor)
	defer cursors.Put(qc)
	qc.Exec(l.query, root)
	for {
		m, ok := qc.NextMatch()
		if !ok {
			return
		}
		for _, c := range m.Captures {
			n := c.Node
			switch l.roles[c.Index] {
			case roleImport:
				py.imports(n, imports)
			case roleRef:
				if py.defining[n.ID()] {
					continue
				}
				switch name := py.text(n); name {
				case "self", "cls":
				default:
					out.add(name, py.line(n))
				}
			}
		}
	}
}
