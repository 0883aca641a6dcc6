//go:build cgo

package symbols

import (
	"slices"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// pythonSupported is true in cgo builds, where tree-sitter's Python grammar
// is linked in.
const pythonSupported = true

var (
	pyLang    = sitter.NewLanguage(python.Language())
	pyParsers = sync.Pool{New: func() any {
		p := sitter.NewParser()
		if err := p.SetLanguage(pyLang); err != nil {
			panic("tree-sitter python grammar rejected: " + err.Error())
		}
		return p
	}}
)

func parsePython(src []byte) File {
	p := pyParsers.Get().(*sitter.Parser)
	defer pyParsers.Put(p)
	tree := p.Parse(src, nil)
	f := File{Lang: "python"}
	if tree == nil {
		f.Err = "tree-sitter returned no tree"
		return f
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		f.Err = "syntax error"
	}
	py := pyFile{src: src, defining: map[uintptr]bool{}}
	f.Defs = py.block(root, "")
	f.Refs = map[string]int{}
	imports := map[string]bool{}
	py.refs(root, f.Refs, imports)
	for m := range imports {
		f.Imports = append(f.Imports, m)
	}
	slices.Sort(f.Imports)
	return f
}

type pyFile struct {
	src      []byte
	defining map[uintptr]bool // node ids of identifiers that name a definition
}

func (py *pyFile) text(n *sitter.Node) string { return n.Utf8Text(py.src) }

func lines(n *sitter.Node) (start, end int) {
	s, e := n.StartPosition(), n.EndPosition()
	end = int(e.Row) + 1
	if e.Column == 0 && e.Row > s.Row {
		end--
	}
	return int(s.Row) + 1, end
}

// block collects the definitions directly inside a module, class body or
// function body; class is the enclosing class's name, if any.
func (py *pyFile) block(n *sitter.Node, class string) []Def {
	var defs []Def
	for i := range n.NamedChildCount() {
		child := n.NamedChild(i)
		defs = append(defs, py.statement(child, child, class)...)
	}
	return defs
}

// statement turns one statement into definitions; outer is the node whose
// range the definition covers (the decorated_definition, if decorated).
func (py *pyFile) statement(n, outer *sitter.Node, class string) []Def {
	switch n.Kind() {
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
		py.defining[name.Id()] = true
	}
	body := n.ChildByFieldName("body")
	if body != nil {
		d.Doc = py.docstring(body)
	}
	return d, body
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
	if a.Kind() != "assignment" {
		return nil
	}
	left := a.ChildByFieldName("left")
	if left == nil {
		return nil
	}
	var names []*sitter.Node
	switch left.Kind() {
	case "identifier":
		names = append(names, left)
	case "pattern_list", "tuple_pattern":
		for i := range left.NamedChildCount() {
			if c := left.NamedChild(i); c.Kind() == "identifier" {
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
		py.defining[name.Id()] = true
		defs = append(defs, Def{Name: py.text(name), Kind: kind, Recv: class, Signature: sig, Start: start, End: end})
	}
	return defs
}

// imports records the modules an import statement names: "import a.b" →
// a.b; "from a import b, c" → a, a.b, a.c (b and c may be submodules);
// relative imports keep their leading dots.
func (py *pyFile) imports(n *sitter.Node, out map[string]bool) {
	module := func(m *sitter.Node) string {
		switch m.Kind() {
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
		c := n.NamedChild(i)
		if from != nil && c.Id() == from.Id() {
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
	if first.Kind() != "expression_statement" || first.NamedChildCount() == 0 {
		return ""
	}
	s := first.NamedChild(0)
	if s.Kind() != "string" {
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
func (py *pyFile) refs(root *sitter.Node, refs map[string]int, imports map[string]bool) {
	c := root.Walk()
	defer c.Close()
	for {
		n := c.Node()
		switch n.Kind() {
		case "import_statement", "import_from_statement":
			py.imports(n, imports)
		}
		if n.Kind() == "identifier" && !py.defining[n.Id()] {
			switch name := py.text(n); name {
			case "self", "cls":
			default:
				refs[name]++
			}
		}
		if c.GotoFirstChild() || c.GotoNextSibling() {
			continue
		}
		for {
			if !c.GotoParent() {
				return
			}
			if c.GotoNextSibling() {
				break
			}
		}
	}
}
