package repomap

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

func TestPythonRepository(t *testing.T) {
	if symbols.Language("x.py") == "" {
		t.Skip("python needs a cgo build")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pkg/shapes.py": "class Shape:\n    \"\"\"A shape.\"\"\"\n\n    def area(self):\n        raise NotImplementedError\n\n\ndef make_shape(kind):\n    if kind == 'sq':\n        return Shape()\n    return None\n",
		"app.py":        "from pkg.shapes import make_shape, Shape\n\n\ndef main():\n    s = make_shape('sq')\n    return s.area()\n",
		"tool.py":       "from pkg.shapes import make_shape\n\nmake_shape('x')\n",
		"main.go":       "package main\n\nfunc main() {}\n",
	})
	ix := build(t, dir, "")
	require.Len(t, ix.Entries(), 4)

	order := defOrder(ix, nil)
	assert.Equal(t, "pkg/shapes.py:make_shape", order[0], "%v", order)

	got := ix.Find("Shape.area", true)
	assert.Contains(t, got, "method Shape.area — pkg/shapes.py:4-5\n")
	assert.Contains(t, got, "  L5:         raise NotImplementedError\n")
	assert.Contains(t, got, "# references to area: 1\napp.py:6: return s.area()\n")

	text := ix.Map(MapOptions{Budget: 400}).Text
	assert.Contains(t, text, "(go 1, python 3)")
	assert.Contains(t, text, "L4: def area(self)  (in Shape)")
}

func TestPythonImportsResolve(t *testing.T) {
	if symbols.Language("x.py") == "" {
		t.Skip("python needs a cgo build")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"src/app/__init__.py":      "",
		"src/app/util.py":          "def helper():\n    return 1\n",
		"src/app/core/__init__.py": "",
		"src/app/core/engine.py":   "from ..util import helper\nfrom . import parts\n\n\ndef run():\n    return helper() + parts.size()\n",
		"src/app/core/parts.py":    "def size():\n    return 2\n",
		"src/app/main.py":          "from app.util import helper\n\nhelper()\n",
		"other/util.py":            "def helper():\n    return 'other'\n",
		"scripts/loose.py":         "helper()\n",
	})
	ix := build(t, dir, "")
	byRel := map[string]int{}
	for i, f := range ix.Entries() {
		byRel[f.Rel] = i
	}
	deps := pythonDeps(ix.Entries())
	assert.Equal(t, map[int]bool{byRel["src/app/util.py"]: true, byRel["src/app/core/__init__.py"]: true, byRel["src/app/core/parts.py"]: true},
		deps[byRel["src/app/core/engine.py"]], "relative imports: ..util, . and .parts")
	assert.Equal(t, map[int]bool{byRel["src/app/util.py"]: true}, deps[byRel["src/app/main.py"]], "a src/ layout resolves by suffix")

	l := newLinker(ix.Entries())
	files := func(src string) []string {
		var out []string
		for _, d := range l.targets(byRel[src], "helper") {
			out = append(out, ix.Entries()[d.file].Rel)
		}
		return out
	}
	assert.Equal(t, []string{"src/app/util.py"}, files("src/app/main.py"), "the imported definition only")
	assert.Equal(t, []string{"src/app/util.py"}, files("src/app/core/engine.py"))
	assert.Equal(t, []string{"other/util.py", "src/app/util.py"}, files("scripts/loose.py"), "no import: every candidate")
}

type recordProgress struct {
	mu                    sync.Mutex
	total, added, finishd int
}

func (r *recordProgress) Start(total int) { r.total = total }
func (r *recordProgress) Add(n int)       { r.mu.Lock(); r.added += n; r.mu.Unlock() }
func (r *recordProgress) Finish()         { r.finishd++ }

func TestProgress(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range ProgressMinFiles {
		files[fmt.Sprintf("p%d/f.go", i)] = fmt.Sprintf("package p%d\n\nfunc F%d() {}\n", i, i)
	}
	writeTree(t, dir, files)
	age(t, dir)
	root, err := walk.NewRoot(dir)
	require.NoError(t, err)
	store := cache.Store{Dir: t.TempDir()}
	cold := &recordProgress{}
	_, err = (&Indexer{Root: root, Store: store, Progress: cold}).Build(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{ProgressMinFiles, ProgressMinFiles, 1}, []int{cold.total, cold.added, cold.finishd})

	warm := &recordProgress{}
	_, err = (&Indexer{Root: root, Store: store, Progress: warm}).Build(context.Background())
	require.NoError(t, err)
	assert.Zero(t, warm.finishd, "nothing to parse, nothing reported")

	var w bytes.Buffer
	p := LineProgress(&w)
	p.Start(20)
	for range 20 {
		p.Add(1)
	}
	p.Finish()
	assert.Equal(t, 10, strings.Count(w.String(), "\n"), "one line per tenth:\n%s", w.String())
}
