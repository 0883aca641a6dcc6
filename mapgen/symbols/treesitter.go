//go:build cgo

package symbols

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
)

//go:embed queries/*.scm
var queryFiles embed.FS

// A tag query names its captures by role:
//
//	@definition.KIND  the node a definition spans (KIND: func, class, var, …)
//	@name             the defined name
//	@name.declarator  a C/C++ declarator: the name is found by descending its
//	                  "declarator" fields; passing a function declarator
//	                  makes a var or field a func or method, reaching a
//	                  qualified name (A::f) makes it a method of A
//	@body             where the signature ends (else the node's "body" field)
//	@reference        an identifier use
//	@package          the file's package or namespace
//	@import           an import statement (Python)
const (
	roleNone = iota
	roleDef
	roleName
	roleDeclarator
	roleBody
	roleRef
	rolePackage
	roleImport
)

// tsLang is one tree-sitter language: its grammar, tag query and the node
// types the generic extraction needs to know about.
type tsLang struct {
	name     string
	grammar  func() *sitter.Language
	queries  []string // files under queries/, concatenated in order
	wrappers []string // node types wrapping a definition it spans with (export, template)
	docSkip  []string // node types between a doc comment and its definition (attributes)
	comments []string // comment node types
	methodIn []string // parent kinds under which a func is a method
	sigSkip  []string // leading node types a signature leaves out (annotations, decorators)

	once    sync.Once
	lang    *sitter.Language
	query   *sitter.Query
	roles   []int    // per capture index
	kinds   []string // per capture index, for roleDef
	initErr error
	parsers sync.Pool
}

// cursors are shared by every language: a cursor is bound to a query only
// for the duration of one Exec.
var cursors = sync.Pool{New: func() any { return sitter.NewQueryCursor() }}

func (l *tsLang) init() error {
	l.once.Do(func() {
		l.lang = l.grammar()
		l.parsers.New = func() any {
			p := sitter.NewParser()
			p.SetLanguage(l.lang)
			return p
		}
		var src []byte
		for _, name := range l.queries {
			b, err := queryFiles.ReadFile("queries/" + name)
			if err != nil {
				l.initErr = fmt.Errorf("tag query for %s: %w", l.name, err)
				return
			}
			src = append(append(src, b...), '\n')
		}
		q, err := sitter.NewQuery(src, l.lang)
		if err != nil {
			l.initErr = fmt.Errorf("tag query for %s: %w", l.name, err)
			return
		}
		l.query = q
		n := int(q.CaptureCount())
		l.roles, l.kinds = make([]int, n), make([]string, n)
		for i := range n {
			name := q.CaptureNameForId(uint32(i))
			switch {
			case strings.HasPrefix(name, "definition."):
				l.roles[i], l.kinds[i] = roleDef, strings.TrimPrefix(name, "definition.")
			case name == "name":
				l.roles[i] = roleName
			case name == "name.declarator":
				l.roles[i] = roleDeclarator
			case name == "body":
				l.roles[i] = roleBody
			case name == "reference":
				l.roles[i] = roleRef
			case name == "package":
				l.roles[i] = rolePackage
			case name == "import":
				l.roles[i] = roleImport
			}
		}
	})
	return l.initErr
}

// parse runs the grammar over src and hands the tree's root to use; the
// parser goes back to its pool, the tree is freed after use returns.
func (l *tsLang) parse(src []byte, use func(root *sitter.Node)) error {
	if err := l.init(); err != nil {
		return err
	}
	p := l.parsers.Get().(*sitter.Parser)
	tree, err := p.ParseCtx(context.Background(), nil, src)
	l.parsers.Put(p)
	if err != nil {
		return fmt.Errorf("tree-sitter %s: %w", l.name, err)
	}
	defer tree.Close()
	use(tree.RootNode())
	return nil
}

