package repomap

import (
	"cmp"
	"go/ast"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// Ranking parameters, after aider's repo map (peers.md §3.1).
const (
	damping        = 0.85
	focusDamping   = 0.5 // with focus, walks stay nearer the focus files
	maxIterations  = 100
	tolerance      = 1e-10 // per file, on the L1 change between iterations
	focusShare     = 0.9   // share of the teleport mass that goes to focus files
	focusRefBoost  = 50.0  // references made by a focus file
	mentionBoost   = 10.0  // references to a focus identifier
	longNameBoost  = 10.0  // long camelCase / snake_case identifiers are specific
	privatePenalty = 0.1   // Python "_private" names
	maxDefiners    = 32    // names defined in more files are too ambiguous to link at all
)

// rankedDef is a definition with its scores.
type rankedDef struct {
	file   int // index into Index.Files
	def    *symbols.Def
	direct float64 // weight of the focus's direct references to it
	score  float64 // rank its referrers give it
}

// ranking is the result of ranking an index.
type ranking struct {
	fileRank []float64
	defs     []rankedDef // best first
}

// rankable lists the definitions a map may show: top-level ones and methods
// (of types, classes and interfaces), not fields or nested functions.
func rankable(defs []symbols.Def) []*symbols.Def {
	var out []*symbols.Def
	for i := range defs {
		d := &defs[i]
		if d.Kind == symbols.KindField {
			continue
		}
		out = append(out, d)
		for j := range d.Children {
			if c := &d.Children[j]; c.Kind == symbols.KindMethod {
				out = append(out, c)
			}
		}
	}
	return out
}

// isLongName reports whether an identifier is long and specific (8+ bytes in
// camelCase, snake_case or kebab-case).
func isLongName(s string) bool {
	if len(s) < 8 {
		return false
	}
	if strings.ContainsAny(s, "_-") {
		return true
	}
	hasUpper, hasLower := false, false
	for _, r := range s {
		hasUpper = hasUpper || unicode.IsUpper(r)
		hasLower = hasLower || unicode.IsLower(r)
	}
	return hasUpper && hasLower
}

// edge is a weighted file→file link.
type edge struct {
	to int
	w  float64
}

// defSite is a file defining a name, and whether that definition is a
// method (reachable through a selector on a value).
type defSite struct {
	file   int
	method bool
}

// linker resolves reference keys to the files that define them.
type linker struct {
	files   []Entry
	dirs    []string
	byName  map[string][]defSite
	imports []map[string]bool // per file: Go package names it qualifies names with
	test    []bool            // per file: a test file
	pyDeps  []map[int]bool    // per Python file: the files its imports resolve to
	scratch []defSite
}

func newLinker(files []Entry) *linker {
	l := &linker{files: files, dirs: make([]string, len(files)), byName: map[string][]defSite{},
		imports: make([]map[string]bool, len(files)), test: make([]bool, len(files))}
	for i, f := range files {
		l.dirs[i] = path.Dir(f.Rel)
		l.test[i] = isTestFile(f.Rel)
		for key := range f.Refs {
			if dot := strings.IndexByte(key, '.'); dot > 0 {
				if l.imports[i] == nil {
					l.imports[i] = map[string]bool{}
				}
				l.imports[i][key[:dot]] = true
			}
		}
		seen := map[string]bool{}
		for _, d := range rankable(f.Defs) {
			key := d.Name
			if d.Kind == symbols.KindMethod {
				key += "\x00m"
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			l.byName[d.Name] = append(l.byName[d.Name], defSite{file: i, method: d.Kind == symbols.KindMethod})
		}
	}
	l.pyDeps = pythonDeps(files)
	return l
}

// pythonModule is the dotted module path of a Python file relative to the
// root: a/b/c.py → a.b.c, a/b/__init__.py → a.b.
func pythonModule(rel string) string {
	rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".pyi"), ".py")
	if path.Base(rel) == "__init__" {
		rel = path.Dir(rel)
	}
	if rel == "." {
		return ""
	}
	return strings.ReplaceAll(rel, "/", ".")
}

