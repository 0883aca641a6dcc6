package symbols

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

var printCfg = printer.Config{Mode: printer.RawFormat}

func parseGo(name string, src []byte) File {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	f := File{Lang: "go"}
	if err != nil {
		f.Err = err.Error()
	}
	if af == nil {
		return f
	}
	f.Package = af.Name.Name
	g := goFile{fset: fset}
	for _, decl := range af.Decls {
		g.decl(decl)
	}
	clampEnds(g.defs)
	f.Defs = nestMethods(g.defs)
	goRefs(af, fset, g.defining).store(&f)
	return f
}

type goFile struct {
	fset     *token.FileSet
	defs     []Def
	defining map[*ast.Ident]bool
}

func (g *goFile) line(p token.Pos) int { return g.fset.Position(p).Line }

func (g *goFile) define(id *ast.Ident) {
	if g.defining == nil {
		g.defining = map[*ast.Ident]bool{}
	}
	g.defining[id] = true
}

// print renders a node as source on one bounded line.
func (g *goFile) print(node any) string {
	var buf bytes.Buffer
	if err := printCfg.Fprint(&buf, g.fset, node); err != nil {
		return ""
	}
	return oneLine(buf.String(), maxSignature)
}

func (g *goFile) decl(decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		g.define(d.Name)
		def := Def{Name: d.Name.Name, Kind: KindFunc, Doc: trimDoc(d.Doc.Text()),
			Start: g.line(d.Pos()), End: g.line(d.End())}
		sig := *d
		sig.Doc, sig.Body = nil, nil
		def.Signature = g.print(&sig)
		if d.Recv != nil && len(d.Recv.List) > 0 {
			def.Kind = KindMethod
			def.Recv = recvType(d.Recv.List[0].Type)
		}
		g.defs = append(g.defs, def)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			doc := d.Doc
			start := d.Pos()
			if d.Lparen.IsValid() {
				start = spec.Pos()
			}
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Doc != nil {
					doc = s.Doc
				}
				g.typeSpec(s, doc, start)
			case *ast.ValueSpec:
				if s.Doc != nil {
					doc = s.Doc
				}
				g.valueSpec(d.Tok, s, doc, start)
			}
		}
	}
}

func (g *goFile) typeSpec(s *ast.TypeSpec, doc *ast.CommentGroup, start token.Pos) {
	g.define(s.Name)
	def := Def{Name: s.Name.Name, Kind: KindType, Doc: trimDoc(doc.Text()), Start: g.line(start), End: g.line(s.End())}
	head := "type " + s.Name.Name
	if s.TypeParams != nil {
		head += "[" + g.fieldList(s.TypeParams) + "]"
	}
	if s.Assign.IsValid() {
		head += " ="
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		def.Kind = KindStruct
		def.Signature = head + " struct"
		def.Children = g.fields(t.Fields, KindField)
	case *ast.InterfaceType:
		def.Kind = KindInterface
		def.Signature = head + " interface"
		def.Children = g.fields(t.Methods, KindMethod)
		for i := range def.Children {
			def.Children[i].Recv = s.Name.Name
		}
	default:
		def.Signature = oneLine(head+" "+g.print(s.Type), maxSignature)
	}
	g.defs = append(g.defs, def)
}

