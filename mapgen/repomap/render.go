package repomap

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// rankVersion changes whenever ranking or rendering does, so maps kept
// with an index from an older version are never served.
const rankVersion = 4

// DefaultBudget is the map budget, in estimated tokens, when none is given.
const DefaultBudget = 2048

// MapOptions shape a map.
type MapOptions struct {
	Budget int      // estimated tokens; <= 0 means DefaultBudget
	Focus  []string // files the agent is working on (relative to the root, or absolute), or identifiers (Name, Type.Name)
}

// MapResult is a rendered map and what it holds.
type MapResult struct {
	Text         string
	Tokens       int          // EstimateTokens(Text)
	Shown        int          // definitions shown
	Total        int          // definitions that could have been shown
	Files        int          // files named in the map
	UnknownFocus []string     // focus entries that are neither indexed source files nor defined names
	Sections     []MapSection // the files with definitions shown, in map order
}

// Map renders the highest-ranked definitions that fit the budget, grouped by
// file (files in rank order, definitions in line order), then as many other
// file names, by rank, as still fit. The same index and options give the same
// bytes.
func (ix *Index) Map(opts MapOptions) MapResult {
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	key := fmt.Sprintf("r%d\x00%d\x00%q", rankVersion, budget, opts.Focus)
	if r, ok := ix.cachedMap(key); ok {
		return r
	}
	r := ix.render(budget, opts.Focus)
	ix.keepMap(key, r)
	return r
}

func (ix *Index) render(budget int, focusList []string) MapResult {
	files := ix.Entries()
	focus := map[int]bool{}
	mentioned := map[string]bool{}
	var unknown []string
	byRel := make(map[string]int, len(files))
	defined := map[string]bool{}
	for i, f := range files {
		byRel[f.Rel] = i
		for _, d := range rankable(f.Defs) {
			defined[d.Name] = true
		}
	}
	for _, p := range focusList {
		rel := p
		if _, r, err := ix.Root.Resolve(p); err == nil {
			rel = r
		}
		if i, ok := byRel[rel]; ok {
			focus[i] = true
			continue
		}
		if name := p[strings.LastIndexByte(p, '.')+1:]; IsIdentifier(p) && defined[name] {
			mentioned[name] = true
			continue
		}
		unknown = append(unknown, p)
	}
	rk := ix.graph().rank(focus, mentioned)

	fileOrder := make([]int, len(files))
	for i := range fileOrder {
		fileOrder[i] = i
	}
	slices.SortStableFunc(fileOrder, func(a, b int) int {
		switch {
		case rk.fileRank[a] > rk.fileRank[b]:
			return -1
		case rk.fileRank[a] < rk.fileRank[b]:
			return 1
		}
		return 0
	})

	render := func(k int) (string, int) {
		return ix.renderMap(rk, fileOrder, k, budget)
	}
	// The rendering grows with k: binary-search the most definitions that fit.
	lo, hi := 0, len(rk.defs)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if text, _ := render(mid); EstimateTokens(text) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	text, named := render(lo)
	text, named = ix.appendFileNames(text, named, rk, fileOrder, lo, budget)
	return MapResult{Text: text, Tokens: EstimateTokens(text), Shown: lo, Total: len(rk.defs),
		Files: named, UnknownFocus: unknown, Sections: ix.sections(rk, fileOrder, lo)}
}

func (ix *Index) header(shown, total, budget int) string {
	files := ix.Entries()
	if len(files) == 0 {
		return fmt.Sprintf("# repo map of %s: no source files found (languages parsed: %s; .gitignore'd, hidden, vendored, generated and binary files are left out)\n",
			path.Base(ix.Root.Dir()), strings.Join(symbols.Languages(), ", ")) + ix.unparsedNote()
	}
	langs := map[string]int{}
	for _, f := range files {
		langs[f.Lang]++
	}
	names := make([]string, 0, len(langs))
	for l := range langs {
		names = append(names, l)
	}
	slices.Sort(names)
	var parts []string
	for _, l := range names {
		parts = append(parts, fmt.Sprintf("%s %d", l, langs[l]))
	}
	h := fmt.Sprintf("# repo map of %s: %d source files (%s); %d of %d definitions, ranked by references, within ~%d tokens\n",
		path.Base(ix.Root.Dir()), len(files), strings.Join(parts, ", "), shown, total, budget)
	h += ix.unparsedNote()
	if ix.Stats.Truncated {
		h += fmt.Sprintf("# note: the walk stopped at %d files or %d directories; the rest of the tree is not mapped\n", walk.MaxFiles, walk.MaxDirs)
	}
	return h
}

