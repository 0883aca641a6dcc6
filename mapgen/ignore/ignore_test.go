package ignore

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		name    string
		domain  string
		rules   string
		path    string
		isDir   bool
		ignored bool
	}{
		{"bare name any depth", "", "foo.txt\n", "a/b/foo.txt", false, true},
		{"bare name other file", "", "foo.txt\n", "a/foo.txt.bak", false, false},
		{"star does not cross slash", "", "a/*.log\n", "a/b/c.log", false, false},
		{"bang class negates", "", "*.[!o]\n", "a.c", false, true},
		{"bang class keeps excluded char", "", "*.[!o]\n", "a.o", false, false},
		{"caret class negates", "", "*.[^o]\n", "a.o", false, false},
		{"leading bracket is literal", "", "[]x].txt\n", "].txt", false, true},
		{"negation re-includes", "", "*.log\n!keep.log\n", "keep.log", false, false},
		{"later rule wins", "", "!keep.log\n*.log\n", "keep.log", false, true},
		{"leading slash anchors", "", "/build\n", "src/build", true, false},
		{"dir only skips file", "", "out/\n", "x/out", false, false},
		{"dir only matches dir", "", "out/\n", "x/out", true, true},
		{"double star in segment is star", "", "a**b.txt\n", "axyzb.txt", false, true},
		{"escaped hash", "", "\\#x\n", "#x", false, true},
		{"comment", "", "#x\n", "#x", false, false},
		{"escaped bang", "", "\\!x\n", "!x", false, true},
		{"escaped trailing space kept", "", "x\\ \n", "x ", false, true},
		{"unescaped trailing space trimmed", "", "x  \n", "x", false, true},
		{"escaped star literal", "", "a\\*\n", "ab", false, false},
		{"escaped star matches star", "", "a\\*\n", "a*", false, true},
		{"domain limits", "sub", "*.tmp\n", "x.tmp", false, false},
		{"domain applies below", "sub", "*.tmp\n", "sub/a/x.tmp", false, true},
		{"domain anchors", "sub", "/local\n", "sub/a/local", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := Parse(tt.domain, []byte(tt.rules))
			assert.Equal(t, tt.ignored, rules.Ignored(tt.path, tt.isDir))
		})
	}
}

func TestWithDoesNotShare(t *testing.T) {
	base := make(Rules, 0, 8)
	base = base.With(Parse("", []byte("*.a\n")))
	one := base.With(Parse("", []byte("*.b\n")))
	two := base.With(Parse("", []byte("!*.b\n*.c\n")))
	assert.True(t, one.Ignored("x.b", false))
	assert.False(t, two.Ignored("x.b", false))
	assert.Len(t, one, 2)
}

// trickyTree is a work tree whose ignore files use the patterns git users
// get wrong most often; every path is checked against git itself.
var trickyTree = map[string]string{
	".gitignore": strings.Join([]string{
		"# a comment", "*.[!o]", "!keep.c", "/anchored.txt", "build/", "**/deep/**/x.txt",
		"foo/**", "!foo/keep.me", `\#hash.txt`, `\!bang.txt`, `trailing\ `, "a**b.txt",
		"doc/*.md", "[]x].txt", "spaced.txt   ", "lib/**/*.gen", "*.bak", "!/top.bak", "",
	}, "\n"),
	"sub/.gitignore":        "*.tmp\n!important.tmp\n/local.txt\nnested/\n",
	"sub/deeper/.gitignore": "!*.bak\n",
	".git/info/exclude":     "*.log\n",
	"xdg/git/ignore":        "*.global\n",
}

var trickyPaths = []string{
	"a.o", "a.c", "a.h", "keep.c", "x.go", "anchored.txt", "x/anchored.txt", "build/out.go",
	"x/build/y.go", "x/build", "deep/x.txt", "a/deep/b/x.txt", "a/deep/x.txt", "foo/bar.go",
	"foo/keep.me", "foo/sub/z.go", "#hash.txt", "!bang.txt", "trailing ", "trailing",
	"axxb.txt", "ab.txt", "doc/readme.md", "doc/sub/readme.md", "].txt", "x.txt", "sub/a.tmp",
	"sub/important.tmp", "sub/local.txt", "sub/x/local.txt", "sub/nested/f.go", "sub/x/nested/g.go",
	"debug.log", "sub/debug.log", "z.global", "spaced.txt", "lib/a/b/c.gen", "lib/c.gen",
	"old.bak", "top.bak", "x/top.bak", "sub/deeper/y.bak",
}

