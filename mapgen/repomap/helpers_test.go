package repomap

import (
	"fmt"
	"io"
	"sync"
)

// Test helpers: what only the tests and benchmarks need.

// rank ranks files afresh (tests; maps use the index's cached graph).
func rank(files []Entry, focus map[int]bool, mentioned map[string]bool) ranking {
	return buildGraph(files).rank(focus, mentioned)
}

// NumFiles is the number of indexed (non-skipped) files.
func (ix *Index) NumFiles() int { return ix.Stats.Files }

// writerProgress prints "mapgen: indexed N/M files" lines to a writer, for
// callers without a terminal progress bar (tests, logs).
type writerProgress struct {
	w            io.Writer
	mu           sync.Mutex
	count, total int
}

// LineProgress returns a Progress that prints one line per 10% to w.
func LineProgress(w io.Writer) Progress { return &writerProgress{w: w} }

func (p *writerProgress) Start(total int) { p.total = total }

func (p *writerProgress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	before := p.count * 10 / max(p.total, 1)
	p.count += n
	if after := p.count * 10 / max(p.total, 1); after != before {
		fmt.Fprintf(p.w, "mapgen: parsed %d/%d files\n", p.count, p.total)
	}
}

func (p *writerProgress) Finish() {}
