package reads

import (
	"fmt"
	"strings"
	"testing"
)

// benchEnv is a context that has read n files.
func benchEnv(b *testing.B, n int) (*env, []string) {
	e := newEnv(b)
	paths := make([]string, n)
	for i := range paths {
		paths[i] = e.file(fmt.Sprintf("pkg%02d/file_%03d.go", i%25, i), 50+i%300)
		e.read(paths[i], 0, 0)
	}
	return e, paths
}

func BenchmarkPreReread500(b *testing.B) {
	e, paths := benchEnv(b, 500)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := e.input("PreToolUse", "Read", map[string]any{"file_path": paths[i%len(paths)]}, nil)
		if _, err := e.s.Pre(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPreLoopCheck500(b *testing.B) {
	e, _ := benchEnv(b, 500)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := e.input("PreToolUse", "Bash", map[string]any{"command": "pytest -q | tail -" + strings.Repeat("4", 1+i%3)}, nil)
		if _, err := e.s.Pre(in); err != nil {
			b.Fatal(err)
		}
	}
}
