package repomap

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	gobuild "go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// The focus-recall benchmark: for each of 30 fixed non-test files of a
// large tree, the definitions it uses from other files (found by a resolver
// independent of mapgen: go/types for Go, Python's ast module with import
// resolution for Python) and the share of them that a 2,000-token map
// focused on the file shows in the defining file's section, beside the same
// share in the map without focus. Run with -recall=FILE to write the figures
// as JSON (scripts/bench.d/maps.sh does); without it the test is skipped.
var recallOut = flag.String("recall", "", "run the focus-recall benchmark and write its figures (JSON) to this file")

// RecallBudget is the map size the benchmark asks for.
const RecallBudget = 2000

// recallFiles are the files measured, per tree.
var recallFiles = map[string][]string{"go": {
	"archive/tar/reader.go", "archive/zip/reader.go", "bufio/bufio.go", "compress/gzip/gunzip.go",
	"crypto/tls/handshake_client.go", "crypto/x509/verify.go", "database/sql/sql.go", "encoding/json/decode.go",
	"encoding/json/encode.go", "fmt/print.go", "go/parser/parser.go", "go/printer/printer.go",
	"go/types/call.go", "html/template/escape.go", "image/png/reader.go", "io/fs/walk.go",
	"log/slog/logger.go", "mime/multipart/multipart.go", "net/dial.go", "net/http/client.go",
	"net/http/server.go", "net/smtp/smtp.go", "net/url/url.go", "os/exec/exec.go",
	"os/file.go", "regexp/regexp.go", "runtime/pprof/pprof.go", "testing/testing.go",
	"text/template/exec.go", "path/filepath/match.go",
}, "python": {
	"argparse.py", "asyncio/base_events.py", "asyncio/streams.py", "asyncio/tasks.py",
	"concurrent/futures/thread.py", "configparser.py", "csv.py", "email/feedparser.py",
	"email/message.py", "email/parser.py", "http/client.py", "http/server.py",
	"importlib/_bootstrap_external.py", "json/decoder.py", "json/encoder.py", "logging/handlers.py",
	"multiprocessing/pool.py", "shutil.py", "ssl.py", "subprocess.py",
	"tarfile.py", "tempfile.py", "unittest/case.py", "urllib/parse.py",
	"urllib/request.py", "xml/dom/minidom.py", "xml/etree/ElementTree.py", "zipfile/__init__.py",
	"logging/__init__.py", "asyncio/events.py",
}}

// use is one definition a file uses: where it is defined.
type use struct {
	File string `json:"file"`
	Name string `json:"name"`
	Line int    `json:"line"`
}

// recallRow is one file's figures.
type recallRow struct {
	File      string  `json:"file"`
	Uses      int     `json:"uses"`
	Shown     int     `json:"shown"` // definitions the focused map shows: with more uses than this, recall cannot reach 1
	Focused   float64 `json:"focused"`
	Unfocused float64 `json:"unfocused"`
	Missed    []use   `json:"missed,omitempty"` // by the focused map
}

// recallTree is one tree's figures.
type recallTree struct {
	Tree          string      `json:"tree"`
	Root          string      `json:"root"`
	Files         int         `json:"files"`
	MeanFocused   float64     `json:"mean_focused"`
	WorstFocused  float64     `json:"worst_focused"`
	MeanUnfocused float64     `json:"mean_unfocused"`
	WorstFile     string      `json:"worst_file"`
	Rows          []recallRow `json:"rows"`
}

// shows reports whether a map shows u in its defining file's section.
func shows(res MapResult, u use) bool {
	for _, s := range res.Sections {
		if s.File != u.File {
			continue
		}
		for _, d := range s.Defs {
			if d.Name == u.Name && d.Line <= u.Line && u.Line <= d.EndLine {
				return true
			}
		}
	}
	return false
}

