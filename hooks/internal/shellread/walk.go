package shellread

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// token is one word of a simple command as the analysis sees it: its text
// with quotes and escapes removed, and dynamic set when its value is not
// known statically (an expansion, a command substitution, a glob, a brace
// expansion, a leading tilde).
type token struct {
	text    string
	dynamic bool
}

// dyn is a word whose value is not known.
var dyn = token{text: "$", dynamic: true}

// stage is one simple command of a pipeline. opaque marks a compound
// command (a loop, a block) in a pipeline: it is no read and no filter.
type stage struct {
	words     []token
	redirects []redirect
	heredoc   bool // stdin from a here-document or here-string
	opaque    bool
}

type redirect struct {
	op     string
	fd     string
	target token
}

// statement is a pipeline of one or more stages.
type statement struct {
	stages []stage
}

// maxLoopItems bounds how many values of a for loop's word list are
// substituted into its body; a longer list makes the variable unknown.
const maxLoopItems = 64

// maxDepth bounds nesting (sh -c inside sh -c, loops inside loops), so an
// adversarial command cannot make the analysis expensive.
const maxDepth = 16

// walker walks a parsed command line in execution order, threading the
// working directory through cd and binding for-loop variables to the
// literal words they iterate over.
type walker struct {
	a    *Analysis
	dir  string
	vars map[string]string
	any  bool // a statement was seen
	// depth counts nested bodies, for maxDepth.
	depth int
}

// list walks statements run one after another. visible says whether what
// they print reaches the model for certain (not inside a condition, a loop
// body, a substitution or a redirected block).
func (w *walker) list(stmts []*syntax.Stmt, visible bool) {
	for _, s := range stmts {
		w.stmt(s, visible)
	}
}

func (w *walker) stmt(s *syntax.Stmt, visible bool) {
	w.any = true
	if w.depth > maxDepth {
		w.a.Global, w.a.OnlyReads = true, false
		return
	}
	switch c := s.Cmd.(type) {
	case nil, *syntax.CallExpr:
		w.pipeline(s, visible)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.pipeline(s, visible)
			return
		}
	}
	// A compound command: its own redirections apply to all of its output.
	if len(s.Redirs) > 0 {
		st := w.stage(&syntax.Stmt{Redirs: s.Redirs})
		if w.edits(statement{stages: []stage{st}}) || hidesOutput(st) {
			visible = false
			w.a.OnlyReads = false
		}
	}
	w.depth++
	defer func() { w.depth-- }()
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd: // && and ||
		w.stmt(c.X, visible)
		w.stmt(c.Y, visible)
	case *syntax.Block:
		w.list(c.Stmts, visible)
	case *syntax.Subshell:
		dir := w.dir
		w.list(c.Stmts, visible)
		w.dir = dir
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, visible)
		}
	case *syntax.IfClause:
		w.a.OnlyReads = false
		w.conditional(func() {
			for cl := c; cl != nil; cl = cl.Else {
				w.list(cl.Cond, false)
				w.list(cl.Then, false)
			}
		})
	case *syntax.WhileClause:
		w.a.OnlyReads = false
		w.conditional(func() {
			w.list(c.Cond, false)
			w.list(c.Do, false)
		})
	case *syntax.ForClause:
		w.a.OnlyReads = false
		w.conditional(func() { w.forLoop(c) })
	case *syntax.CaseClause:
		w.a.OnlyReads = false
		w.substitutions(c.Word)
		w.conditional(func() {
			for _, it := range c.Items {
				w.list(it.Stmts, false)
			}
		})
	case *syntax.FuncDecl:
		// The body runs only if called; its edits count anyway, as a call
		// may follow.
		w.a.OnlyReads = false
		w.conditional(func() { w.stmt(c.Body, false) })
	case *syntax.CoprocClause:
		w.a.OnlyReads = false
		w.conditional(func() { w.stmt(c.Stmt, false) })
	case *syntax.DeclClause:
		w.a.OnlyReads = false
		for _, as := range c.Args {
			if as.Name != nil {
				delete(w.vars, as.Name.Value)
			}
		}
		w.substitutions(c)
	case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause:
		w.a.OnlyReads = false
		w.substitutions(c)
	default:
		// A construct this walker does not know: it may change anything.
		w.a.OnlyReads = false
		w.a.Global = true
	}
}

