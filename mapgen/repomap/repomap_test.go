package repomap

import (
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is a small multi-package Go repository: core is used by most
// packages, util by some, rare only by lonely.
var fixture = map[string]string{
	"go.mod": "module example.com/fx\n",
	"core/core.go": `// Package core stores things.
package core

// Store holds values.
type Store struct{ m map[string]string }

// NewStore makes a Store.
func NewStore() *Store { return &Store{m: map[string]string{}} }

// Get returns a value.
func (s *Store) Get(k string) string {
	if s == nil {
		return ""
	}
	return s.m[k]
}

func (s *Store) helper() int { return len(s.m) }
`,
	"util/util.go": `package util

// Reverse reverses s.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func Title(s string) string { return s }
`,
	"rare/rare.go": `package rare

// RareHelper is used in one place.
func RareHelper() int { return 42 }

// OtherRare is used nowhere.
func OtherRare() int { return 7 }
`,
	"app/main.go": `package main

import (
	"example.com/fx/core"
	"example.com/fx/util"
)

func main() {
	s := core.NewStore()
	println(util.Reverse(s.Get("a")), s.Get("b"))
}
`,
	"api/api.go": `package api

import "example.com/fx/core"

// Handler serves a store.
type Handler struct{ S *core.Store }

func New() *Handler { return &Handler{S: core.NewStore()} }

func (h *Handler) Value(k string) string { return h.S.Get(k) }
`,
	"cli/cli.go": `package cli

import (
	"example.com/fx/core"
	"example.com/fx/util"
)

func Run() string { return util.Title(core.NewStore().Get("x")) }
`,
	"lonely/lonely.go": `package lonely

import "example.com/fx/rare"

func Use() int { return rare.RareHelper() }
`,
}

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func build(t testing.TB, dir, cacheDir string) *Index {
	t.Helper()
	root, err := walk.NewRoot(dir)
	require.NoError(t, err)
	ixr := &Indexer{Root: root, Store: cache.Store{Dir: cacheDir}}
	ix, err := ixr.Build(context.Background())
	require.NoError(t, err)
	return ix
}

func defOrder(ix *Index, focus map[int]bool) []string {
	var out []string
	for _, d := range rank(ix.Entries(), focus, nil).defs {
		out = append(out, ix.Entries()[d.file].Rel+":"+d.def.Name)
	}
	return out
}

func TestMapDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	cold := build(t, dir, t.TempDir())
	warm := build(t, dir, "")
	for _, budget := range []int{60, 200, 5000} {
		a := cold.Map(MapOptions{Budget: budget})
		b := warm.Map(MapOptions{Budget: budget})
		assert.Equal(t, a.Text, b.Text, "budget %d", budget)
		assert.Equal(t, a.Text, cold.Map(MapOptions{Budget: budget}).Text)
	}
	// A copy of the repository elsewhere maps to the same bytes.
	other := filepath.Join(t.TempDir(), filepath.Base(dir))
	writeTree(t, other, fixture)
	assert.Equal(t, cold.Map(MapOptions{Budget: 5000}).Text, build(t, other, "").Map(MapOptions{Budget: 5000}).Text)
}

func TestRankingFollowsReferences(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	ix := build(t, dir, "")
	order := defOrder(ix, nil)
	require.NotEmpty(t, order)
	assert.Equal(t, "core/core.go", strings.Split(order[0], ":")[0], "the most used package ranks first: %v", order)
	assert.Less(t, slices.Index(order, "core/core.go:NewStore"), slices.Index(order, "rare/rare.go:RareHelper"))
	assert.Less(t, slices.Index(order, "rare/rare.go:RareHelper"), slices.Index(order, "rare/rare.go:OtherRare"),
		"a referenced definition outranks an unreferenced one in the same file")
}

