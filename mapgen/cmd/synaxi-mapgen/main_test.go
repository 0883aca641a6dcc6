package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "p.go"), []byte("package p\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"x/p\"\n\nfunc main() { println(p.Hello()) }\n"), 0o644))
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}

	code, out, _ := runCLI(t, env, "map", "--budget", "500", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "p/p.go\n  L4: func Hello() string\n")

	code, out2, _ := runCLI(t, env, "map", dir, "--focus", "main.go")
	require.Equal(t, 0, code)
	assert.Contains(t, out2, "Hello")

	code, out, _ = runCLI(t, env, "symbol", "Hello", "--refs", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "func Hello — p/p.go:4")
	assert.Contains(t, out, "main.go:5: func main() { println(p.Hello()) }")

	t.Chdir(dir)
	code, out, _ = runCLI(t, env, "outline", "p/p.go")
	require.Equal(t, 0, code)
	assert.Equal(t, "# outline of p/p.go (go, package p, 4 lines, 1 definition)\nL4 func Hello() string  // Hello greets.\n", out)

	code, _, errOut := runCLI(t, env, "outline", "../outside.go")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "outside the project root")

	code, out, _ = runCLI(t, env, "-version")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "synaxi-mapgen ")

	code, _, errOut = runCLI(t, env, "frobnicate")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "unknown command")

	code, _, _ = runCLI(t, env)
	assert.Equal(t, 2, code)
}

func TestJSONAndRoot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "p.go"), []byte("package p\n\n// Hello greets.\nfunc Hello() string {\n\treturn \"hi\"\n}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"x/p\"\n\nfunc main() { println(p.Hello()) }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644))
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	hello := map[string]any{"file": "p/p.go", "line": 4.0, "end_line": 6.0, "kind": "func", "name": "Hello", "signature": "func Hello() string"}
	pick := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range []string{"file", "line", "end_line", "kind", "name", "signature"} {
			out[k] = m[k]
		}
		return out
	}

	code, out, errOut := runCLI(t, env, "map", "--json", "--root", dir, "--focus", "main.go")
	require.Equal(t, 0, code, errOut)
	var m struct {
		Root     string `json:"root"`
		Sections []struct {
			File string           `json:"file"`
			Defs []map[string]any `json:"defs"`
		} `json:"sections"`
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	i := slices.IndexFunc(m.Sections, func(s struct {
		File string           `json:"file"`
		Defs []map[string]any `json:"defs"`
	}) bool {
		return s.File == "p/p.go"
	})
	require.GreaterOrEqual(t, i, 0, out)
	assert.Equal(t, hello, pick(m.Sections[i].Defs[0]))
	assert.Contains(t, m.Text, "p/p.go\n  L4: func Hello() string\n")

	code, out, errOut = runCLI(t, env, "symbol", "Hello", "--json", "--refs", "--root", dir)
	require.Equal(t, 0, code, errOut)
	var sym struct {
		Sites      []map[string]any `json:"sites"`
		References []map[string]any `json:"references"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sym), out)
	require.Len(t, sym.Sites, 1)
	assert.Equal(t, hello, pick(sym.Sites[0]))
	assert.Equal(t, "Hello greets.", sym.Sites[0]["doc"])
	require.Len(t, sym.References, 1)
	assert.Equal(t, map[string]any{"file": "main.go", "line": 5.0, "text": "func main() { println(p.Hello()) }"}, sym.References[0])

	code, out, errOut = runCLI(t, env, "outline", "--root", dir, "--json", "p/p.go")
	require.Equal(t, 0, code, errOut)
	var ol struct {
		File string           `json:"file"`
		Lang string           `json:"lang"`
		Defs []map[string]any `json:"defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ol), out)
	assert.Equal(t, "p/p.go", ol.File)
	require.Len(t, ol.Defs, 1)
	assert.Equal(t, hello, pick(ol.Defs[0]))

	// The positional directory and --root agree, or it is an error.
	code, _, _ = runCLI(t, env, "map", "--root", dir, dir)
	assert.Equal(t, 0, code)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"map", "--root", dir, t.TempDir()}, "two project roots"},
		{[]string{"map", dir, dir + "x"}, "at most one directory"},
		{[]string{"map", "--budget", "0", dir}, "--budget 0: give a positive number"},
		{[]string{"map", "--budget", "lots", dir}, "invalid value"},
		{[]string{"map", filepath.Join(dir, "nope")}, "no such file"},
		{[]string{"map", filepath.Join(dir, "main.go")}, "not a directory"},
		{[]string{"symbol", "a b", dir}, "not an identifier"},
		{[]string{"symbol"}, "symbol needs a NAME"},
		{[]string{"outline", "--root", dir}, "outline takes one FILE"},
		{[]string{"outline", "--root", dir, "../x.go"}, "outside the project root"},
		{[]string{"outline", "--root", dir, "README"}, "unsupported file type"},
	} {
		code, _, errOut := runCLI(t, env, tc.args...)
		assert.NotEqual(t, 0, code, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
}

func TestLanguages(t *testing.T) {
	code, out, _ := runCLI(t, nil, "languages", "--json")
	require.Equal(t, 0, code)
	var rep languageReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Contains(t, rep.Parsed, "go")
	assert.Equal(t, symbols.Languages(), rep.Parsed)
	assert.Equal(t, len(symbols.Known()), len(rep.Parsed)+len(rep.Missing))

	code, out, _ = runCLI(t, nil, "languages")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^go +parsed +\.go$`, out)
	for _, l := range rep.Missing {
		assert.Regexp(t, `(?m)^`+l+` +missing \(this build has no cgo\)`, out)
	}

	code, _, errOut := runCLI(t, nil, "languages", "extra")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "languages takes no arguments")
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &barProgress{w: &buf}
	p.Start(3)
	for range 3 {
		p.Add(1)
	}
	p.Finish()
	assert.Contains(t, buf.String(), "synaxi-mapgen: indexing")

	assert.False(t, isTerminal(&buf))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file is not a terminal")
}
