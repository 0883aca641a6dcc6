//go:build !cgo

package symbols

// treeSitter is empty without cgo: every grammar but Go's is tree-sitter C
// code, so such a build parses Go only (Missing lists the rest).
var treeSitter = map[string]struct{}{}

func parseTreeSitter(lang string, _ []byte) File {
	return File{Lang: lang, Err: lang + " needs a build of synaxi-mapgen with cgo; this one has none"}
}

func parsePython([]byte) File { return parseTreeSitter("python", nil) }