// rawDef is one definition as the query found it.
type rawDef struct {
	def        Def
	start, end uint32 // byte range of the outer node, for nesting
	nameID     uintptr
	pattern    uint16
	scoped     bool // kind and receiver decided by a qualified name (A::f)
}

func parseTreeSitter(lang string, src []byte) File {
	l := treeSitter[lang]
	f := File{Lang: lang}
	err := l.parse(src, func(root *sitter.Node) {
		if root.HasError() {
			f.Err = syntaxError(root)
		}
		l.extract(root, src, &f)
	})
	if err != nil {
		f.Err = err.Error()
	}
	return f
}

// syntaxError names the line of the first ERROR or missing node.
func syntaxError(root *sitter.Node) string {
	c := sitter.NewTreeCursor(root)
	defer c.Close()
	for {
		n := c.CurrentNode()
		if n.IsError() || n.IsMissing() {
			return fmt.Sprintf("syntax error at line %d", n.StartPoint().Row+1)
		}
		if n.HasError() && c.GoToFirstChild() {
			continue
		}
		for !c.GoToNextSibling() {
			if !c.GoToParent() {
				return "syntax error"
			}
		}
	}
}

func (l *tsLang) extract(root *sitter.Node, src []byte, f *File) {
	qc := cursors.Get().(*sitter.QueryCursor)
	defer cursors.Put(qc)
	qc.Exec(l.query, root)
	var defs []rawDef
	defNames := map[uintptr]bool{}
	type use struct {
		id   uintptr
		n    *sitter.Node
		line int
	}
	li := newLineIndex(src)
	var uses []use
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		var def, name, decl, scope, body *sitter.Node
		kind := ""
		for _, c := range m.Captures {
			switch l.roles[c.Index] {
			case roleDef:
				def, kind = c.Node, l.kinds[c.Index]
			case roleName:
				name = c.Node
			case roleDeclarator:
				decl = c.Node
			case roleBody:
				body = c.Node
			case roleRef:
				uses = append(uses, use{c.Node.ID(), c.Node, li.line(c.Node.StartByte())})
			case rolePackage:
				if f.Package == "" {
					f.Package = strings.Join(strings.Fields(c.Node.Content(src)), "")
				}
			}
		}
		if def == nil {
			continue
		}
		rd := rawDef{pattern: m.PatternIndex}
		rd.def.Kind = kind
		if decl != nil {
			var fn bool
			name, scope, fn = declaratorName(decl)
			if fn {
				switch kind {
				case KindVar:
					rd.def.Kind = KindFunc
				case KindField:
					rd.def.Kind = KindMethod
				}
			}
		}
		if name == nil {
			continue
		}
		if scope != nil {
			rd.def.Recv, rd.def.Kind, rd.scoped = scope.Content(src), KindMethod, true
		}
		rd.def.Name = name.Content(src)
		rd.nameID = name.ID()
		defNames[rd.nameID] = true
		outer := l.outer(def)
		rd.start, rd.end = outer.StartByte(), outer.EndByte()
		rd.def.Start, rd.def.End = lines(outer)
		rd.def.Signature = l.signature(def, outer, body, rd.def.Kind, src)
		rd.def.Doc = l.doc(outer, src)
		defs = append(defs, rd)
	}
	f.Defs = l.nest(defs)
	r := newRefs()
	for _, u := range uses {
		if defNames[u.id] {
			continue
		}
		if name := u.n.Content(src); name != "" && (name[0] < '0' || name[0] > '9') { // not $1 in shell
			r.add(name, u.line)
		}
	}
	r.store(f)
}

// declaratorName descends a C declarator to the name it declares; fn says
// whether a function declarator was on the way, scope is the qualifier of
// a qualified name (A in A::f).
func declaratorName(n *sitter.Node) (name, scope *sitter.Node, fn bool) {
	for n != nil {
		switch n.Type() {
		case "function_declarator":
			fn = true
		case "qualified_identifier":
			scope = n.ChildByFieldName("scope")
			n = n.ChildByFieldName("name")
			continue
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "primitive_type":
			return n, scope, fn
		}
		next := n.ChildByFieldName("declarator")
		if next == nil {
			return nil, nil, fn
		}
		n = next
	}
	return nil, nil, fn
}

