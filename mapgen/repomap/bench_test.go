package repomap

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// gorootSrc is the Go standard library's source, the large repository the
// benchmarks map.
func gorootSrc(b *testing.B) walk.Root {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no standard library source: %v", err)
	}
	root, err := walk.NewRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	return root
}

func reportFiles(b *testing.B, files int) {
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkBuildCold indexes the standard library with an empty parse cache
// (walk, read, parse, write the cache).
func BenchmarkBuildCold(b *testing.B) {
	root := gorootSrc(b)
	files := 0
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		ix, err := (&Indexer{Root: root, Store: cache.Store{Dir: dir}}).Build(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		files = ix.Stats.Files
	}
	reportFiles(b, files)
}

// BenchmarkBuildWarm indexes it again in a new process's shoes: a fresh
// Indexer over a filled disk cache (walk, read, hash, load cached entries).
func BenchmarkBuildWarm(b *testing.B) {
	root := gorootSrc(b)
	c := cache.Store{Dir: b.TempDir()}
	if _, err := (&Indexer{Root: root, Store: c}).Build(context.Background()); err != nil {
		b.Fatal(err)
	}
	files := 0
	for b.Loop() {
		ix, err := (&Indexer{Root: root, Store: c}).Build(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if ix.Stats.Parsed != 0 {
			b.Fatalf("warm build parsed %d files", ix.Stats.Parsed)
		}
		files = ix.Stats.Files
	}
	reportFiles(b, files)
}

// BenchmarkBuildMemo rebuilds with the same Indexer, as the long-lived MCP
// server does between tool calls (walk and stat only).
func BenchmarkBuildMemo(b *testing.B) {
	root := gorootSrc(b)
	ixr := &Indexer{Root: root}
	if _, err := ixr.Build(context.Background()); err != nil {
		b.Fatal(err)
	}
	files := 0
	for b.Loop() {
		ix, err := ixr.Build(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		files = ix.Stats.Files
	}
	reportFiles(b, files)
}

// BenchmarkMap ranks and renders a 2048-token map of the indexed standard
// library.
func BenchmarkMap(b *testing.B) {
	root := gorootSrc(b)
	ix, err := (&Indexer{Root: root}).Build(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ix.Map(MapOptions{Budget: DefaultBudget})
	}
	reportFiles(b, ix.NumFiles())
}

// BenchmarkSymbolWarm answers `symbol NewReader` as a new process does over
// a filled disk cache: load the index, check every recorded stamp, look the
// name up (the freshness check is most of it; see docs/maps.md).
func BenchmarkSymbolWarm(b *testing.B) {
	root := gorootSrc(b)
	c := cache.Store{Dir: b.TempDir()}
	if _, err := (&Indexer{Root: root, Store: c}).Build(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ix, err := (&Indexer{Root: root, Store: c}).Build(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if ix.Stats.Walked {
			b.Fatal("a warm lookup walked the tree")
		}
		if ix.Find("NewReader", false) == "" {
			b.Fatal("no answer")
		}
	}
}