func measureRecall(t *testing.T, tree, dir string, truth map[string][]use) recallTree {
	root, err := walk.NewRoot(dir)
	require.NoError(t, err)
	ix, err := (&Indexer{Root: root, Store: cache.Store{Dir: os.Getenv("SYNAXI_RECALL_STORE")}}).Build(context.Background())
	require.NoError(t, err)
	plain := ix.Map(MapOptions{Budget: RecallBudget})
	out := recallTree{Tree: tree, Root: dir, WorstFocused: 1}
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range truth {
			if !yield(k) {
				return
			}
		}
	}) {
		uses := truth[rel]
		if len(uses) == 0 {
			continue
		}
		focused := ix.Map(MapOptions{Budget: RecallBudget, Focus: []string{rel}})
		row := recallRow{File: rel, Uses: len(uses), Shown: focused.Shown}
		for _, u := range uses {
			if shows(focused, u) {
				row.Focused++
			} else {
				row.Missed = append(row.Missed, u)
			}
			if shows(plain, u) {
				row.Unfocused++
			}
		}
		row.Focused /= float64(len(uses))
		row.Unfocused /= float64(len(uses))
		out.Rows = append(out.Rows, row)
		out.MeanFocused += row.Focused
		out.MeanUnfocused += row.Unfocused
		if row.Focused < out.WorstFocused {
			out.WorstFocused, out.WorstFile = row.Focused, rel
		}
	}
	out.Files = len(out.Rows)
	if out.Files > 0 {
		out.MeanFocused /= float64(out.Files)
		out.MeanUnfocused /= float64(out.Files)
	}
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	out.MeanFocused, out.MeanUnfocused, out.WorstFocused = round(out.MeanFocused), round(out.MeanUnfocused), round(out.WorstFocused)
	return out
}

func TestFocusRecall(t *testing.T) {
	if *recallOut == "" {
		t.Skip("the focus-recall benchmark runs with -recall=FILE")
	}
	var trees []recallTree
	goroot := filepath.Join(gobuild.Default.GOROOT, "src")
	truth, err := goUses(goroot, recallFiles["go"])
	require.NoError(t, err)
	trees = append(trees, measureRecall(t, "go", goroot, truth))
	if symbols.Supported("python") {
		if pyroot, err := pythonStdlib(); err == nil {
			truth, err := pyUses(pyroot, recallFiles["python"])
			require.NoError(t, err)
			trees = append(trees, measureRecall(t, "python", pyroot, truth))
		} else {
			t.Logf("python standard library not measured: %v", err)
		}
	}
	data, err := json.MarshalIndent(trees, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(*recallOut, data, 0o644))
	for _, tr := range trees {
		t.Logf("%s: %d files, focused mean %.3f worst %.3f (%s), unfocused mean %.3f",
			tr.Tree, tr.Files, tr.MeanFocused, tr.WorstFocused, tr.WorstFile, tr.MeanUnfocused)
	}
}

// goUses type-checks the package of each file (dependencies from export
// data) and lists the package-level definitions and methods each file uses
// that are defined in another file of the tree.
func goUses(goroot string, files []string) (map[string][]use, error) {
	out := map[string][]use{}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", nil)
	for _, rel := range files {
		dir := filepath.Join(goroot, filepath.Dir(rel))
		bp, err := gobuild.ImportDir(dir, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		var parsed []*ast.File
		var target *ast.File
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			parsed = append(parsed, f)
			if name == filepath.Base(rel) {
				target = f
			}
		}
		if target == nil {
			return nil, fmt.Errorf("%s is not in its package's build for this platform", rel)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		_, _ = conf.Check(bp.ImportPath, fset, parsed, info) // partial information is fine
		seen := map[use]bool{}
		ast.Inspect(target, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Pkg() == nil || !isMappable(obj) {
				return true
			}
			pos := fset.Position(obj.Pos())
			file := strings.TrimPrefix(filepath.ToSlash(pos.Filename), "$GOROOT/src/")
			if r, err := filepath.Rel(goroot, pos.Filename); err == nil && !strings.HasPrefix(r, "..") {
				file = filepath.ToSlash(r)
			}
			if file == rel || strings.HasPrefix(file, "/") || strings.HasPrefix(file, "$") {
				return true
			}
			u := use{File: file, Name: obj.Name(), Line: pos.Line}
			if !seen[u] {
				seen[u] = true
				out[rel] = append(out[rel], u)
			}
			return true
		})
	}
	return out, nil
}

