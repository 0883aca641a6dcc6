package symbols

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// samples are the per-language corpora under testdata, written for these
// tests; their goldens were checked by hand against the source.
var samples = []string{"sample.go", "sample.py", "sample.ts", "sample.tsx", "sample.js", "sample.jsx",
	"sample.rs", "sample.java", "sample.c", "sample.cpp", "sample.rb", "sample.cs", "sample.sh"}

func TestParseGolden(t *testing.T) {
	for _, name := range samples {
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
	assert.Equal(t, "", Language("Makefile"))
	assert.Equal(t, "ruby", Detect("lib/Rakefile"))
	assert.Equal(t, "cpp", Detect("x/Y.HPP"))
	assert.Equal(t, "", Detect("notes.txt"))
	f := Parse("notes.txt", []byte("fn main() {}"))
	assert.Equal(t, "unsupported language", f.Err)
	for _, l := range Known() {
		assert.NotEqual(t, Supported(l), slices.Contains(Missing(), l), l)
		assert.Equal(t, Supported(l), slices.Contains(Languages(), l), l)
	}
}

// fuzzSeeds are the corpus file and a few broken fragments per language.
var fuzzSeeds = map[string][]string{
	"sample.go":   {"package p; type T[ struct{"},
	"sample.py":   {"class A(:\n  def f(self, x=\"\"\"\n"},
	"sample.ts":   {"export class { constructor(private", "let x = <T,>(a"},
	"sample.tsx":  {"const a = <div>{</span>", "function f<T>(x: T"},
	"sample.js":   {"class A { #x = ; get", "export default async function*"},
	"sample.jsx":  {"<A b={<C />}", "()=>"},
	"sample.rs":   {"impl<T> for { fn", "macro_rules! m { ($"},
	"sample.java": {"@interface A { int[] x() default {", "class A { A("},
	"sample.c":    {"int (*f)(int (*)(", "#define X(a,"},
	"sample.cpp":  {"template<class T> A<T>::~A(", "namespace { class"},
	"sample.rb":   {"def self.(x", "class << self\n def"},
	"sample.cs":   {"namespace A; class B { int C { get", "delegate void ("},
	"sample.sh":   {"f() { local x=$(", "declare -A m=(["},
}

// fuzzParse fuzzes Parse for one corpus file's language: arbitrary bytes
// never panic and always come back with the file's language.
func fuzzParse(f *testing.F, sample string) {
	if Language(sample) == "" {
		f.Skipf("%s needs a cgo build (this one parses %v)", Detect(sample), Languages())
	}
	src, err := os.ReadFile(filepath.Join("testdata", sample))
	require.NoError(f, err)
	f.Add(src)
	for _, s := range fuzzSeeds[sample] {
		f.Add([]byte(s))
	}
	name := "f" + filepath.Ext(sample)
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Parse(name, data)
		if got.Lang != Detect(name) {
			t.Fatalf("language %q, want %q", got.Lang, Detect(name))
		}
		checkInvariants(t, got)
	})
}

// checkInvariants checks what the package doc promises of a parsed File.
func checkInvariants(t *testing.T, f File) {
	t.Helper()
	if len(f.Refs) != len(f.RefLines) {
		t.Fatalf("%d reference keys but %d with lines", len(f.Refs), len(f.RefLines))
	}
	for k, ls := range f.RefLines {
		if f.Refs[k] < len(ls) || !slices.IsSorted(ls) || len(slices.Compact(slices.Clone(ls))) != len(ls) {
			t.Fatalf("reference %q: %d uses on lines %v", k, f.Refs[k], ls)
		}
	}
	var walk func(defs []Def, lo, hi int)
	walk = func(defs []Def, lo, hi int) {
		for i, d := range defs {
			if d.Start < 1 || d.End < d.Start || d.Start < lo || d.End > hi {
				t.Fatalf("%s %s: lines %d-%d outside %d-%d", d.Kind, d.Name, d.Start, d.End, lo, hi)
			}
			if i > 0 && d.Start < defs[i-1].Start {
				t.Fatalf("%s %s at line %d after line %d", d.Kind, d.Name, d.Start, defs[i-1].Start)
			}
			if f.Lang != "go" { // Go methods sit under their type wherever they are
				walk(d.Children, d.Start, d.End)
			}
		}
	}
	walk(f.Defs, 1, max(f.Lines, 1))
}

func FuzzParseGo(f *testing.F)         { fuzzParse(f, "sample.go") }
func FuzzParsePython(f *testing.F)     { fuzzParse(f, "sample.py") }
func FuzzParseTypeScript(f *testing.F) { fuzzParse(f, "sample.ts") }
func FuzzParseTSX(f *testing.F)        { fuzzParse(f, "sample.tsx") }
func FuzzParseJavaScript(f *testing.F) { fuzzParse(f, "sample.js") }
func FuzzParseJSX(f *testing.F)        { fuzzParse(f, "sample.jsx") }
func FuzzParseRust(f *testing.F)       { fuzzParse(f, "sample.rs") }
func FuzzParseJava(f *testing.F)       { fuzzParse(f, "sample.java") }
func FuzzParseC(f *testing.F)          { fuzzParse(f, "sample.c") }
func FuzzParseCPP(f *testing.F)        { fuzzParse(f, "sample.cpp") }
func FuzzParseRuby(f *testing.F)       { fuzzParse(f, "sample.rb") }
func FuzzParseCSharp(f *testing.F)     { fuzzParse(f, "sample.cs") }
func FuzzParseBash(f *testing.F)       { fuzzParse(f, "sample.sh") }

func TestLongValueSignature(t *testing.T) {
	src := "package p\n\nvar Table = map[string]int{\n" + strings.Repeat("\t\"key\": 1,\n", 50) + "}\n\nconst Short = 3\n"
	f := Parse("p.go", []byte(src))
	require.Len(t, f.Defs, 2)
	assert.Equal(t, "var Table = …", f.Defs[0].Signature)
	assert.Equal(t, 3, f.Defs[0].Start)
	assert.Equal(t, 54, f.Defs[0].End)
	assert.Equal(t, "const Short = 3", f.Defs[1].Signature)
}

func TestEveryLanguageParsesItsSample(t *testing.T) {
	byLang := map[string]string{}
	for _, s := range samples {
		byLang[Detect(s)] = s
	}
	for _, l := range Languages() {
		s, ok := byLang[l]
		require.True(t, ok, "language %s has no sample under testdata", l)
		src, err := os.ReadFile(filepath.Join("testdata", s))
		require.NoError(t, err)
		f := Parse(s, src)
		checkInvariants(t, f)
		assert.Empty(t, f.Err, s)
		assert.NotEmpty(t, f.Defs, s)
		assert.NotEmpty(t, f.Refs, s)
		assert.Len(t, f.RefLines, len(f.Refs), s)
	}
}

// Parse runs concurrently (the indexer's workers share nothing but the
// pools): every goroutine gets the serial result for every corpus file.
func TestParseConcurrent(t *testing.T) {
	srcs := map[string][]byte{}
	want := map[string]File{}
	for _, s := range samples {
		src, err := os.ReadFile(filepath.Join("testdata", s))
		require.NoError(t, err)
		srcs[s], want[s] = src, Parse(s, src)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				for _, s := range samples {
					assert.Equal(t, want[s], Parse(s, srcs[s]), s)
				}
			}
		})
	}
	wg.Wait()
}