// outer climbs from a definition node through the wrappers that belong to it
// (export statements, template declarations).
func (l *tsLang) outer(n *sitter.Node) *sitter.Node {
	for {
		p := n.Parent()
		if p == nil || !slices.Contains(l.wrappers, p.Type()) {
			return n
		}
		n = p
	}
}

// lines returns the 1-based first and last line of n; a node ending at the
// start of a line (one that swallowed its newline) ends on the line before.
func lines(n *sitter.Node) (start, end int) {
	s, e := n.StartPoint(), n.EndPoint()
	end = int(e.Row) + 1
	if e.Column == 0 && e.Row > s.Row {
		end--
	}
	return int(s.Row) + 1, end
}

// valueKinds are definitions whose signature is their whole text, bounded
// short: a value is rarely worth more than a glance.
var valueKinds = map[string]bool{KindVar: true, KindConst: true, KindField: true, KindVariant: true, KindProperty: true}

// signature is the definition's text from its outer start up to its body,
// on one line.
func (l *tsLang) signature(def, outer, body *sitter.Node, kind string, src []byte) string {
	if body == nil {
		body = def.ChildByFieldName("body")
	}
	end := def.EndByte()
	if body != nil && body.StartByte() > outer.StartByte() {
		end = body.StartByte()
	}
	text := string(src[l.sigStart(def, outer):end])
	if kind == KindType && body != nil && end == body.StartByte() && body.EndByte() < def.EndByte() {
		// typedef struct s {…} name: keep the name that follows the body
		after := strings.TrimSpace(strings.TrimRight(string(src[body.EndByte():def.EndByte()]), "; \t\r\n"))
		if after != "" && len(after) < maxValueSignature {
			text += "{…} " + after
		}
	}
	limit := maxSignature
	if valueKinds[kind] {
		limit = maxValueSignature
	}
	s := strings.Join(strings.Fields(text), " ")
	for {
		t := strings.TrimSpace(s)
		for _, suffix := range []string{"{", "=>", "; end", ";", ":", "="} {
			t = strings.TrimSuffix(t, suffix)
		}
		if t == s {
			break
		}
		s = t
	}
	return Truncate(s, limit)
}

// sigStart is where a signature begins: the outer node's start, past any
// leading annotations or decorators (also those inside a modifiers node).
func (l *tsLang) sigStart(def, outer *sitter.Node) uint32 {
	start := outer.StartByte()
	if len(l.sigSkip) == 0 || def.StartByte() != start {
		return start
	}
	n := def
	for range 2 {
		count := int(n.ChildCount())
		k := 0
		for k < count && slices.Contains(l.sigSkip, n.Child(k).Type()) {
			start = n.Child(k).EndByte()
			k++
		}
		if k > 0 || count == 0 || n.Child(0).Type() != "modifiers" {
			return start
		}
		n = n.Child(0)
	}
	return start
}

