//go:build !cgo

package symbols

// pythonSupported is false without cgo: the Python parser is tree-sitter's C
// grammar.
const pythonSupported = false

func parsePython([]byte) File { return File{Lang: "python", Err: "python support needs a cgo build"} }