// conditional runs fn for a body that may run zero or more times: a cd in
// it leaves the directory unknown afterwards.
func (w *walker) conditional(fn func()) {
	dir := w.dir
	fn()
	if w.dir != dir {
		w.dir = unknownDir
	}
}

// forLoop walks a for loop's body once per literal item, with the loop
// variable bound to it, so `for f in a.go b.go; do sed -i … "$f"; done`
// edits exactly a.go and b.go. Items that are not literal (a glob, $@, a
// substitution) leave the variable unknown.
func (w *walker) forLoop(c *syntax.ForClause) {
	it, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.substitutions(c.Loop)
		w.list(c.Do, false)
		return
	}
	name := it.Name.Value
	old, had := w.vars[name]
	defer func() {
		if had {
			w.vars[name] = old
		} else {
			delete(w.vars, name)
		}
	}()
	var items []string
	literal := it.InPos.IsValid() && len(it.Items) <= maxLoopItems
	for _, word := range it.Items {
		w.substitutions(word)
		t := w.word(word)
		if t.dynamic {
			literal = false
		}
		items = append(items, t.text)
	}
	if !literal {
		delete(w.vars, name)
		w.list(c.Do, false)
		return
	}
	for _, v := range items {
		w.vars[name] = v
		w.list(c.Do, false)
	}
}

// pipeline analyses a simple command or a pipeline of them.
func (w *walker) pipeline(s *syntax.Stmt, visible bool) {
	var st statement
	w.stages(s, &st)
	if len(st.stages) == 1 && !st.stages[0].opaque {
		// cd changes where later relative paths point (not inside a
		// pipeline, whose stages run in subshells).
		if name, args := command(st.stages[0].words); name == "cd" || name == "pushd" {
			w.dir = changeDir(w.dir, args)
			if len(st.stages[0].redirects) > 0 {
				w.a.OnlyReads = false
			}
			return
		}
	}
	w.statement(st, visible)
}

// statement records a pipeline's edits and, when visible, its reads.
func (w *walker) statement(st statement, visible bool) {
	edited := w.edits(st)
	if !visible {
		w.a.OnlyReads = false
		return
	}
	reads, ok := statementReads(st, w.dir)
	w.a.Reads = append(w.a.Reads, reads...)
	if !ok && !harmless(st) || edited {
		w.a.OnlyReads = false
	}
}

// edits records what a pipeline may change and reports whether it may
// change anything.
func (w *walker) edits(st statement) bool {
	edits, global := statementEdits(st, w.dir)
	w.a.Edits = append(w.a.Edits, edits...)
	w.a.Global = w.a.Global || global
	return len(edits) > 0 || global
}

// stages flattens a pipeline into its stages, left to right. A compound
// command in a pipeline becomes an opaque stage, its inside walked for
// edits in a subshell of its own.
func (w *walker) stages(s *syntax.Stmt, st *statement) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		w.stages(b.X, st)
		w.stages(b.Y, st)
		return
	}
	switch s.Cmd.(type) {
	case nil, *syntax.CallExpr:
		st.stages = append(st.stages, w.stage(s))
	default:
		op := w.stage(&syntax.Stmt{Redirs: s.Redirs})
		op.opaque = true
		st.stages = append(st.stages, op)
		inner := *s
		inner.Redirs = nil
		dir := w.dir
		w.depth++
		w.stmt(&inner, false)
		w.depth--
		w.dir = dir
	}
}

