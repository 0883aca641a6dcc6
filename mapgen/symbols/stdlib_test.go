package symbols

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goDocPackages are the standard-library packages the Go parser is checked
// on against `go doc`.
var goDocPackages = []string{"strings", "bytes", "io", "os", "fmt", "errors", "sort", "strconv",
	"bufio", "net/url", "encoding/json", "sync", "time"}

var goDocShort = regexp.MustCompile(`^(func|type|const|var) (\w+)`)

// TestGoAgainstGoDoc checks the Go parser on standard-library packages:
// every name `go doc -short` lists is a definition of the same kind, and
// the source line at the definition's file and start line is a line that
// `go doc -all -src` prints for the package (so file and line are right).
func TestGoAgainstGoDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go doc on 13 packages")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "env", "GOROOT").Output()
	require.NoError(t, err, "go env GOROOT")
	goroot := strings.TrimSpace(string(out))
	for _, pkg := range goDocPackages {
		t.Run(pkg, func(t *testing.T) {
			short := goDoc(t, goBin, "-short", pkg)
			src := map[string]bool{}
			for line := range strings.Lines(goDoc(t, goBin, "-all", "-src", pkg)) {
				src[strings.TrimSpace(line)] = true
			}
			defs := parseGoDir(t, filepath.Join(goroot, "src", filepath.FromSlash(pkg)))
			checked := 0
			for line := range strings.Lines(short) {
				m := goDocShort.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				kw, name := m[1], m[2]
				sites := defs[name]
				var kinds, placed []string
				ok := false
				for _, s := range sites {
					kinds = append(kinds, s.def.Kind)
					text := strings.TrimSpace(s.lines[s.def.Start-1])
					placed = append(placed, fmt.Sprintf("%s:%d %q", s.file, s.def.Start, text))
					if goKindMatches(kw, s.def.Kind) && src[text] && containsWord(text, name) {
						ok = true
					}
				}
				if assert.True(t, ok, "%s %s.%s: definitions %v at %v", kw, pkg, name, kinds, placed) {
					checked++
				}
			}
			assert.Greater(t, checked, 5, "too few names checked in %s", pkg)
			t.Logf("%s: %d names from go doc -short found at the file and line go doc -src shows", pkg, checked)
		})
	}
}

func goDoc(t *testing.T, goBin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goBin, append([]string{"doc"}, args...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err, "go doc %v", args)
	return string(out)
}

func goKindMatches(kw, kind string) bool {
	switch kw {
	case "type":
		return kind == KindType || kind == KindStruct || kind == KindInterface
	default:
		return kw == kind
	}
}

func containsWord(line, word string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`).MatchString(line)
}

type goSite struct {
	file  string
	lines []string
	def   Def
}

// parseGoDir parses a package directory's non-test files and returns the
// top-level definitions by name.
func parseGoDir(t *testing.T, dir string) map[string][]goSite {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][]goSite{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		f := Parse(name, src)
		require.Empty(t, f.Err, name)
		lines := strings.Split(string(src), "\n")
		for _, d := range f.Defs {
			out[d.Name] = append(out[d.Name], goSite{file: name, lines: lines, def: d})
		}
	}
	return out
}

// TestPythonAgainstAST checks the Python parser over the standard library
// of the python3 on this machine (its own test suites left out, see
// testdata/pyast.py) against the ast module: the same definitions (kind,
// name, first and last line, enclosing class or function) in the same
// order, file by file.
func TestPythonAgainstAST(t *testing.T) {
	if testing.Short() {
		t.Skip("parses the whole Python standard library")
	}
	if Language("x.py") == "" {
		t.Skip("python needs a cgo build")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed, so there is no ast module to check against")
	}
	out, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	require.NoError(t, err)
	stdlib := strings.TrimSpace(string(out))
	listing, err := exec.Command(py, filepath.Join("testdata", "pyast.py"), stdlib).Output()
	require.NoError(t, err)

	files, defs, bad := 0, 0, 0
	sc := bufio.NewScanner(bytes.NewReader(listing))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			File string  `json:"file"`
			Defs [][]any `json:"defs"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		src, err := os.ReadFile(filepath.Join(stdlib, rec.File))
		require.NoError(t, err)
		want := make([]string, len(rec.Defs))
		for i, d := range rec.Defs {
			want[i] = fmt.Sprintf("%s %s L%v-%v in %q", d...)
		}
		got := astShape(Parse(rec.File, src).Defs, "")
		files++
		defs += len(want)
		if diff := firstDifference(want, got); diff != "" {
			t.Errorf("%s: %s", rec.File, diff)
			bad++
			if bad >= 10 {
				t.Fatal("stopping after 10 files that differ")
			}
		}
	}
	require.NoError(t, sc.Err())
	require.Greater(t, files, 100, "too few files under %s", stdlib)
	t.Logf("%d files, %d definitions of %s checked against ast", files, defs, stdlib)
}

// astShape flattens definitions the way testdata/pyast.py prints them.
func astShape(defs []Def, parent string) []string {
	var out []string
	for _, d := range defs {
		kind := d.Kind
		switch kind {
		case KindMethod:
			kind = KindFunc
		case KindField:
			kind = KindVar
		}
		out = append(out, fmt.Sprintf("%s %s L%v-%v in %q", kind, d.Name, d.Start, d.End, parent))
		out = append(out, astShape(d.Children, d.Name)...)
	}
	return out
}

// firstDifference describes where two definition lists first differ, or
// returns "" when they are equal.
func firstDifference(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("definition %d: ast has %q, parser has %q", i+1, w, g)
		}
	}
	return ""
}