// unparsedNote names the languages present in the repository that this
// build cannot parse, so a map never silently leaves them out.
func (ix *Index) unparsedNote() string {
	if len(ix.Stats.Unparsed) == 0 {
		return ""
	}
	var parts []string
	for _, l := range slices.Sorted(maps.Keys(ix.Stats.Unparsed)) {
		parts = append(parts, fmt.Sprintf("%s %d", l, ix.Stats.Unparsed[l]))
	}
	return fmt.Sprintf("# note: this build of synaxi-mapgen cannot parse %s (files not mapped): it was built without cgo; `synaxi-mapgen languages` lists what it parses\n",
		strings.Join(parts, ", "))
}

// renderMap renders the top k definitions; it returns the text and the
// number of files named.
func (ix *Index) renderMap(rk ranking, fileOrder []int, k, budget int) (string, int) {
	perFile := map[int][]rankedDef{}
	for _, d := range rk.defs[:k] {
		perFile[d.file] = append(perFile[d.file], d)
	}
	var b strings.Builder
	b.WriteString(ix.header(k, len(rk.defs), budget))
	files := 0
	for _, fi := range fileOrder {
		ds := perFile[fi]
		if len(ds) == 0 {
			continue
		}
		files++
		slices.SortFunc(ds, func(a, b rankedDef) int { return a.def.Start - b.def.Start })
		fmt.Fprintf(&b, "\n%s\n", ix.files[fi].Rel)
		for _, d := range ds {
			fmt.Fprintf(&b, "  L%d: %s", d.def.Start, d.def.Signature)
			if d.def.Recv != "" && !strings.Contains(d.def.Signature, d.def.Recv) {
				fmt.Fprintf(&b, "  (in %s)", d.def.Recv) // an interface or class method
			}
			b.WriteByte('\n')
		}
	}
	return b.String(), files
}

// sections lists the files of the top k definitions in map order, each
// with its shown definitions in line order.
func (ix *Index) sections(rk ranking, fileOrder []int, k int) []MapSection {
	perFile := map[int][]rankedDef{}
	for _, d := range rk.defs[:k] {
		perFile[d.file] = append(perFile[d.file], d)
	}
	var out []MapSection
	for _, fi := range fileOrder {
		ds := perFile[fi]
		if len(ds) == 0 {
			continue
		}
		slices.SortFunc(ds, func(a, b rankedDef) int { return a.def.Start - b.def.Start })
		sec := MapSection{File: ix.files[fi].Rel}
		for _, d := range ds {
			sec.Defs = append(sec.Defs, jsonSite(sec.File, *d.def, false))
		}
		out = append(out, sec)
	}
	return out
}

// appendFileNames lists, by rank, files with no definition shown, while the
// budget allows.
func (ix *Index) appendFileNames(text string, files int, rk ranking, fileOrder []int, k, budget int) (string, int) {
	shown := map[int]bool{}
	for _, d := range rk.defs[:k] {
		shown[d.file] = true
	}
	var b strings.Builder
	b.WriteString(text)
	title := "\n# other files, by rank\n"
	used := EstimateTokens(text)
	titled := false
	for _, fi := range fileOrder {
		if shown[fi] {
			continue
		}
		line := ix.files[fi].Rel + "\n"
		cost := EstimateTokens(line)
		if !titled {
			cost += EstimateTokens(title)
		}
		if used+cost > budget {
			break
		}
		if !titled {
			b.WriteString(title)
			titled = true
		}
		b.WriteString(line)
		used += cost
		files++
	}
	return b.String(), files
}

// IsIdentifier reports whether s reads as Name or Type.Name.
func IsIdentifier(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for i, r := range p {
			if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
				return false
			}
		}
	}
	return true
}
