package extract

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/screen"
)

// threeMB writes a transcript of at least 3,000,000 bytes, whole lines of
// the m-claude fixture repeated (its human turns included), and returns
// its path.
func threeMB(b *testing.B) string {
	b.Helper()
	data, err := os.ReadFile("testdata/m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	for out.Len() < 3_000_000 {
		rest := data
		for len(rest) > 0 && out.Len() < 3_000_000 {
			i := bytes.IndexByte(rest, '\n')
			out.Write(rest[:i+1])
			rest = rest[i+1:]
		}
	}
	p := filepath.Join(b.TempDir(), "three-mb.jsonl")
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkExtractEmbedded is the embedded extraction of a 3 MB transcript:
// reading it into human turns (split into typed and pasted spans,
// redacted), the rules, the grounding check and the safety gate. Goal: under 1 s.
func BenchmarkExtractEmbedded(b *testing.B) {
	p := threeMB(b)
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	for b.Loop() {
		d, err := read.Read(p, 0)
		if err != nil {
			b.Fatal(err)
		}
		obs, _ := Embedded{}.Extract(context.Background(), d, nil)
		kept, _ := Validate(d, obs)
		if kept, _ = screen.Candidates(kept); len(kept) == 0 {
			b.Fatal("nothing extracted")
		}
	}
}

// BenchmarkExtractPasteHeavy is the embedded extraction of the shared
// labelled set's largest real session (pai-procrypto, 3.2 MB: browser
// stack traces of up to 127 KB and the assistant's answers pasted back),
// the case where splitting typed from pasted text and the secret scan
// cost most. Goal: under 1 s. Skipped when shared/fixtures is absent.
func BenchmarkExtractPasteHeavy(b *testing.B) {
	p := filepath.Join(filepath.Dir(sharedFixtures(b)), "learning", "pai-procrypto", "4b85f137-9b0d-418e-8870-6de8cea01765.jsonl")
	fi, err := os.Stat(p)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		d, err := read.Read(p, 0)
		if err != nil {
			b.Fatal(err)
		}
		obs, _ := Embedded{}.Extract(context.Background(), d, nil)
		kept, _ := Validate(d, obs)
		_, _ = screen.Candidates(kept)
	}
}