// fieldList renders "A, B any, C comparable" from a field list.
func (g *goFile) fieldList(fl *ast.FieldList) string {
	var parts []string
	for _, f := range fl.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		p := g.print(f.Type)
		if len(names) > 0 {
			p = strings.Join(names, ", ") + " " + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// fields turns struct fields or interface methods into child definitions.
func (g *goFile) fields(fl *ast.FieldList, kind string) []Def {
	if fl == nil {
		return nil
	}
	var out []Def
	for _, f := range fl.List {
		doc := f.Doc
		if doc == nil {
			doc = f.Comment
		}
		typ := g.print(f.Type)
		if len(f.Names) == 0 { // embedded field or interface element
			out = append(out, Def{Name: embeddedName(f.Type), Kind: KindField, Signature: typ,
				Doc: trimDoc(doc.Text()), Start: g.line(f.Pos()), End: g.line(f.End())})
			continue
		}
		for _, n := range f.Names {
			g.define(n)
			sig := n.Name + " " + typ
			if ft, ok := f.Type.(*ast.FuncType); ok && kind == KindMethod {
				sig = n.Name + strings.TrimPrefix(g.print(ft), "func")
			}
			out = append(out, Def{Name: n.Name, Kind: kind, Signature: oneLine(sig, maxSignature),
				Doc: trimDoc(doc.Text()), Start: g.line(f.Pos()), End: g.line(f.End())})
		}
	}
	return out
}

func (g *goFile) valueSpec(tok token.Token, s *ast.ValueSpec, doc *ast.CommentGroup, start token.Pos) {
	kind := KindVar
	if tok == token.CONST {
		kind = KindConst
	}
	spec := *s
	spec.Doc, spec.Comment = nil, nil
	long := len(s.Values) > 0 && int(s.End()-s.Pos()) > 2*maxValueSignature
	if long {
		spec.Values = nil // a big literal (a table) is not worth printing to cut
	}
	text := g.print(&spec)
	if long {
		text += " = …"
	}
	for _, n := range s.Names {
		if n.Name == "_" {
			continue
		}
		g.define(n)
		g.defs = append(g.defs, Def{Name: n.Name, Kind: kind, Signature: oneLine(tok.String()+" "+text, maxValueSignature),
			Doc: trimDoc(doc.Text()), Start: g.line(start), End: g.line(s.End())})
	}
}

// recvType names a method receiver's base type: *T[K] → T.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return embeddedName(t.X)
	case *ast.IndexListExpr:
		return embeddedName(t.X)
	}
	return ""
}

// nestMethods moves each method under its receiver type when that type is
// defined in the same file, keeping source order elsewhere.
func nestMethods(defs []Def) []Def {
	typeAt := map[string]int{}
	for i, d := range defs {
		switch d.Kind {
		case KindType, KindStruct, KindInterface:
			typeAt[d.Name] = i
		}
	}
	methods := map[int][]Def{}
	for _, d := range defs {
		if at, ok := typeAt[d.Recv]; ok && d.Kind == KindMethod {
			methods[at] = append(methods[at], d)
		}
	}
	var out []Def
	for i, d := range defs {
		if d.Kind == KindMethod {
			if _, ok := typeAt[d.Recv]; ok {
				continue
			}
		}
		if ms := methods[i]; len(ms) > 0 {
			d.Children = append(append([]Def(nil), d.Children...), ms...)
		}
		out = append(out, d)
	}
	return out
}

// goRefs counts identifier uses, keyed so a ranking can resolve them the
// way Go scopes names: "Name" for a bare identifier (same package),
// "pkg.Name" for a name qualified by an imported package, ".Name" for a
// selector on a value (a method or field). Declared names, the blank
// identifier and predeclared names are left out.
func goRefs(af *ast.File, fset *token.FileSet, defining map[*ast.Ident]bool) refs {
	imports := map[string]bool{}
	for _, imp := range af.Imports {
		if name := importName(imp); name != "" {
			imports[name] = true
		}
	}
	out := newRefs()
	tf := fset.File(af.Pos())
	line := func(p token.Pos) int {
		if tf == nil || !p.IsValid() {
			return 0
		}
		return tf.Line(p)
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] {
				out.add(id.Name+"."+x.Sel.Name, line(x.Sel.Pos()))
				return false
			}
			ast.Inspect(x.X, visit)
			out.add("."+x.Sel.Name, line(x.Sel.Pos()))
			return false
		case *ast.Ident:
			if x.Name == "_" || defining[x] || types.Universe.Lookup(x.Name) != nil {
				return true
			}
			out.add(x.Name, line(x.Pos()))
		}
		return true
	}
	for _, d := range af.Decls {
		ast.Inspect(d, visit)
	}
	return out
}

// importName is the name an import binds: its explicit name, else a guess
// from the path's last element ("go-yaml", "yaml.v3" and ".../v2" handled).
func importName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		if imp.Name.Name == "_" || imp.Name.Name == "." {
			return ""
		}
		return imp.Name.Name
	}
	p, err := strconv.Unquote(imp.Path.Value)
	if err != nil {
		return ""
	}
	elems := strings.Split(p, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) >= 2 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = elems[len(elems)-2]
	}
	last, _, _ = strings.Cut(last, ".")
	last = strings.TrimPrefix(last, "go-")
	return strings.ReplaceAll(last, "-", "_")
}

// clampEnds keeps End ≥ Start where a broken declaration has no valid end
// position (go/parser reports line 0 for it).
func clampEnds(defs []Def) {
	for i := range defs {
		defs[i].End = max(defs[i].End, defs[i].Start)
		clampEnds(defs[i].Children)
	}
}
