package projection

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefinitions: the names a file defines are the words after a
// definition keyword (after a Go method's receiver), in the languages the
// panel's sessions edit; a keyword inside a comment counts like code, a
// number or a short word does not.
func TestDefinitions(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"go", "package mods\n\nconst Delta = 7\nfunc (s *Store) SaveUser(u User) error {\ntype Config struct {\nvar ab = 1\n", []string{"Delta", "SaveUser", "Config"}},
		{"python", "class Parser:\n    def parse_line(self, s):\n", []string{"Parser", "parse_line"}},
		{"javascript", "export function renderPage(x) {}\nlet counter = 0\n", []string{"renderPage", "counter"}},
		{"elixir", "defmodule Live.Session do\n  defp handle_tick(s), do: s\n", []string{"Live", "handle_tick"}},
		{"rust", "pub fn spawn_worker() {}\nstruct Pool;\n", []string{"spawn_worker", "Pool"}},
		{"numbered read", "     1\tconst Delta = 7 // the correction\n     2\tfunc M01F00(x int) int { return x }\n", []string{"Delta", "M01F00"}},
		{"none", "x := 1\nreturn func() {}\nconst 42\n", nil},
	} {
		assert.Equal(t, c.want, definitions(c.src), c.name)
	}
}

// TestEditNamingADefinitionUsesItsFile: an edit whose text names what one
// small file in view defines marks that file used at the edit's step, and
// reused (its idle time halves); a name two files define, a file larger
// than half the budget, the edited file itself and a call that is not an
// edit mark nothing.
func TestEditNamingADefinitionUsesItsFile(t *testing.T) {
	small := func(def string) string {
		return numbered([]string{"package mods", "", "const " + def + " = 7", strings.Repeat("// filler ", 40)})
	}
	big := numbered(append([]string{"package big", "func HugeHelper() {}"}, strings.Split(strings.Repeat("// filler line of the big file\n", 800), "\n")...))
	msgs := []obj{user(text("Fix the bugs."))}
	msgs = append(msgs, readPair("toolu_01", "/w/m01.go", small("Delta"))...)
	msgs = append(msgs, readPair("toolu_02", "/w/twin_a.go", small("Twin"))...)
	msgs = append(msgs, readPair("toolu_03", "/w/twin_b.go", small("Twin"))...)
	msgs = append(msgs, readPair("toolu_04", "/w/big.go", big)...)
	msgs = append(msgs, readPair("toolu_05", "/w/m10.go", numbered([]string{"package mods", "func M10Broken(x int) int { return x - 1 } // BUG: add Delta"}))...)
	msgs = append(msgs,
		assistant(toolUse("toolu_06", "Bash", obj{"command": "echo Delta Twin HugeHelper"})), user(toolResult("toolu_06", "ok", false)),
		assistant(toolUse("toolu_07", "Edit", obj{"file_path": "/w/m10.go",
			"old_string": "return x - 1 } // BUG: add Delta", "new_string": "return x + Delta + Twin + HugeHelper() } // fixed"})),
		user(toolResult("toolu_07", "The file /w/m10.go has been updated successfully.", false)))
	f := foldOf(t, Config{}, msgs)
	require.Equal(t, 7, f.step)
	w := f.world
	assert.Equal(t, 7, w.used["/w/m01.go"], "Delta: one small file defines it")
	assert.Equal(t, 1, w.reuse["/w/m01.go"])
	assert.Equal(t, 2, w.used["/w/twin_a.go"], "Twin: two files define it")
	assert.Equal(t, 3, w.used["/w/twin_b.go"])
	assert.Equal(t, 4, w.used["/w/big.go"], "larger than half the budget")
	assert.Zero(t, w.reuse["/w/big.go"])
	assert.Equal(t, 7, w.used["/w/m10.go"], "the edited file is used by its edit")
	assert.Zero(t, w.reuse["/w/m10.go"], "an edit is not a reference")
	f.step = 17
	assert.Equal(t, 5, w.idle("/w/m01.go", f.step), "10 steps unused, used twice")
	assert.Equal(t, 10, w.idle("/w/m10.go", f.step))
}
