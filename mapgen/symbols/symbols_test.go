package symbols

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParseGolden(t *testing.T) {
	for _, name := range []string{"sample.go", "sample.py"} {
		t.Run(name, func(t *testing.T) {
			if Language(name) == "" {
				t.Skipf("%s is not supported in this build (%v)", name, Languages())
			}
			src, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			got, err := json.MarshalIndent(Parse(name, src), "", "  ")
			require.NoError(t, err)
			golden := filepath.Join("testdata", name+".golden.json")
			if *update {
				require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got)+"\n")
		})
	}
}

func TestParseGoSyntaxError(t *testing.T) {
	f := Parse("broken.go", []byte("package p\n\nfunc Good() {}\n\nfunc Bad( {\n"))
	assert.NotEmpty(t, f.Err)
	require.NotEmpty(t, f.Defs)
	assert.Equal(t, "Good", f.Defs[0].Name)
}

func TestLanguage(t *testing.T) {
	assert.Equal(t, "go", Language("a/b.go"))
	assert.Equal(t, "", Language("a/b.rs"))
	assert.Equal(t, "", Language("Makefile"))
	f := Parse("x.rs", []byte("fn main() {}"))
	assert.Equal(t, "unsupported language", f.Err)
}

func FuzzParseGo(f *testing.F) {
	src, err := os.ReadFile(filepath.Join("testdata", "sample.go"))
	require.NoError(f, err)
	f.Add(src)
	f.Add([]byte("package p; type T[ struct{"))
	f.Fuzz(func(t *testing.T, data []byte) { _ = Parse("f.go", data) })
}

func FuzzParsePython(f *testing.F) {
	if Language("f.py") == "" {
		f.Skip("python needs a cgo build")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "sample.py"))
	require.NoError(f, err)
	f.Add(src)
	f.Add([]byte("class A(:\n  def f(self, x=\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) { _ = Parse("f.py", data) })
}

func TestLongValueSignature(t *testing.T) {
	src := "package p\n\nvar Table = map[string]int{\n" + strings.Repeat("\t\"key\": 1,\n", 50) + "}\n\nconst Short = 3\n"
	f := Parse("p.go", []byte(src))
	require.Len(t, f.Defs, 2)
	assert.Equal(t, "var Table = …", f.Defs[0].Signature)
	assert.Equal(t, 3, f.Defs[0].Start)
	assert.Equal(t, 54, f.Defs[0].End)
	assert.Equal(t, "const Short = 3", f.Defs[1].Signature)
}
