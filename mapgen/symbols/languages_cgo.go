//go:build cgo

package symbols

import (
	"github.com/smacker/go-tree-sitter/bash"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/csharp"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

var (
	slashComments = []string{"comment"}
	typeParents   = []string{KindClass, KindStruct, KindInterface, KindEnum, KindTrait, KindImpl}
)

// treeSitter holds the languages parsed with tree-sitter, by name. Grammars
// and queries load on first use.
var treeSitter = map[string]*tsLang{
	"python": {name: "python", queries: []string{"python.scm"}, grammar: python.GetLanguage},
	"typescript": {name: "typescript", queries: []string{"ecmascript.scm", "typescript.scm"}, grammar: typescript.GetLanguage, wrappers: []string{"export_statement"},
		comments: slashComments, methodIn: typeParents, sigSkip: []string{"decorator"}},
	"tsx": {name: "tsx", queries: []string{"ecmascript.scm", "typescript.scm"}, grammar: tsx.GetLanguage, wrappers: []string{"export_statement"},
		comments: slashComments, methodIn: typeParents, sigSkip: []string{"decorator"}},
	"javascript": {name: "javascript", queries: []string{"ecmascript.scm", "javascript.scm"}, grammar: javascript.GetLanguage, wrappers: []string{"export_statement"},
		comments: slashComments, methodIn: typeParents, sigSkip: []string{"decorator"}},
	"rust": {name: "rust", queries: []string{"rust.scm"}, grammar: rust.GetLanguage,
		docSkip: []string{"attribute_item"}, comments: []string{"line_comment", "block_comment"}, methodIn: typeParents},
	"java": {name: "java", queries: []string{"java.scm"}, grammar: java.GetLanguage,
		comments: []string{"line_comment", "block_comment"}, methodIn: typeParents,
		sigSkip: []string{"annotation", "marker_annotation"}},
	"c": {name: "c", queries: []string{"c.scm"}, grammar: c.GetLanguage, comments: slashComments, methodIn: typeParents},
	"cpp": {name: "cpp", queries: []string{"cpp.scm"}, grammar: cpp.GetLanguage,
		wrappers: []string{"template_declaration"}, comments: slashComments, methodIn: typeParents},
	"ruby": {name: "ruby", queries: []string{"ruby.scm"}, grammar: ruby.GetLanguage,
		comments: slashComments, methodIn: append([]string{KindModule}, typeParents...)},
	"csharp": {name: "csharp", queries: []string{"csharp.scm"}, grammar: csharp.GetLanguage,
		comments: slashComments, methodIn: typeParents, sigSkip: []string{"attribute_list"}},
	"bash": {name: "bash", queries: []string{"bash.scm"}, grammar: bash.GetLanguage, comments: slashComments},
}
