// Package repomap builds an index of a repository's definitions and
// references and answers the three questions synaxi's MCP tools ask: a ranked
// map within a token budget (Map), the outline of one file (Outline) and the
// definition sites and references of a name (Find).
//
// An Indexer persists what it builds (package cache) and, on the next build,
// re-reads only files whose size or modification time changed (and files
// modified too close to the last build to trust their time, which it
// re-hashes); when no directory, ignore file or source file changed it does
// not walk the tree at all. The same index gives the same maps, byte for
// byte, and rendered maps are kept with the index.
package repomap

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// ProgressMinFiles is the number of files to parse from which a build
// reports progress (when a progress writer is set).
const ProgressMinFiles = 500

// racyWindow: a file or directory modified this close to (or after) the
// moment the previous walk began may have changed again within the same
// timestamp, so its time alone does not prove it unchanged.
const racyWindow = 2 * time.Second

// Entry is one indexed file.
type Entry struct {
	Rel string
	symbols.File
}

// Stats says what a build did.
type Stats struct {
	Files     int  // files indexed
	Parsed    int  // parsed this build
	Reused    int  // taken from the previous index (same size and time, or same content)
	Rehashed  int  // read and hashed because their time could not be trusted
	Skipped   int  // generated, minified, binary or unreadable
	Walked    bool // the tree was walked (false: nothing changed since the previous index)
	Truncated bool // the walk stopped at walk.MaxFiles
	// Unparsed counts, per language, the source files this build cannot
	// parse (a build without cgo parses Go only); they are not indexed.
	Unparsed map[string]int
}

// Index is a repository's definitions and references, files sorted by path.
// Parse results come from a persisted index on demand: a map already
// rendered for this content, or a symbol lookup, decodes only what it needs.
type Index struct {
	Root  walk.Root
	Stats Stats

	meta  cache.Meta
	id    string          // content identity (cache.Data.ID)
	snap  *cache.Snapshot // where entries decode from, when not built in memory
	store cache.Store

	once  sync.Once
	files []Entry // non-skipped files; see Entries
	maps  *mapCache

	graphOnce sync.Once
	g         *graph
}

// graph returns the index's reference graph, built on first use.
func (ix *Index) graph() *graph {
	ix.graphOnce.Do(func() { ix.g = buildGraph(ix.Entries()) })
	return ix.g
}

// Entries returns every indexed file (skipped ones left out), decoding them
// from the persisted index on first use; entries decoded from it carry no
// RefLines (candidates decodes those per file).
func (ix *Index) Entries() []Entry {
	ix.once.Do(func() {
		if ix.files != nil || ix.snap == nil {
			return
		}
		_ = ix.snap.LoadAll() // else each entry is read on its own
		ix.files = make([]Entry, 0, len(ix.meta.Files))
		for i, st := range ix.meta.Files {
			if st.Skip {
				continue
			}
			f, err := ix.snap.FileNoLines(i) // lines come per file, when a lookup asks
			if err != nil {
				f = symbols.File{Err: err.Error()}
			}
			ix.files = append(ix.files, Entry{Rel: st.Rel, File: f})
		}
	})
	return ix.files
}

const mapCacheSize = 16

func (c *mapCache) get(key string) (MapResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.results[key]
	return r, ok
}

func (c *mapCache) put(key string, r MapResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.results) >= mapCacheSize {
		clear(c.results)
	}
	c.results[key] = r
}

// cachedMap returns a map rendered earlier for this content and key, from
// memory or from the store.
func (ix *Index) cachedMap(key string) (MapResult, bool) {
	if r, ok := ix.maps.get(key); ok {
		return r, true
	}
	raw, ok := ix.store.Maps(ix.Root.Dir(), ix.id)[key]
	if !ok {
		return MapResult{}, false
	}
	var r MapResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return MapResult{}, false
	}
	ix.maps.put(key, r)
	return r, true
}

func (ix *Index) keepMap(key string, r MapResult) {
	ix.maps.put(key, r)
	if raw, err := json.Marshal(r); err == nil {
		_ = ix.store.PutMap(ix.Root.Dir(), ix.id, key, raw) // a map not kept only costs time
	}
}

// Indexer builds indexes of one root, persisting each in Store and starting
// from the previous one (in memory, else from Store). Safe for one Build at
// a time; concurrent processes may build the same root at once.
type Indexer struct {
	Root     walk.Root
	Store    cache.Store
	Progress Progress                // reports a long parse (nil for none)
	Workers  int                     // 0: GOMAXPROCS
	Getenv   func(key string) string // for git's global excludes file; nil: os.Getenv

	mu   sync.Mutex
	last *Index
}

// Progress receives the progress of a build that parses many files.
type Progress interface {
	Start(total int)
	Add(n int)
	Finish()
}

// previous is what a build starts from.
type previous struct {
	meta  cache.Meta
	byRel map[string]int
	file  func(i int) (symbols.File, error)
	index *Index // when the previous index is in memory
}