func TestFocusChangesOrder(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	ix := build(t, dir, "")
	plain := defOrder(ix, nil)
	lonely := slices.IndexFunc(ix.Entries(), func(e Entry) bool { return e.Rel == "lonely/lonely.go" })
	require.GreaterOrEqual(t, lonely, 0)
	focused := defOrder(ix, map[int]bool{lonely: true})
	assert.Equal(t, "rare/rare.go:RareHelper", focused[0], "focus pulls what the focus file uses to the top: %v", focused)
	assert.Less(t, slices.Index(focused, "rare/rare.go:RareHelper"), slices.Index(plain, "rare/rare.go:RareHelper"))

	firstFile := func(text string) string {
		_, after, _ := strings.Cut(text, "\n\n")
		first, _, _ := strings.Cut(after, "\n")
		return first
	}
	assert.Equal(t, "core/core.go", firstFile(ix.Map(MapOptions{Budget: 80}).Text))
	abs := filepath.Join(dir, "lonely", "lonely.go") // absolute focus paths work too
	assert.Equal(t, "rare/rare.go", firstFile(ix.Map(MapOptions{Budget: 80, Focus: []string{abs}}).Text))

	// An identifier as focus pulls its definition up too.
	assert.Equal(t, "rare/rare.go", firstFile(ix.Map(MapOptions{Budget: 80, Focus: []string{"RareHelper"}}).Text))
	assert.Equal(t, "rare/rare.go", firstFile(ix.Map(MapOptions{Budget: 80, Focus: []string{"rare.RareHelper"}}).Text))

	res := ix.Map(MapOptions{Focus: []string{"nope.go", "Undefined", "a b"}})
	assert.Equal(t, []string{"nope.go", "Undefined", "a b"}, res.UnknownFocus)
}

func TestBudgetRespected(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	ix := build(t, dir, "")
	prev := 0
	for _, budget := range []int{40, 60, 90, 150, 300, 10000} {
		res := ix.Map(MapOptions{Budget: budget})
		assert.Equal(t, EstimateTokens(res.Text), res.Tokens)
		if res.Shown > 0 {
			assert.LessOrEqual(t, res.Tokens, budget, "budget %d:\n%s", budget, res.Text)
		}
		assert.GreaterOrEqual(t, res.Shown, prev, "a bigger budget never shows less")
		prev = res.Shown
	}
	all := ix.Map(MapOptions{Budget: 10000})
	assert.Equal(t, all.Total, all.Shown)
	assert.Equal(t, len(ix.Entries()), all.Files)
}

// age sets the modification time of everything under dir to one fixed past
// moment,
// so an index built now can trust the times it records.
func age(t testing.TB, dir string) {
	t.Helper()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

func TestPersistedIndex(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	age(t, dir)
	store := t.TempDir()
	first := build(t, dir, store)
	assert.Equal(t, first.NumFiles(), first.Stats.Parsed)
	assert.True(t, first.Stats.Walked)
	firstMap := first.Map(MapOptions{Budget: 300})

	// A new process: nothing changed, so no walk and no parse; the map
	// comes back byte for byte (from the kept maps).
	second := build(t, dir, store)
	assert.False(t, second.Stats.Walked)
	assert.Zero(t, second.Stats.Parsed)
	assert.Equal(t, first.NumFiles(), second.Stats.Reused)
	want := slices.Clone(first.Entries())
	for i := range want {
		want[i].RefLines = nil // decoded per file, for lookups only
	}
	assert.Equal(t, want, second.Entries())
	assert.Equal(t, firstMap, build(t, dir, store).Map(MapOptions{Budget: 300}))
	assert.Contains(t, build(t, dir, store).Find("RareHelper", true), "rare/rare.go:4")

	// A changed file is parsed again; the rest are reused.
	writeTree(t, dir, map[string]string{"rare/rare.go": "package rare\n\nfunc Changed() {}\n"})
	age(t, dir)
	third := build(t, dir, store)
	assert.True(t, third.Stats.Walked)
	assert.Equal(t, 1, third.Stats.Parsed)
	assert.Equal(t, third.NumFiles()-1, third.Stats.Reused)
	assert.Contains(t, build(t, dir, store).Find("Changed", false), "rare/rare.go:3")
	assert.NotEqual(t, firstMap.Text, build(t, dir, store).Map(MapOptions{Budget: 300}).Text)

	// A same-size edit within the racy window is caught by the hash.
	writeTree(t, dir, map[string]string{"rare/rare.go": "package rare\n\nfunc Chang3d() {}\n"})
	fourth := build(t, dir, store)
	assert.Contains(t, fourth.Find("Chang3d", false), "rare/rare.go:3")
	fifth := build(t, dir, store)
	assert.Equal(t, 1, fifth.Stats.Rehashed+fifth.Stats.Parsed, "a recently modified file is re-read")
	assert.Contains(t, fifth.Find("Chang3d", false), "rare/rare.go:3")

	// A new .gitignore hides a file.
	writeTree(t, dir, map[string]string{".gitignore": "rare/\n"})
	age(t, dir)
	assert.NotContains(t, build(t, dir, store).Map(MapOptions{Budget: 5000}).Text, "rare/rare.go")

	// Editing it in place (the directory's time does not change) is seen too.
	writeTree(t, dir, map[string]string{".gitignore": "util/\n# rare is back\n"})
	age(t, dir)
	text := build(t, dir, store).Map(MapOptions{Budget: 5000}).Text
	assert.Contains(t, text, "rare/rare.go")
	assert.NotContains(t, text, "util/util.go")
}

func TestIndexerMemo(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	age(t, dir)
	root, err := walk.NewRoot(dir)
	require.NoError(t, err)
	ixr := &Indexer{Root: root}
	first, err := ixr.Build(context.Background())
	require.NoError(t, err)
	firstMap := first.Map(MapOptions{Budget: 300})
	second, err := ixr.Build(context.Background())
	require.NoError(t, err)
	assert.Same(t, first, second, "nothing changed: the same index")
	assert.Equal(t, firstMap, second.Map(MapOptions{Budget: 300}))

	writeTree(t, dir, map[string]string{"rare/rare.go": "package rare\n\nfunc Changed() { /* longer */ }\n"})
	third, err := ixr.Build(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, third.Stats.Parsed)
	assert.Contains(t, third.Find("Changed", false), "rare/rare.go:3")
	assert.NotSame(t, second.maps, third.maps, "a changed file renders anew")
	assert.NotEqual(t, firstMap.Text, third.Map(MapOptions{Budget: 300}).Text)

	require.NoError(t, os.Remove(filepath.Join(dir, "rare", "rare.go")))
	fourth, err := ixr.Build(context.Background())
	require.NoError(t, err)
	assert.NotSame(t, third.maps, fourth.maps, "a removed file renders anew")
	assert.Len(t, fourth.Entries(), len(third.Entries())-1)
}

func TestSkipsGeneratedAndBinary(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.go":   "package a\n\nfunc A() {}\n",
		"gen.go": "// Code generated by x. DO NOT EDIT.\n\npackage a\n\nfunc Gen() {}\n",
		"bin.go": "package a\x00\x01",
	})
	ix := build(t, dir, "")
	require.Len(t, ix.Entries(), 1)
	assert.Equal(t, "a.go", ix.Entries()[0].Rel)
	assert.Equal(t, 2, ix.Stats.Skipped)
}

