// Package testbin builds one of this module's commands for process-level
// tests and benchmarks, which must time and exercise the real executable
// the way Claude Code runs it, and times such processes.
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Build compiles the package in the current directory (a test's working
// directory is its package's) into a new temporary directory as name,
// with -trimpath and CGO_ENABLED=0 as `make build` builds the modules that
// use it (hooks, learning). cleanup removes the directory.
func Build(name string) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		return "", nil, fmt.Errorf("build %s: %w", name, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
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

// Time runs b's iterations of a whole process, as Claude Code runs a
// hook: each iteration spawns next() with stdout and stderr through pipes,
// fails the benchmark if it exits non-zero, passes what it printed to
// check (nil: no check), and times it from spawn to exit. It reports the
// p50 and p99 wall time in milliseconds.
func Time(b *testing.B, next func() *exec.Cmd, check func(b *testing.B, stdout, stderr []byte)) {
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		cmd := next()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err, errb.String())
		}
		times = append(times, time.Since(start))
		if check != nil {
			check(b, out.Bytes(), errb.Bytes())
		}
	}
	ReportPercentiles(b, times)
}

// ReportPercentiles reports the p50 and p99 of times in milliseconds.
func ReportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	q := func(p float64) float64 {
		return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
