package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