func TestOutlineGolden(t *testing.T) {
	root, err := walk.NewRoot("../symbols/testdata")
	require.NoError(t, err)
	for _, name := range []string{"sample.go", "sample.py"} {
		t.Run(name, func(t *testing.T) {
			if symbols.Language(name) == "" {
				t.Skipf("%s not supported in this build", name)
			}
			rel, f, err := ParseFile(root, name)
			require.NoError(t, err)
			got := Outline(rel, f)
			golden := filepath.Join("testdata", name+".outline")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

func TestParseFileErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.go": "package a\n", "notes.txt": "hi\n", "d/x.go": "package d\n"})
	root, err := walk.NewRoot(dir)
	require.NoError(t, err)
	_, _, err = ParseFile(root, "../etc/passwd")
	require.ErrorIs(t, err, walk.ErrOutsideRoot)
	_, _, err = ParseFile(root, "notes.txt")
	require.ErrorIs(t, err, ErrUnsupported)
	_, _, err = ParseFile(root, "d")
	require.ErrorContains(t, err, "is a directory")
	_, _, err = ParseFile(root, "missing.go")
	require.Error(t, err)
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	ix := build(t, dir, "")

	got := ix.Find("Get", false)
	assert.Contains(t, got, "method Store.Get — core/core.go:11-16")
	assert.Contains(t, got, "// Get returns a value.")
	assert.Contains(t, got, "  L12: \tif s == nil {")
	assert.NotContains(t, got, "# references")

	assert.Equal(t, got, ix.Find("Store.Get", false))
	assert.Contains(t, ix.Find("Handler.Get", false), "no definition of")

	withRefs := ix.Find("NewStore", true)
	assert.Contains(t, withRefs, "func NewStore — core/core.go:8")
	assert.Contains(t, withRefs, "# references to NewStore: 3")
	assert.Contains(t, withRefs, "app/main.go:9: s := core.NewStore()")
	assert.Contains(t, withRefs, "api/api.go:8:")
	assert.Contains(t, withRefs, "cli/cli.go:8:")
	assert.NotContains(t, withRefs, "core/core.go:8: func NewStore", "the definition line is not a reference")

	assert.Contains(t, ix.Find("Nope", false), `no definition of "Nope" found in 7 indexed source files`)
}

func TestContainsWord(t *testing.T) {
	assert.True(t, containsWord("x := Get(k)", "Get"))
	assert.True(t, containsWord("Get", "Get"))
	assert.False(t, containsWord("GetAll()", "Get"))
	assert.False(t, containsWord("doGet()", "Get"))
	assert.True(t, containsWord("doGet(); Get()", "Get"))
}

func TestMapEmptyRepository(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"README.md": "# hi\n", "web/app.txt": "console.log(1)\n"})
	res := build(t, dir, "").Map(MapOptions{})
	assert.Contains(t, res.Text, ": no source files found (languages parsed: ")
	assert.Zero(t, res.Shown)
}

// TestSymbolFreshness checks that a warm symbol lookup (no walk when every
// recorded directory and file stat matches) never answers from a stale
// index: the check stats every file, grouped by directory, so an edit to a
// file that did not define the name, a new file and a removed one all change
// the answer, at any depth and in the root directory.
func TestSymbolFreshness(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"top.go":           "package top\n\nfunc Top() {}\n",
		"a/b/c/deep.go":    "package c\n\nfunc Deep() {}\n",
		"a/b/c/other.go":   "package c\n\nfunc Other() {}\n",
		"a/b/sibling.go":   "package b\n\nfunc Sibling() {}\n",
		"z/last/z.go":      "package last\n\nfunc Z() {}\n",
		"z/last/keep_z.go": "package last\n\nfunc KeepZ() {}\n",
	})
	age(t, dir)
	store := t.TempDir()
	build(t, dir, store)
	warm := func() *Index {
		t.Helper()
		ix := build(t, dir, store)
		if ix.Stats.Walked { // the next build must trust the times again
			age(t, dir)
			build(t, dir, store)
		}
		return ix
	}
	ix := warm()
	assert.False(t, ix.Stats.Walked, "nothing changed: no walk")
	assert.Contains(t, ix.Find("Deep", false), "a/b/c/deep.go:3")
	assert.Contains(t, ix.Find("Fresh", false), "no definition")

	// touch gives path a modification time after age's, well outside the
	// racy window (a real edit, add or remove bumps the time this way).
	later := time.Date(2021, 1, 2, 3, 4, 5, 0, time.UTC)
	touch := func(rel string) {
		t.Helper()
		require.NoError(t, os.Chtimes(filepath.Join(dir, filepath.FromSlash(rel)), later, later))
		later = later.Add(time.Hour)
	}

	// A file that did not define the name gains a definition (the
	// directory's time does not change on an edit in place).
	writeTree(t, dir, map[string]string{"a/b/c/other.go": "package c\n\nfunc Other() {}\n\nfunc Fresh() {}\n"})
	age(t, dir)
	ix = warm()
	assert.True(t, ix.Stats.Walked)
	assert.Contains(t, ix.Find("Fresh", false), "a/b/c/other.go:5")
	assert.False(t, warm().Stats.Walked)

	// A same-size edit with only a new time, in the root directory.
	writeTree(t, dir, map[string]string{"top.go": "package top\n\nfunc Fre5h() {}\n"})
	age(t, dir)
	touch("top.go")
	ix = warm()
	assert.True(t, ix.Stats.Walked)
	assert.Contains(t, ix.Find("Fre5h", false), "top.go:3")
	assert.Contains(t, ix.Find("Top", false), "no definition")

	// A new file in a nested directory that held no definition of the name.
	writeTree(t, dir, map[string]string{"z/last/new.go": "package last\n\nfunc Deep() {}\n"})
	age(t, dir)
	touch("z/last")
	ix = warm()
	assert.True(t, ix.Stats.Walked)
	assert.Contains(t, ix.Find("Deep", false), "z/last/new.go:3")
	assert.Contains(t, ix.Find("Deep", false), "a/b/c/deep.go:3")

	// A removed file takes its definition with it.
	require.NoError(t, os.Remove(filepath.Join(dir, "a", "b", "c", "deep.go")))
	age(t, dir)
	touch("a/b/c")
	ix = warm()
	assert.True(t, ix.Stats.Walked)
	assert.NotContains(t, ix.Find("Deep", false), "a/b/c/deep.go")
	assert.Contains(t, ix.Find("Deep", false), "z/last/new.go:3")

	// A file renamed into another directory.
	require.NoError(t, os.Rename(filepath.Join(dir, "a", "b", "sibling.go"), filepath.Join(dir, "z", "sibling.go")))
	age(t, dir)
	touch("a/b")
	touch("z")
	ix = warm()
	assert.True(t, ix.Stats.Walked)
	assert.Contains(t, ix.Find("Sibling", false), "z/sibling.go:3")
	assert.NotContains(t, ix.Find("Sibling", false), "a/b/sibling.go")
	assert.False(t, warm().Stats.Walked)
}