func (ix *Indexer) previous() *previous {
	if ix.last != nil {
		last := ix.last
		entries := last.Entries()
		byRel := make(map[string]int, len(entries))
		for i, e := range entries {
			byRel[e.Rel] = i
		}
		p := &previous{meta: last.meta, byRel: map[string]int{}, index: last}
		for i, st := range last.meta.Files {
			p.byRel[st.Rel] = i
		}
		p.file = func(i int) (symbols.File, error) {
			if j, ok := byRel[last.meta.Files[i].Rel]; ok {
				return entries[j].File, nil
			}
			return symbols.File{}, nil
		}
		return p
	}
	snap, ok := ix.Store.Load(ix.Root.Dir())
	if !ok {
		return nil
	}
	p := &previous{meta: snap.Meta, byRel: make(map[string]int, len(snap.Files)), file: snap.File}
	for i, st := range snap.Files {
		p.byRel[st.Rel] = i
	}
	p.index = &Index{Root: ix.Root, meta: snap.Meta, id: snap.ID, snap: snap, store: ix.Store,
		maps: &mapCache{results: map[string]MapResult{}}}
	p.index.Stats.Truncated, p.index.Stats.Unparsed = snap.Truncated, snap.Unparsed
	for _, f := range snap.Files {
		if f.Skip {
			p.index.Stats.Skipped++
		} else {
			p.index.Stats.Files++
		}
	}
	p.index.Stats.Reused = p.index.Stats.Files
	return p
}

// Build returns the index of the root: the previous one when nothing it
// depended on changed, else a new one that re-reads only changed files.
func (ix *Indexer) Build(ctx context.Context) (*Index, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	began := time.Now()
	prev := ix.previous()
	if prev != nil && unchanged(&prev.meta) {
		ix.last = prev.index // its Stats say how it was built
		return prev.index, nil
	}
	getenv := ix.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	res, err := walk.Scan(ctx, ix.Root, func(rel string) bool { return symbols.Detect(rel) != "" }, getenv)
	if err != nil {
		return nil, err
	}
	var unparsed map[string]int
	res.Files, unparsed = parseable(res.Files)
	data, stats, err := ix.parse(ctx, res, prev)
	if err != nil {
		return nil, err
	}
	data.Root = ix.Root.Dir()
	data.Unparsed = unparsed
	data.Built = began.UnixNano()
	data.Truncated = res.Truncated
	data.Sources = stampSources(res.Sources)
	data.Dirs = make([]cache.DirStamp, len(res.Dirs))
	for i, d := range res.Dirs {
		data.Dirs[i] = cache.DirStamp{Rel: d.Rel, ModTime: d.ModTime.UnixNano()}
	}
	out := &Index{Root: ix.Root, Stats: stats, meta: data.Meta, id: data.ID(), store: ix.Store,
		maps: &mapCache{results: map[string]MapResult{}}}
	out.Stats.Walked, out.Stats.Truncated, out.Stats.Unparsed = true, res.Truncated, data.Unparsed
	out.files = []Entry{}
	for i, st := range data.Files {
		if !st.Skip {
			out.files = append(out.files, Entry{Rel: st.Rel, File: data.Parsed[i]})
		}
	}
	out.Stats.Files = len(out.files)
	if prev != nil && prev.index != nil && prev.index.id == out.id {
		out.maps = prev.index.maps // same content: the same maps
	}
	if stats.Parsed > 0 || stats.Rehashed > 0 || prev == nil || !sameStamps(&prev.meta, &data.Meta) {
		_ = ix.Store.Save(data) // an index not kept only costs time on the next run
	}
	ix.last = out
	return out, nil
}