// stage converts a simple command: its words (assignments dropped; an
// assignment makes its variable unknown) and redirections. Command and
// process substitutions anywhere in it are walked for their edits.
func (w *walker) stage(s *syntax.Stmt) stage {
	var st stage
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		for _, as := range call.Assigns {
			w.substitutions(as)
			if len(call.Args) == 0 && as.Name != nil {
				delete(w.vars, as.Name.Value)
			}
		}
		for _, word := range call.Args {
			w.substitutions(word)
			st.words = append(st.words, w.word(word))
		}
	}
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			st.heredoc = true
			if r.Hdoc != nil {
				w.substitutions(r.Hdoc) // an unquoted here-document expands $(…)
			}
			if r.Op == syntax.WordHdoc && r.Word != nil {
				w.substitutions(r.Word)
			}
			continue
		}
		rd := redirect{op: r.Op.String()}
		if r.N != nil {
			rd.fd = r.N.Value
		}
		if r.Word != nil {
			w.substitutions(r.Word)
			rd.target = w.word(r.Word)
		}
		st.redirects = append(st.redirects, rd)
	}
	return st
}

// substitutions walks the command and process substitutions inside node:
// they run, so their edits count, and nothing they print reaches the model
// as a file's content.
func (w *walker) substitutions(node syntax.Node) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		var stmts []*syntax.Stmt
		switch c := n.(type) {
		case *syntax.CmdSubst:
			stmts = c.Stmts
		case *syntax.ProcSubst:
			stmts = c.Stmts
		default:
			return true
		}
		w.a.OnlyReads = false
		dir := w.dir
		w.depth++
		w.list(stmts, false)
		w.depth--
		w.dir = dir
		return false
	})
}

// word converts a shell word to a token: quotes and escapes removed, a
// bound loop variable substituted, anything else that expands marks it
// dynamic.
func (w *walker) word(word *syntax.Word) token {
	var b strings.Builder
	known := true
	for i, part := range word.Parts {
		known = w.part(&b, part, i == 0, false) && known
	}
	return token{text: b.String(), dynamic: !known}
}

// part writes one part of a word (inside double quotes when quoted) and
// reports whether its value is known.
func (w *walker) part(b *strings.Builder, part syntax.WordPart, first, quoted bool) bool {
	switch p := part.(type) {
	case *syntax.Lit:
		if quoted {
			b.WriteString(unescapeDouble(p.Value))
			return true
		}
		return !unquoted(b, p.Value, first)
	case *syntax.SglQuoted:
		b.WriteString(p.Value)
		return !p.Dollar || !strings.ContainsRune(p.Value, '\\') // $'…' escapes
	case *syntax.DblQuoted:
		known := true
		for _, q := range p.Parts {
			known = w.part(b, q, false, true) && known
		}
		return known
	case *syntax.ParamExp:
		return w.param(b, p)
	}
	b.WriteByte('$')
	return false
}

// param writes the value of a plain $name or ${name} bound by a for loop
// and reports whether it could.
func (w *walker) param(b *strings.Builder, p *syntax.ParamExp) bool {
	plain := p.Param != nil && p.NestedParam == nil && p.Index == nil && p.Slice == nil && p.Repl == nil &&
		p.Exp == nil && p.Names == 0 && len(p.Modifiers) == 0 && !p.Excl && !p.Length && !p.Width && !p.IsSet
	if plain {
		if v, ok := w.vars[p.Param.Value]; ok {
			b.WriteString(v)
			return true
		}
	}
	b.WriteByte('$')
	return false
}

// unquoted writes an unquoted literal with its backslash escapes removed
// and reports whether the shell would expand it further: a glob character,
// a brace (expansion), or a tilde at the start of the word.
func unquoted(b *strings.Builder, s string, first bool) (dynamic bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case c == '*' || c == '?' || c == '[' || c == '{' || c == '}':
			dynamic = true
			b.WriteByte(c)
		case c == '~' && i == 0 && first:
			dynamic = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return dynamic
}

// unescapeDouble removes the backslashes that escape a character inside
// double quotes ($ ` " \); any other backslash stays.
func unescapeDouble(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
