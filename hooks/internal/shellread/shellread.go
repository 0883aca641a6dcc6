// Package shellread decides what a shell command line shows the model of
// which files, and which files it may change.
//
// The line is parsed as bash with mvdan.cc/sh/v3/syntax and its simple
// commands are walked in execution order: sequences, && and ||, pipelines,
// subshells and blocks, if/while/for/case bodies, functions, and command
// and process substitutions. The working directory follows cd (scoped to a
// subshell; unknown after a conditional cd), and a for loop over literal
// words is walked once per word with its variable bound.
//
// It is deliberately conservative in one direction: a command counts as a
// read only when it runs unconditionally and its whole output is file
// content the model will see as is (cat, head, tail, sed -n 'A,Bp', awk NR
// ranges, nl, bat, less, more, optionally narrowed by a later
// head/tail/sed stage). A stage piped into a search, a test run, an
// interpreter or any other program, output redirected to a file, input
// from a here-document, a read inside a condition, a loop or a
// substitution is never a read, so the hook never blocks those commands.
// Edits are detected generously (redirect targets, tee, sed -i, mv/cp/rm,
// git checkout/apply/reset/stash/restore, formatters, xargs and find
// -exec/-delete with unknown operands, edits inside any compound command or
// substitution, and any line that does not parse): forgetting a read
// costs one allowed re-read, while missing an edit could deny fresh
// content.
package shellread

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Range is a 1-based inclusive line range; End 0 means "to the end of the
// file".
type Range struct {
	Start int
	End   int
}

// View is what a read shows of one file: line ranges, or the last Tail lines
// (resolved against the file's length by the caller).
type View struct {
	Ranges []Range
	Tail   int
}

// Whole is the view of an entire file.
func Whole() View { return View{Ranges: []Range{{1, 0}}} }

// Read is one file a command shows the model.
type Read struct {
	Path string // absolute when Parse was given a directory, else as written
	View View
}

// Analysis is what a command line reads and changes.
type Analysis struct {
	Reads []Read
	// Edits are files the command may create, change or remove.
	Edits []string
	// Global is set when the command may change files it does not name
	// (git checkout, patch, formatters, …): forget every read.
	Global bool
	// OnlyReads is set when every statement is a recognised read or a
	// harmless companion (cd, echo, pwd), so denying the command blocks
	// nothing else the agent meant to run.
	OnlyReads bool
}

// Parse analyses a command line run in directory dir ("" leaves relative
// paths as written). The line is parsed as bash by mvdan.cc/sh's parser
// and walked in execution order. A line that does not parse (the shell
// would refuse it too) reads nothing and is taken to change anything.
func Parse(cmd, dir string) Analysis {
	a := Analysis{OnlyReads: true}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return Analysis{Global: true}
	}
	w := walker{a: &a, dir: dir, vars: map[string]string{}}
	w.list(f.Stmts, true)
	if !w.any || len(a.Reads) == 0 {
		a.OnlyReads = false
	}
	return a
}

// harmless reports a statement that shows no file and changes nothing.
func harmless(s statement) bool {
	if len(s.stages) != 1 || len(s.stages[0].redirects) > 0 || s.stages[0].opaque {
		return false
	}
	name, _ := command(s.stages[0].words)
	switch name {
	case "echo", "printf", "pwd", "true", ":", "popd":
		return true
	}
	return false
}

// changeDir applies "cd args" to dir; an unknown target makes dir unknown.
func changeDir(dir string, args []token) string {
	var target *token
	for i := range args {
		if args[i].text == "--" || strings.HasPrefix(args[i].text, "-") && args[i].text != "-" {
			continue
		}
		target = &args[i]
		break
	}
	if target == nil || target.dynamic || target.text == "-" || target.text == "" {
		return unknownDir
	}
	if path.IsAbs(target.text) {
		return path.Clean(target.text)
	}
	if dir == "" || dir == unknownDir {
		return unknownDir
	}
	return path.Join(dir, target.text)
}

// unknownDir marks a directory the parser cannot know (cd $X, cd -).
const unknownDir = "\x00unknown"

// resolve makes p absolute against dir; ok is false when it cannot be known.
func resolve(dir string, t token) (string, bool) {
	if t.dynamic || t.text == "" {
		return "", false
	}
	p := t.text
	if path.IsAbs(p) {
		return path.Clean(p), true
	}
	if dir == unknownDir {
		return "", false
	}
	if dir == "" {
		return path.Clean(p), true
	}
	return path.Join(dir, p), true
}

// wrappers run the command that follows them; the value is how many
// arguments they take before it.
var wrappers = map[string]int{
	"sudo": 0, "command": 0, "builtin": 0, "exec": 0, "nohup": 0, "time": 0,
	"nice": 0, "stdbuf": 0, "env": 0, "timeout": 1, "ionice": 0,
}

// command returns a stage's command name (base name, wrappers and
// assignments skipped) and its arguments.
func command(words []token) (string, []token) {
	i := 0
	for i < len(words) {
		w := words[i]
		if isAssignment(w.text) {
			i++
			continue
		}
		name := path.Base(w.text)
		if w.dynamic {
			return "", nil
		}
		n, wrap := wrappers[name]
		if !wrap {
			return name, words[i+1:]
		}
		i++
		for i < len(words) && strings.HasPrefix(words[i].text, "-") {
			i++
		}
		i += n
	}
	return "", nil
}

func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return s[0] < '0' || s[0] > '9'
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