// pythonDeps resolves each Python file's imports to files of the index:
// absolute imports match a module path or any dotted suffix of one (so a
// src/ layout resolves), relative imports are taken from the file's package.
func pythonDeps(files []Entry) []map[int]bool {
	bySuffix := map[string][]int{}
	byModule := map[string][]int{}
	for i, f := range files {
		if f.Lang != "python" {
			continue
		}
		mod := pythonModule(f.Rel)
		byModule[mod] = append(byModule[mod], i)
		for parts := strings.Split(mod, "."); len(parts) > 0 && parts[0] != ""; parts = parts[1:] {
			suffix := strings.Join(parts, ".")
			bySuffix[suffix] = append(bySuffix[suffix], i)
		}
	}
	deps := make([]map[int]bool, len(files))
	for i, f := range files {
		if f.Lang != "python" || len(f.Imports) == 0 {
			continue
		}
		deps[i] = map[int]bool{}
		for _, imp := range f.Imports {
			var found []int
			if rest := strings.TrimLeft(imp, "."); len(rest) < len(imp) {
				pkg := strings.Split(pythonModule(path.Dir(f.Rel)+"/__init__.py"), ".")
				up := len(imp) - len(rest) - 1
				if pkg[0] == "" {
					pkg = nil
				}
				if up > len(pkg) {
					continue
				}
				mod := strings.Join(pkg[:len(pkg)-up], ".")
				if rest != "" {
					mod = strings.TrimPrefix(mod+"."+rest, ".")
				}
				found = byModule[mod]
			} else {
				found = bySuffix[imp]
			}
			for _, d := range found {
				if d != i {
					deps[i][d] = true
				}
			}
		}
	}
	return deps
}

// targets returns the files (other than src) a reference key of src can
// mean, in index order. Go keys follow Go's scoping: a bare name is defined
// in the same package (directory); "pkg.Name" in another directory whose
// files are package pkg; ".Name" is a method of the same package or, if
// exported, of a package the file uses by name (a value's type is not known,
// so this keeps f.Close() on an *os.File from linking to every Close in the
// repository). Python links a name to the files defining it among the
// modules the file imports, else to every Python file that defines it.
func (l *linker) targets(src int, key string) []defSite {
	from := l.files[src]
	name := symbols.RefName(key)
	out := l.scratch[:0]
	for _, d := range l.byName[name] {
		if d.file == src {
			continue
		}
		to := l.files[d.file]
		if to.Lang != from.Lang || l.test[d.file] && !l.test[src] {
			continue // code never uses what only its tests define
		}
		if from.Lang == "go" {
			sameDir := l.dirs[d.file] == l.dirs[src]
			switch {
			case key == name:
				if !sameDir || d.method {
					continue
				}
			case key[0] == '.':
				if !d.method || !sameDir && (!ast.IsExported(name) || !l.imports[src][to.Package]) {
					continue
				}
			default:
				if d.method || sameDir || to.Package != key[:len(key)-len(name)-1] || !ast.IsExported(name) {
					continue
				}
			}
		}
		out = append(out, d)
	}
	if from.Lang == "python" && len(out) > 1 {
		// Prefer the definitions in modules the file imports; a name with
		// none there (an attribute, a star import) keeps every candidate.
		deps := l.pyDeps[src]
		kept := out[:0:0]
		for _, d := range out {
			if deps[d.file] {
				kept = append(kept, d)
			}
		}
		if len(kept) > 0 {
			out = append(out[:0], kept...)
		}
	}
	l.scratch = out
	return out
}

// isTestFile reports whether a path is a test file by the conventions of Go
// (_test.go) and Python (test_*.py, *_test.py, conftest.py, tests/ folders).
func isTestFile(rel string) bool {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.HasSuffix(base, "_test.py"):
		return true
	case strings.HasSuffix(base, ".py"):
		return strings.HasPrefix(base, "test_") || base == "conftest.py" ||
			strings.HasPrefix(rel, "tests/") || strings.Contains(rel, "/tests/")
	}
	return false
}

