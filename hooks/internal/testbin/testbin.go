// Package testbin builds one of this module's commands for process-level
// tests and benchmarks, which must time and exercise the real executable
// the way Claude Code runs it.
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the package in the current directory (a test's working
// directory is its package's) into a new temporary directory as name,
// with -trimpath as `make build` builds it. cleanup removes the directory.
func Build(name string) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		return "", nil, fmt.Errorf("build %s: %w", name, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build %s: %w\n%s", name, err, stderr.Bytes())
	}
	return path, cleanup, nil
}

// Main is a TestMain for a package whose tests run its command: it builds
// name, sets *path to the executable, runs the tests and exits.
func Main(m *testing.M, name string, path *string) {
	p, cleanup, err := Build(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*path = p
	code := m.Run()
	cleanup()
	os.Exit(code)
}