// isMappable reports whether a map could show obj: a package-level
// function, type, variable or constant, or a method.
func isMappable(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		sig, _ := o.Type().(*types.Signature)
		return sig != nil && sig.Recv() != nil || o.Parent() == o.Pkg().Scope()
	case *types.TypeName, *types.Var, *types.Const:
		return obj.Parent() == obj.Pkg().Scope()
	}
	return false
}

// pythonStdlib finds the standard library of the python3 on PATH.
func pythonStdlib() (string, error) {
	out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		return "", fmt.Errorf("python3: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// pyUsesScript resolves each file's imports to modules of the tree and
// lists the module-level definitions (def, class, assignment) it uses from
// them: names imported with "from m import x" and attributes "m.x" of
// imported modules.
const pyUsesScript = `
import ast, json, os, sys
root = sys.argv[1]
files = json.loads(sys.stdin.read())
cache = {}
def modfile(mod):
    p = os.path.join(root, *mod.split('.'))
    for c in (p + '.py', os.path.join(p, '__init__.py')):
        if os.path.isfile(c):
            return os.path.relpath(c, root)
    return None
def defs(rel):
    if rel not in cache:
        d = {}
        try:
            tree = ast.parse(open(os.path.join(root, rel), encoding='utf-8').read())
        except Exception:
            tree = ast.Module(body=[], type_ignores=[])
        for n in tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d.setdefault(n.name, n.lineno)
            elif isinstance(n, (ast.Assign, ast.AnnAssign)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    if isinstance(t, ast.Name):
                        d.setdefault(t.id, n.lineno)
        cache[rel] = d
    return cache[rel]
def package(rel):
    parts = rel[:-3].split('/')
    return parts[:-1]
out = {}
for rel in files:
    if not os.path.isfile(os.path.join(root, rel)):
        continue
    tree = ast.parse(open(os.path.join(root, rel), encoding='utf-8').read())
    uses, bound = [], {}
    def add(mfile, name):
        if mfile and mfile != rel and name in defs(mfile):
            u = {'file': mfile, 'name': name, 'line': defs(mfile)[name]}
            if u not in uses:
                uses.append(u)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = package(rel)
                base = base[:len(base) - (n.level - 1)] if n.level > 1 else base
                mod = '.'.join(base + ([n.module] if n.module else []))
            else:
                mod = n.module or ''
            for a in n.names:
                add(modfile(mod), a.name)
                if modfile(mod + '.' + a.name):
                    bound[a.asname or a.name] = mod + '.' + a.name
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.asname:
                    bound[a.asname] = a.name
                else:
                    bound[a.name.split('.')[0]] = a.name.split('.')[0]
    for n in ast.walk(tree):
        if not isinstance(n, ast.Attribute):
            continue
        chain, v = [n.attr], n.value
        while isinstance(v, ast.Attribute):
            chain.insert(0, v.attr)
            v = v.value
        if not isinstance(v, ast.Name) or v.id not in bound:
            continue
        mod = bound[v.id]
        while len(chain) > 1 and modfile(mod + '.' + chain[0]):
            mod += '.' + chain.pop(0)
        add(modfile(mod), chain[0])
    out[rel] = uses
print(json.dumps(out))
`

func pyUses(root string, files []string) (map[string][]use, error) {
	in, err := json.Marshal(files)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("python3", "-c", pyUsesScript, root)
	cmd.Stdin = strings.NewReader(string(in))
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python3 resolver: %w", err)
	}
	out := map[string][]use{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("python3 resolver output: %w", err)
	}
	return out, nil
}