// link is one reference key of a file resolved to the definitions it can
// mean, with its weight before personalisation.
type link struct {
	name string
	uses int
	w    float64 // whole weight of the reference, split evenly over to
	to   []defSite
}

// graph is the focus-independent part of a ranking: every file's
// references resolved and weighed. An index builds it once; each map
// personalises it.
type graph struct {
	files   []Entry
	links   [][]link // per source file, in key order
	definer map[string][]defSite
}

// specificity weighs a name by how few files define it, like inverse
// document frequency: a name defined in one file of a large tree keeps its
// full weight; one defined in a quarter of the files (get, String, New)
// keeps little. Long camelCase or snake_case names are specific anyway;
// Python "_private" names weigh less.
func specificity(name string, definers, files int) float64 {
	w := math.Log(float64(files+1)/float64(definers)) / math.Log(float64(files+1))
	if isLongName(name) {
		w *= longNameBoost
	}
	if strings.HasPrefix(name, "_") {
		w *= privatePenalty
	}
	return w
}

// buildGraph resolves every reference of every file to the files that may
// define it (see linker.targets) and weighs it by sqrt(uses) × specificity.
func buildGraph(files []Entry) *graph {
	l := newLinker(files)
	g := &graph{files: files, links: make([][]link, len(files)), definer: l.byName}
	for src, f := range files {
		for _, key := range slices.Sorted(maps.Keys(f.Refs)) {
			to := l.targets(src, key)
			if len(to) == 0 || len(to) > maxDefiners {
				continue
			}
			name := symbols.RefName(key)
			w := math.Sqrt(float64(f.Refs[key])) * specificity(name, len(l.byName[name]), len(files))
			g.links[src] = append(g.links[src], link{name: name, uses: f.Refs[key], w: w, to: slices.Clone(to)})
		}
	}
	return g
}

// personalised is a graph weighed for one focus.
type personalised struct {
	out      [][]edge    // per source file, by target file
	outW     []float64   // per source file, the sum of its link weights
	linkW    [][]float64 // per source file and link, the personalised weight
	teleport []float64
	damping  float64
}

// personalise boosts the links made by focus files and the links to
// focus identifiers, and sends most of the teleport mass to the focus files
// and to the files defining a focus identifier.
func (g *graph) personalise(focus map[int]bool, mentioned map[string]bool) personalised {
	n := len(g.files)
	p := personalised{out: make([][]edge, n), outW: make([]float64, n), linkW: make([][]float64, n),
		teleport: make([]float64, n), damping: damping}
	targets := maps.Clone(focus)
	if targets == nil {
		targets = map[int]bool{}
	}
	for name := range mentioned {
		for _, d := range g.definer[name] {
			targets[d.file] = true
		}
	}
	for src, links := range g.links {
		acc := map[int]float64{}
		p.linkW[src] = make([]float64, len(links))
		for i, lk := range links {
			w := lk.w
			if focus[src] {
				w *= focusRefBoost
			}
			if mentioned[lk.name] {
				w *= mentionBoost
			}
			p.linkW[src][i] = w
			p.outW[src] += w
			for _, d := range lk.to {
				acc[d.file] += w / float64(len(lk.to))
			}
		}
		for to, w := range acc {
			p.out[src] = append(p.out[src], edge{to, w})
		}
		slices.SortFunc(p.out[src], func(a, b edge) int { return cmp.Compare(a.to, b.to) })
	}
	for i := range p.teleport {
		if len(targets) == 0 {
			p.teleport[i] = 1 / float64(n)
			continue
		}
		p.teleport[i] = (1 - focusShare) / float64(n)
		if targets[i] {
			p.teleport[i] += focusShare / float64(len(targets))
		}
	}
	if len(targets) > 0 {
		p.damping = focusDamping
	}
	return p
}

type defKey struct {
	file   int
	name   string
	method bool
}

