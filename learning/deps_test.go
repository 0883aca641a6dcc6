package learning_test

import (
	"fmt"
	"go/build"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rules is the import order of this module, lowest first, in the notation
// of go/build's deps_test: "a, b < c" lets c import a and b and whatever a
// and b may import. Names are package paths inside the module. A package
// may import only what the rules allow it, the standard library, the
// internal module, and the third parties thirdParty grants it.
const rules = `
	# The profile (vocabulary and versioned store), the secret scanner,
	# the model endpoint client and the durable queue import no package
	# of this module.
	NONE < store, redact, chatapi, queue;

	# The stages, in the order a session flows through them.
	store, redact < read < extract < screen < review < publish;
	chatapi < extract, publish;

	# The one driver of a session through read → extract → screen → store.
	screen < pipeline;

	# Adapters: above every stage.
	pipeline, publish, queue < hook, cli, mcptool;
	hook < cmd/synaxi-ingest;
`

// thirdParty is every module outside ours a package may import.
var thirdParty = map[string][]string{
	"redact":            {"github.com/rs/zerolog", "github.com/zricethezav/gitleaks/v8"},
	"publish":           {"github.com/google/renameio/v2", "github.com/tidwall/gjson"},
	"review":            {"github.com/tidwall/gjson"},
	"hook":              {"github.com/gofrs/flock"},
	"cli":               {"github.com/charmbracelet/", "github.com/schollz/progressbar/v3", "golang.org/x/term"},
	"cmd/synaxi-ingest": {"gopkg.in/natefinch/lumberjack.v2"},
}

const (
	module   = "github.com/synaxi/synaxi/learning"
	internal = "github.com/synaxi/synaxi/internal"
)

// allowed parses rules into, for each package, the packages it may import.
func allowed(t *testing.T, rules string) map[string][]string {
	t.Helper()
	may := map[string][]string{}
	for _, rule := range strings.Split(stripComments(rules), ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		var below []string
		for i, seg := range strings.Split(rule, "<") {
			names := strings.Split(seg, ",")
			for j := range names {
				if names[j] = strings.TrimSpace(names[j]); names[j] == "" {
					t.Fatalf("rules: empty name in %q", strings.TrimSpace(rule))
				}
			}
			if i == 0 && slices.Equal(names, []string{"NONE"}) {
				for _, n := range strings.Split(strings.SplitN(rule, "<", 3)[1], ",") {
					may[strings.TrimSpace(n)] = []string{}
				}
				continue
			}
			for _, n := range names {
				if _, placed := may[n]; i == 0 && !placed {
					t.Fatalf("rules: %s opens %q before a rule places it", n, strings.TrimSpace(rule))
				}
				if i > 0 {
					may[n] = compact(append(may[n], below...))
				}
			}
			for _, n := range names {
				below = compact(append(append(below, n), may[n]...))
			}
		}
	}
	return may
}

func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		line, _, _ = strings.Cut(line, "#")
		b.WriteString(line)
		b.WriteString("\n")
	}
	return b.String()
}

func compact(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// imports is every package of the module with its non-test imports, read
// from the files themselves (not by `go list` in a child process, whose
// reads would not invalidate go test's cache).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	err := filepath.WalkDir(".", func(dir string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		if n := e.Name(); n == "testdata" || dir != "." && strings.HasPrefix(n, ".") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		} else if err != nil {
			return fmt.Errorf("read the imports of %s: %w", dir, err)
		}
		got[path.Join(module, filepath.ToSlash(dir))] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// violations lists every import the rules do not allow, as "pkg -> dep"
// with the dep's full path for a third party.
func violations(may map[string][]string, pkgs map[string][]string) []string {
	var bad []string
	for path, deps := range pkgs {
		name := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if name == "" {
			continue // this package: the rules' own home
		}
		for _, dep := range deps {
			switch {
			case !strings.Contains(strings.Split(dep, "/")[0], "."):
				// the standard library
			case dep == internal || strings.HasPrefix(dep, internal+"/"):
			case strings.HasPrefix(dep, module+"/"):
				d := strings.TrimPrefix(dep, module+"/")
				if !slices.Contains(may[name], d) {
					bad = append(bad, name+" -> "+d)
				}
			default:
				if !slices.ContainsFunc(thirdParty[name], func(p string) bool { return strings.HasPrefix(dep, p) }) {
					bad = append(bad, name+" -> "+dep)
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestDependencyRules fails on an import against the stage order: a stage
// importing a later stage or an adapter, or a package linking a third
// party it was not granted.
func TestDependencyRules(t *testing.T) {
	may := allowed(t, rules)
	pkgs := imports(t)
	for path := range pkgs {
		name := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if _, ok := may[name]; !ok && name != "" {
			t.Errorf("%s is in no rule: place it in deps_test.go's rules", name)
		}
	}
	for _, v := range violations(may, pkgs) {
		t.Errorf("import against the learning order: %s (deps_test.go's rules say what each package may import)", v)
	}
}

// TestRulesParse checks the notation on a small order.
func TestRulesParse(t *testing.T) {
	may := allowed(t, "NONE < a, b; a < c < d; b, d < e;")
	for _, tc := range []struct {
		pkg  string
		want []string
	}{
		{"a", []string{}}, {"c", []string{"a"}}, {"d", []string{"a", "c"}}, {"e", []string{"a", "b", "c", "d"}},
	} {
		if got := may[tc.pkg]; !slices.Equal(got, tc.want) {
			t.Errorf("%s may import %v, want %v", tc.pkg, got, tc.want)
		}
	}
}