// unchanged reports whether nothing the index depended on changed: every
// ignore file, directory and indexed file has the size and time it had, and
// none was modified too close to the build to trust its time. Files are
// checked by directory (dirStamps: the directory's path is resolved once for
// all its files), directories spread over all cores; the first difference
// stops them. Every recorded file is stat'ed: an edit to any file may add or
// remove a definition, so no lookup can trust a subset.
func unchanged(m *cache.Meta) bool {
	if m.Truncated {
		return false // a truncated walk depends on more than it recorded
	}
	limit := m.Built - int64(racyWindow)
	for _, s := range m.Sources {
		st, err := os.Stat(s.Path)
		if (err == nil) != s.Exists || (err == nil && (st.Size() != s.Size || st.ModTime().UnixNano() != s.ModTime)) {
			return false
		}
	}
	// Group the files by the recorded directory holding them; the walk
	// records every directory it reads, so a file outside them means the
	// index is not what this code wrote.
	dirOf := make(map[string]int, len(m.Dirs))
	for i, d := range m.Dirs {
		if d.ModTime >= limit {
			return false
		}
		dirOf[d.Rel] = i
	}
	names := make([][]string, len(m.Dirs))
	files := make([][]int, len(m.Dirs))
	for i, f := range m.Files {
		if f.ModTime >= limit {
			return false
		}
		dir, name := path.Split(f.Rel)
		d, ok := dirOf[strings.TrimSuffix(dir, "/")]
		if !ok {
			return false
		}
		names[d] = append(names[d], name)
		files[d] = append(files[d], i)
	}
	check := func(d int) bool {
		return dirStamps(joinRel(m.Root, m.Dirs[d].Rel), m.Dirs[d].ModTime, names[d], func(j int, size, mod int64, err error) bool {
			f := &m.Files[files[d][j]]
			return err == nil && size == f.Size && mod == f.ModTime
		})
	}
	var changed atomic.Bool
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for d := w; d < len(m.Dirs) && !changed.Load(); d += workers {
				if !check(d) {
					changed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return !changed.Load()
}

func sameStamps(a, b *cache.Meta) bool {
	if len(a.Files) != len(b.Files) || len(a.Dirs) != len(b.Dirs) || len(a.Sources) != len(b.Sources) {
		return false
	}
	for i := range a.Files {
		if a.Files[i] != b.Files[i] {
			return false
		}
	}
	for i := range a.Dirs {
		if a.Dirs[i] != b.Dirs[i] {
			return false
		}
	}
	for i := range a.Sources {
		if a.Sources[i] != b.Sources[i] {
			return false
		}
	}
	return true
}

func joinRel(root, rel string) string {
	if rel == "" {
		return root
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

func stampSources(paths []string) []cache.Source {
	out := make([]cache.Source, len(paths))
	for i, p := range paths {
		out[i].Path = p
		if st, err := os.Stat(p); err == nil {
			out[i] = cache.Source{Path: p, Exists: true, Size: st.Size(), ModTime: st.ModTime().UnixNano()}
		}
	}
	return out
}

type outcome int

const (
	parsed outcome = iota
	reused
	rehashed // read and hashed; content unchanged
	skipped
	unreadable
)

type result struct {
	stamp cache.FileStamp
	file  symbols.File
	how   outcome
}

// parse indexes the walked files with workers, reusing previous entries.
func (ix *Indexer) parse(ctx context.Context, res walk.Result, prev *previous) (*cache.Data, Stats, error) {
	workers := ix.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]result, len(res.Files))
	// Reuse by time first (no read), so progress counts only real work.
	var todo []int
	for i, f := range res.Files {
		if prev != nil {
			if j, ok := prev.byRel[f.Rel]; ok {
				st := prev.meta.Files[j]
				if st.Size == f.Size && st.ModTime == f.ModTime.UnixNano() && st.ModTime < prev.meta.Built-int64(racyWindow) {
					file, err := prev.file(j)
					if err == nil {
						results[i] = result{stamp: st, file: file, how: reused}
						continue
					}
				}
			}
		}
		todo = append(todo, i)
	}
	var prog Progress
	if ix.Progress != nil && len(todo) >= ProgressMinFiles {
		prog = ix.Progress
		prog.Start(len(todo))
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = ix.one(res.Files[i], prev)
				if prog != nil {
					prog.Add(1)
				}
			}
		}()
	}
	var cerr error
	for _, i := range todo {
		if cerr = ctx.Err(); cerr != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if prog != nil {
		prog.Finish()
	}
	if cerr != nil {
		return nil, Stats{}, fmt.Errorf("build index: %w", cerr)
	}
	data := &cache.Data{}
	var stats Stats
	for _, r := range results {
		switch r.how {
		case unreadable:
			stats.Skipped++
			continue
		case skipped:
			stats.Skipped++
		case parsed:
			stats.Parsed++
		case reused:
			stats.Reused++
		case rehashed:
			stats.Rehashed++
		}
		data.Files = append(data.Files, r.stamp)
		data.Parsed = append(data.Parsed, r.file)
	}
	return data, stats, nil
}

// parseable keeps the files this build parses and counts the others by
// language.
func parseable(files []walk.File) ([]walk.File, map[string]int) {
	var unparsed map[string]int
	kept := files[:0]
	for _, f := range files {
		if l := symbols.Detect(f.Rel); symbols.Supported(l) {
			kept = append(kept, f)
			continue
		}
		if unparsed == nil {
			unparsed = map[string]int{}
		}
		unparsed[symbols.Detect(f.Rel)]++
	}
	return kept, unparsed
}

// one reads, hashes and (unless its content is the previous one's) parses a
// single file.
func (ix *Indexer) one(f walk.File, prev *previous) result {
	data, err := os.ReadFile(f.Abs)
	if err != nil {
		return result{how: unreadable}
	}
	st := cache.FileStamp{Rel: f.Rel, Size: int64(len(data)), ModTime: f.ModTime.UnixNano(), Hash: sha256.Sum256(data)}
	if int64(len(data)) != f.Size {
		st.ModTime = 0 // changed while we walked: never trust this time
	}
	if prev != nil {
		if j, ok := prev.byRel[f.Rel]; ok && prev.meta.Files[j].Hash == st.Hash {
			if file, err := prev.file(j); err == nil {
				st.Skip = prev.meta.Files[j].Skip
				return result{stamp: st, file: file, how: rehashed}
			}
		}
	}
	if walk.Classify(data) != "" {
		st.Skip = true
		return result{stamp: st, how: skipped}
	}
	return result{stamp: st, file: symbols.Parse(f.Rel, data), how: parsed}
}

// mapCache remembers a few rendered maps of one index.
type mapCache struct {
	mu      sync.Mutex
	results map[string]MapResult
}