// scoreDefs spreads each file's rank over the definitions its links point
// at, in proportion to the links' weights.
func (g *graph) scoreDefs(p personalised, pr []float64) map[defKey]float64 {
	score := map[defKey]float64{}
	for src, links := range g.links {
		if p.outW[src] == 0 {
			continue
		}
		for i, lk := range links {
			share := pr[src] * p.linkW[src][i] / p.outW[src] / float64(len(lk.to))
			for _, d := range lk.to {
				score[defKey{d.file, lk.name, d.method}] += share
			}
		}
	}
	return score
}

// direct scores the definitions the focus files (and focus identifiers)
// name directly: a focused map shows these first, as the agent is about to
// need them. A reference counts sqrt(uses) / k² for the k definitions it may
// mean, whatever the name's specificity (the focus file does use it): a
// certain reference (pkg.Name, an imported name) outranks a frequent
// ambiguous one (x.Close with five candidates), of which only one is right. In
// Python, where a reference is a bare name, a name the file imports from a
// module ("from m import name") counts ten times, and one that resolves
// only to methods a tenth (mostly attributes of other objects).
func (g *graph) direct(focus map[int]bool, mentioned map[string]bool) map[defKey]float64 {
	out := map[defKey]float64{}
	for src := range focus {
		f := g.files[src]
		fromImports := map[string]bool{}
		for _, imp := range f.Imports {
			if i := strings.LastIndexByte(imp, '.'); i > 0 {
				fromImports[imp[i+1:]] = true
			}
		}
		for _, lk := range g.links[src] {
			w := math.Sqrt(float64(lk.uses)) / float64(len(lk.to)*len(lk.to))
			if f.Lang == "python" && fromImports[lk.name] {
				w *= 10
			}
			for _, d := range lk.to {
				dw := w
				if f.Lang == "python" && d.method {
					dw *= 0.1
				}
				out[defKey{d.file, lk.name, d.method}] += dw
			}
		}
	}
	for name := range mentioned {
		for _, d := range g.definer[name] {
			out[defKey{d.file, name, d.method}] += 1
		}
	}
	return out
}

// rank personalises the index's graph for the focus files and focus
// identifiers, runs PageRank over the files and orders every rankable
// definition: those the focus names directly first (by how much it uses
// them), then by the rank its referrers give it. Everything iterates in
// index order, so the result is deterministic.
func (g *graph) rank(focus map[int]bool, mentioned map[string]bool) ranking {
	p := g.personalise(focus, mentioned)
	pr := pagerank(p.out, p.outW, p.teleport, p.damping)
	score := g.scoreDefs(p, pr)
	direct := g.direct(focus, mentioned)
	var defs []rankedDef
	for i, f := range g.files {
		for _, d := range rankable(f.Defs) {
			k := defKey{i, d.Name, d.Kind == symbols.KindMethod}
			defs = append(defs, rankedDef{file: i, def: d, direct: direct[k], score: score[k]})
		}
	}
	slices.SortStableFunc(defs, func(a, b rankedDef) int {
		if c := cmp.Compare(b.direct, a.direct); c != 0 {
			return c
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(pr[b.file], pr[a.file]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.file, b.file); c != 0 {
			return c
		}
		return cmp.Compare(a.def.Start, b.def.Start)
	})
	return ranking{fileRank: pr, defs: defs}
}

// pagerank runs the power iteration with teleport vector pers; a file with
// no outgoing links gives its rank back through pers.
func pagerank(out [][]edge, outW, pers []float64, damping float64) []float64 {
	n := len(out)
	rank := slices.Clone(pers)
	next := make([]float64, n)
	for range maxIterations {
		dangling := 0.0
		for i := range n {
			if outW[i] == 0 {
				dangling += rank[i]
			}
		}
		for i := range n {
			next[i] = (1-damping)*pers[i] + damping*dangling*pers[i]
		}
		for src, es := range out {
			if outW[src] == 0 {
				continue
			}
			r := damping * rank[src] / outW[src]
			for _, e := range es {
				next[e.to] += r * e.w
			}
		}
		diff := 0.0
		for i := range n {
			diff += math.Abs(next[i] - rank[i])
		}
		rank, next = next, rank
		if diff < tolerance*float64(n) {
			break
		}
	}
	return rank
}
