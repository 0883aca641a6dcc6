package repomap

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// A map names the languages present that this build cannot parse; in a cgo
// build every language parses and the note is absent, in a build without
// cgo the Rust and TypeScript files are counted, never silently dropped.
func TestMapNamesUnparsedLanguages(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.go":    "package main\n\nfunc main() {}\n",
		"src/lib.rs": "pub fn lib() {}\n",
		"src/a.rs":   "pub fn a() {}\n",
		"web/app.ts": "export function app() {}\n",
	})
	ix := build(t, dir, "")
	text := ix.Map(MapOptions{}).Text
	want := map[string]int{}
	for _, l := range []string{"rust", "rust", "typescript"} {
		if !symbols.Supported(l) {
			want[l]++
		}
	}
	if len(want) == 0 {
		assert.Nil(t, ix.Stats.Unparsed)
		assert.NotContains(t, text, "cannot parse")
		assert.Len(t, ix.Entries(), 4)
		return
	}
	assert.Equal(t, want, ix.Stats.Unparsed)
	assert.Contains(t, text, "# note: this build of synaxi-mapgen cannot parse rust 2, typescript 1 (files not mapped)")
}

func TestUnparsedNote(t *testing.T) {
	ix := &Index{Stats: Stats{Unparsed: map[string]int{"ruby": 3, "c": 1}}}
	assert.Equal(t, "# note: this build of synaxi-mapgen cannot parse c 1, ruby 3 (files not mapped): it was built without cgo; `synaxi-mapgen languages` lists what it parses\n", ix.unparsedNote())
	assert.Empty(t, (&Index{}).unparsedNote())
}
