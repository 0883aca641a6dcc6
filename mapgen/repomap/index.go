// Package repomap builds an index of a repository's definitions and
// references and answers the three questions synaxi's MCP tools ask: a ranked
// map within a token budget (Map), the outline of one file (Outline) and the
// definition sites and references of a name (Find).
package repomap

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// ProgressMinFiles is the repository size from which a cold build reports
// progress (when a progress writer is set).
const ProgressMinFiles = 2000

// Entry is one indexed file.
type Entry struct {
	Rel string
	symbols.File
}

// Stats says what a build did.
type Stats struct {
	Files     int  // files indexed
	Parsed    int  // parsed this build (cache misses)
	CacheHits int  // served from the disk cache
	MemoHits  int  // unchanged since the previous build of the same Indexer
	Skipped   int  // generated, minified, binary or unreadable
	Truncated bool // the walk stopped at walk.MaxFiles
	// Unparsed counts, per language, the source files this build cannot
	// parse (a build without cgo parses Go only); they are not indexed.
	Unparsed map[string]int
}

// Index is a repository's definitions and references, files sorted by path.
type Index struct {
	Root  walk.Root
	Files []Entry
	Stats Stats

	maps *mapCache // rendered maps; shared by rebuilds that found nothing changed
}

// mapCache remembers a few rendered maps of one unchanged index.
type mapCache struct {
	mu      sync.Mutex
	results map[string]MapResult
}

const mapCacheSize = 16

func (c *mapCache) get(key string) (MapResult, bool) {
	if c == nil {
		return MapResult{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.results[key]
	return r, ok
}

func (c *mapCache) put(key string, r MapResult) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.results) >= mapCacheSize {
		clear(c.results)
	}
	c.results[key] = r
}

// Indexer builds indexes of one root. It remembers what it parsed, keyed by
// file size and modification time, so a long-lived process (the MCP server)
// rebuilds without re-reading unchanged files. Safe for one Build at a time.
type Indexer struct {
	Root     walk.Root
	Cache    cache.Cache
	Progress io.Writer // cold builds of large repositories report progress here; nil for none
	Workers  int       // 0: GOMAXPROCS

	mu       sync.Mutex
	memo     map[string]memoEntry
	last     *Index   // the previous build
	lastAbss []string // its walk, to tell whether the file set changed
}

type memoEntry struct {
	size  int64
	mtime time.Time
	skip  bool
	file  symbols.File
}

type result struct {
	entry   Entry
	memo    memoEntry
	skipped bool
	how     int // 0 parsed, 1 cache, 2 memo (unchanged since the last build), 3 read and skipped
}

// Build walks the root and parses (or recalls) every source file.
func (ix *Indexer) Build(ctx context.Context) (*Index, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	files, truncated, err := walk.Walk(ctx, ix.Root, func(rel string) bool { return symbols.Detect(rel) != "" })
	if err != nil {
		return nil, err
	}
	files, unparsed := parseable(files)
	workers := ix.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]result, len(files))
	prog := newProgress(ix.Progress, len(files))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = ix.one(files[i], ix.memo[files[i].Abs])
				prog.done(results[i].how == 0)
			}
		}()
	}
	var cerr error
	for i := range files {
		if cerr = ctx.Err(); cerr != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	prog.finish()
	if cerr != nil {
		return nil, fmt.Errorf("build index: %w", cerr)
	}
	memo := make(map[string]memoEntry, len(files))
	out := &Index{Root: ix.Root, maps: &mapCache{results: map[string]MapResult{}}}
	abss := make([]string, len(files))
	unchanged := ix.last != nil && len(files) == len(ix.lastAbss)
	for i, r := range results {
		memo[files[i].Abs] = r.memo
		abss[i] = files[i].Abs
		unchanged = unchanged && r.how == 2 && ix.lastAbss[i] == files[i].Abs
		if r.skipped {
			out.Stats.Skipped++
			continue
		}
		out.Files = append(out.Files, r.entry)
		switch r.how {
		case 0:
			out.Stats.Parsed++
		case 1:
			out.Stats.CacheHits++
		case 2:
			out.Stats.MemoHits++
		}
	}
	out.Stats.Files = len(out.Files)
	out.Stats.Truncated = truncated
	out.Stats.Unparsed = unparsed
	if unchanged {
		out.maps = ix.last.maps // same files, same content: the same maps
	}
	ix.memo, ix.last, ix.lastAbss = memo, out, abss
	return out, nil
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

// one indexes a single file; the memo map is only read here.
func (ix *Indexer) one(f walk.File, prev memoEntry) result {
	st, err := os.Stat(f.Abs)
	if err != nil {
		return result{skipped: true}
	}
	if !prev.mtime.IsZero() && prev.size == st.Size() && prev.mtime.Equal(st.ModTime()) {
		return result{entry: Entry{Rel: f.Rel, File: prev.file}, memo: prev, skipped: prev.skip, how: 2}
	}
	m := memoEntry{size: st.Size(), mtime: st.ModTime()}
	data, err := os.ReadFile(f.Abs)
	if err != nil {
		return result{skipped: true}
	}
	if walk.Classify(data) != "" {
		m.skip = true
		return result{memo: m, skipped: true, how: 3}
	}
	lang := symbols.Language(f.Rel)
	key := cache.Key(lang, data)
	how := 1
	file, ok := ix.Cache.Get(key)
	if !ok {
		how = 0
		file = symbols.Parse(f.Rel, data)
		_ = ix.Cache.Put(key, file) // a cache that cannot be written only costs speed
	}
	m.file = file
	return result{entry: Entry{Rel: f.Rel, File: file}, memo: m, how: how}
}

// progress prints "mapgen: parsed N/M files" at most every 200 ms, only for
// large repositories and only once a file actually had to be parsed.
type progress struct {
	w       io.Writer
	total   int
	mu      sync.Mutex
	count   int
	parsed  bool
	last    time.Time
	printed bool
}

func newProgress(w io.Writer, total int) *progress {
	if total < ProgressMinFiles {
		w = nil
	}
	return &progress{w: w, total: total, last: time.Now()}
}

func (p *progress) done(parsed bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	p.parsed = p.parsed || parsed
	if !p.parsed || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.printed = true
	fmt.Fprintf(p.w, "\rmapgen: indexed %d/%d files", p.count, p.total)
}

func (p *progress) finish() {
	if p.w != nil && p.printed {
		fmt.Fprintf(p.w, "\rmapgen: indexed %d/%d files\n", p.count, p.total)
	}
}
