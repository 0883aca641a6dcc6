package ignore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // .gitignore contents by base directory
		path    string
		isDir   bool
		ignored bool
	}{
		{"bare name any depth", map[string]string{"": "foo.txt\n"}, "a/b/foo.txt", false, true},
		{"bare name at root", map[string]string{"": "foo.txt\n"}, "foo.txt", false, true},
		{"bare name other file", map[string]string{"": "foo.txt\n"}, "a/foo.txt.bak", false, false},
		{"star glob", map[string]string{"": "*.log\n"}, "x/y/debug.log", false, true},
		{"star does not cross slash", map[string]string{"": "a/*.log\n"}, "a/b/c.log", false, false},
		{"star in anchored", map[string]string{"": "a/*.log\n"}, "a/c.log", false, true},
		{"question mark", map[string]string{"": "file?.go\n"}, "file1.go", false, true},
		{"question mark no slash", map[string]string{"": "a?b\n"}, "a/b", false, false},
		{"bracket range", map[string]string{"": "v[0-9].txt\n"}, "v7.txt", false, true},
		{"bracket range miss", map[string]string{"": "v[0-9].txt\n"}, "vx.txt", false, false},
		{"leading slash anchors", map[string]string{"": "/build\n"}, "build", true, true},
		{"leading slash not deeper", map[string]string{"": "/build\n"}, "src/build", true, false},
		{"middle slash anchors", map[string]string{"": "doc/frotz\n"}, "doc/frotz", true, true},
		{"middle slash not deeper", map[string]string{"": "doc/frotz\n"}, "a/doc/frotz", true, false},
		{"dir only matches dir", map[string]string{"": "out/\n"}, "x/out", true, true},
		{"dir only skips file", map[string]string{"": "out/\n"}, "x/out", false, false},
		{"leading double star", map[string]string{"": "**/gen\n"}, "a/b/gen", true, true},
		{"leading double star root", map[string]string{"": "**/gen\n"}, "gen", true, true},
		{"leading double star then path", map[string]string{"": "**/foo/bar\n"}, "x/foo/bar", false, true},
		{"trailing double star inside", map[string]string{"": "abc/**\n"}, "abc/d/e.go", false, true},
		{"trailing double star not itself", map[string]string{"": "abc/**\n"}, "abc", true, false},
		{"middle double star zero", map[string]string{"": "a/**/b\n"}, "a/b", false, true},
		{"middle double star many", map[string]string{"": "a/**/b\n"}, "a/x/y/b", false, true},
		{"middle double star miss", map[string]string{"": "a/**/b\n"}, "c/x/b", false, false},
		{"negation re-includes", map[string]string{"": "*.go\n!keep.go\n"}, "keep.go", false, false},
		{"negation order matters", map[string]string{"": "!keep.go\n*.go\n"}, "keep.go", false, true},
		{"comment ignored", map[string]string{"": "# foo\n"}, "# foo", false, false},
		{"escaped hash", map[string]string{"": "\\#foo\n"}, "#foo", false, true},
		{"escaped bang", map[string]string{"": "\\!bang\n"}, "!bang", false, true},
		{"trailing spaces trimmed", map[string]string{"": "foo   \n"}, "foo", false, true},
		{"escaped trailing space", map[string]string{"": "foo\\ \n"}, "foo ", false, true},
		{"crlf line", map[string]string{"": "foo\r\nbar\r\n"}, "bar", false, true},
		{"blank lines", map[string]string{"": "\n\n\nfoo\n"}, "foo", false, true},
		{"nested applies below", map[string]string{"sub": "*.tmp\n"}, "sub/x/a.tmp", false, true},
		{"nested not above", map[string]string{"sub": "*.tmp\n"}, "a.tmp", false, false},
		{"nested not sibling", map[string]string{"sub": "*.tmp\n"}, "other/a.tmp", false, false},
		{"nested anchored to its dir", map[string]string{"sub": "/only\n"}, "sub/only", false, true},
		{"nested anchored not deeper", map[string]string{"sub": "/only\n"}, "sub/x/only", false, false},
		{"nested negates parent", map[string]string{"": "*.gen\n", "sub": "!keep.gen\n"}, "sub/keep.gen", false, false},
		{"nested negation only in its dir", map[string]string{"": "*.gen\n", "sub": "!keep.gen\n"}, "keep.gen", false, true},
		{"no rules", map[string]string{}, "anything", false, false},
		{"dir contents with exception", map[string]string{"": "dir/*\n!dir/keep.go\n"}, "dir/keep.go", false, false},
		{"dir contents others", map[string]string{"": "dir/*\n!dir/keep.go\n"}, "dir/drop.go", false, true},
		{"dir contents not dir itself", map[string]string{"": "dir/*\n"}, "dir", true, false},
		{"whitelist style root", map[string]string{"": "/*\n!/src/\n"}, "src", true, false},
		{"whitelist style others", map[string]string{"": "/*\n!/src/\n"}, "docs", true, true},
		{"whitelist style file", map[string]string{"": "/*\n!/src/\n"}, "src/a.go", false, false},
		{"invalid glob skipped", map[string]string{"": "[\nfoo\n"}, "foo", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs Rules
			for _, base := range []string{"", "sub"} { // parents first
				if data, ok := tt.files[base]; ok {
					rs = rs.With(Parse(base, []byte(data)))
				}
			}
			assert.Equal(t, tt.ignored, rs.Ignored(tt.path, tt.isDir))
		})
	}
}

func TestWithDoesNotAlias(t *testing.T) {
	parent := append(make(Rules, 0, 8), Parse("", []byte("a\n"))...) // spare capacity
	left := parent.With(Parse("l", []byte("x\n")))
	right := parent.With(Parse("r", []byte("y\n")))
	assert.True(t, left.Ignored("l/x", false))
	assert.False(t, left.Ignored("r/y", false))
	assert.True(t, right.Ignored("r/y", false))
	assert.False(t, right.Ignored("l/x", false))
}

func FuzzParse(f *testing.F) {
	f.Add("*.go\n!keep.go\n/build/\na/**/b\n", "a/x/b")
	f.Add("\\#x\\ \n[a-\n**\n", "#x ")
	f.Fuzz(func(t *testing.T, data, rel string) {
		rs := Rules(Parse("", []byte(data)))
		_ = rs.Ignored(rel, false)
		_ = rs.Ignored(rel, true)
	})
}