// TestMatchesGitCheckIgnore builds trickyTree in a real git repository and
// compares what git check-ignore says about every path (and each of its
// parent directories) with Load + Ignored as the walk applies them.
func TestMatchesGitCheckIgnore(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(work, "xdg")}
	getenv := func(k string) string { return env[k] }
	cmd := exec.Command(git, "init", "-q", work)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+env["XDG_CONFIG_HOME"], "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for rel, content := range trickyTree {
		p := filepath.Join(work, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	// Every path and all of its parents, each once.
	var all []string
	isDir := map[string]bool{}
	for _, rel := range trickyPaths {
		p := filepath.Join(work, filepath.FromSlash(rel))
		if rel == "x/build" {
			require.NoError(t, os.MkdirAll(p, 0o755))
		} else {
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, nil, 0o644))
		}
		parts := strings.Split(rel, "/")
		for i := 1; i <= len(parts); i++ {
			sub := strings.Join(parts[:i], "/")
			if i < len(parts) || rel == "x/build" {
				isDir[sub] = true
			}
			if !slices.Contains(all, sub) {
				all = append(all, sub)
			}
		}
	}

	cmd = exec.Command(git, "-C", work, "check-ignore", "--stdin")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+env["XDG_CONFIG_HOME"], "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(strings.Join(all, "\n") + "\n")
	out, err = cmd.Output()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		require.NoError(t, err) // exit 1 only means "nothing ignored"
	}
	gitIgnored := map[string]bool{}
	for l := range strings.Lines(string(out)) {
		gitIgnored[strings.TrimRight(l, "\n")] = true
	}
	require.NotEmpty(t, gitIgnored)

	ctx := Load(work, getenv)
	ours := func(rel string) bool {
		rules := ctx.Rules
		parts := strings.Split(rel, "/")
		for i := range parts {
			dirRel := strings.Join(parts[:i], "/")
			if data, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(dirRel), ".gitignore")); err == nil {
				rules = rules.With(Parse(dirRel, data))
			}
			sub := strings.Join(parts[:i+1], "/")
			if rules.Ignored(sub, isDir[sub]) {
				return true
			}
		}
		return false
	}
	var wrong []string
	for _, rel := range all {
		if ours(rel) != gitIgnored[rel] {
			wrong = append(wrong, rel)
		}
	}
	assert.Empty(t, wrong, "paths where git check-ignore disagrees (git ignores: %v)", gitIgnored)
	assert.True(t, gitIgnored["a.c"] && !gitIgnored["a.o"], "the tree exercises [!o]")
}

func TestLoadFindsWorkTreeAndPrefix(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/a/b/skip.go\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", ".gitignore"), []byte("*.gen\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("*.log\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home", ".config", "git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "home", ".gitconfig"), []byte("[core]\n\texcludesFile = ~/my-ignore\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "home", "my-ignore"), []byte("*.mine\n"), 0o644))
	getenv := func(k string) string {
		if k == "HOME" {
			return filepath.Join(dir, "home")
		}
		return ""
	}
	ctx := Load(filepath.Join(dir, "a", "b"), getenv)
	assert.Equal(t, "a/b", ctx.Prefix)
	assert.True(t, ctx.Rules.Ignored("a/b/skip.go", false), "top .gitignore, anchored")
	assert.True(t, ctx.Rules.Ignored("a/b/x.gen", false), "parent .gitignore")
	assert.True(t, ctx.Rules.Ignored("a/b/x.log", false), "info/exclude")
	assert.True(t, ctx.Rules.Ignored("a/b/x.mine", false), "core.excludesFile")
	assert.False(t, ctx.Rules.Ignored("a/b/x.go", false))
	assert.Contains(t, ctx.Sources, filepath.Join(dir, "home", "my-ignore"))
	assert.Contains(t, ctx.Sources, filepath.Join(dir, ".git", "info", "exclude"))
}

func TestLoadIgnoredRootStandsAlone(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "versions", "v1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/versions\n*.log\n"), 0o644))
	ctx := Load(filepath.Join(dir, "versions", "v1"), func(string) string { return "" })
	assert.Equal(t, "", ctx.Prefix, "mapped as a tree of its own")
	assert.False(t, ctx.Rules.Ignored("a.log", false), "without the enclosing repository's rules")
	assert.Contains(t, ctx.Sources, filepath.Join(dir, ".gitignore"), "a change to the enclosing rules is still noticed")
}

func FuzzParse(f *testing.F) {
	for _, s := range trickyTree {
		f.Add(s, "a/b")
	}
	f.Fuzz(func(t *testing.T, data, path string) {
		rules := Parse("", []byte(data))
		if path == "" || strings.Contains(path, "//") {
			return
		}
		rules.Ignored(path, false) // must not panic
		rules.Ignored(path, true)
	})
}