// doc gathers the comments right above a definition (no blank line between,
// attributes allowed in between) and strips their markers.
func (l *tsLang) doc(outer *sitter.Node, src []byte) string {
	var parts []string
	next, _ := lines(outer) // first line of what the comments must touch
	for p := outer.PrevSibling(); p != nil; p = p.PrevSibling() {
		t := p.Type()
		start, end := lines(p)
		if slices.Contains(l.docSkip, t) {
			next = start
			continue
		}
		if !slices.Contains(l.comments, t) || end < next-1 {
			break
		}
		if q := p.PrevSibling(); q != nil {
			if _, qend := lines(q); qend == start {
				break // a comment trailing the code before it
			}
		}
		text := p.Content(src)
		if strings.HasPrefix(text, "#!") {
			break
		}
		parts = append(parts, text)
		next = start
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Reverse(parts)
	return trimDoc(cleanComment(strings.Join(parts, "\n")))
}

var xmlDocTags = strings.NewReplacer("<summary>", "", "</summary>", "", "<remarks>", "", "</remarks>", "", "<para>", "", "</para>", "")

// cleanComment strips comment markers (//, ///, /* */, /** */, leading *, #)
// and C# doc XML wrappers.
func cleanComment(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"///", "//!", "//", "/**", "/*!", "/*", "#"} {
			if strings.HasPrefix(line, p) {
				line = line[len(p):]
				break
			}
		}
		line = strings.TrimSuffix(strings.TrimSpace(line), "*/")
		line = strings.TrimPrefix(strings.TrimSpace(line), "*")
		line = strings.TrimSpace(xmlDocTags.Replace(line))
		if line != "" || len(out) > 0 {
			out = append(out, line)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// nest turns the flat, query-ordered definitions into a tree by byte-range
// containment, keeps one definition per name node (the earliest pattern
// wins), makes functions inside types methods, and drops locals.
func (l *tsLang) nest(raw []rawDef) []Def {
	best := map[uintptr]int{} // name node → index of its earliest pattern's definition
	for i, d := range raw {
		if j, ok := best[d.nameID]; !ok || d.pattern < raw[j].pattern {
			best[d.nameID] = i
		}
	}
	uniq := make([]rawDef, 0, len(best))
	for i, d := range raw {
		if best[d.nameID] == i {
			uniq = append(uniq, d)
		}
	}
	slices.SortStableFunc(uniq, func(a, b rawDef) int {
		switch {
		case a.start != b.start:
			return int(a.start) - int(b.start)
		case a.end != b.end:
			return int(b.end) - int(a.end)
		}
		return int(a.pattern) - int(b.pattern)
	})
	i := 0
	var build func(parent *rawDef, end uint32) []Def
	build = func(parent *rawDef, end uint32) []Def {
		var out []Def
		for i < len(uniq) && uniq[i].start < end {
			if parent != nil && uniq[i].start == parent.start && uniq[i].end == parent.end {
				break // a sibling declared by the same statement (int a, b;)
			}
			d := uniq[i]
			i++
			d.def.Children = build(&d, d.end)
			if parent != nil && !l.adopt(parent.def, &d) {
				out = append(out, d.def.Children...) // a local: keep what it holds
				continue
			}
			out = append(out, d.def)
		}
		return out
	}
	return build(nil, ^uint32(0))
}

// adopt fixes the kind and receiver of d as a child of parent; false when d
// is a local of a function and not worth listing.
func (l *tsLang) adopt(parent Def, d *rawDef) bool {
	inFunc := parent.Kind == KindFunc || parent.Kind == KindMethod || parent.Kind == KindCtor
	if inFunc {
		switch d.def.Kind {
		case KindVar, KindConst, KindField, KindProperty:
			return false
		}
		return true
	}
	if d.scoped {
		return true
	}
	if d.def.Kind == KindFunc && slices.Contains(l.methodIn, parent.Kind) {
		d.def.Kind = KindMethod
	}
	if d.def.Recv == "" && (parent.Kind != KindModule || d.def.Kind == KindMethod) {
		d.def.Recv = parent.Name
	}
	return true
}

// lineIndex finds the line of a byte offset without asking tree-sitter (a
// cgo call per reference adds up over a large repository).
type lineIndex []uint32 // offsets of the line starts after the first

func newLineIndex(src []byte) lineIndex {
	var li lineIndex
	for i, b := range src {
		if b == '\n' {
			li = append(li, uint32(i+1))
		}
	}
	return li
}

// line returns the 1-based line holding byte offset off.
func (li lineIndex) line(off uint32) int {
	n, _ := slices.BinarySearch(li, off+1)
	return n + 1
}
