package symbols

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse parses each language's corpus file; b.SetBytes makes the
// result a throughput per language.
func BenchmarkParse(b *testing.B) {
	for _, name := range samples {
		b.Run(Detect(name)+"/"+name, func(b *testing.B) {
			if Language(name) == "" {
				b.Skipf("%s needs a cgo build", Detect(name))
			}
			src, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(name, src)
			}
		})
	}
}
