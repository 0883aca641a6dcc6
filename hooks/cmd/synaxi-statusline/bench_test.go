package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/internal/testbin"
)

// BenchmarkStatusline times whole synaxi-statusline processes as Claude
// Code runs them, on a session with a ledger summary and hook counters, and
// reports the binary's size.
func BenchmarkStatusline(b *testing.B) {
	dir := b.TempDir()
	bin, cleanup, err := testbin.Build("synaxi-statusline")
	require.NoError(b, err)
	defer cleanup()

	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	d := xdg.Dirs{State: filepath.Join(dir, "state", "synaxi")}
	for i := 0; i < 200; i++ {
		cf := int64(40_000 + i)
		require.NoError(b, ledger.Record(d, &ledger.Row{Session: "sess-42", Model: "claude-opus-4-7", Status: 200,
			Projected: true, Counterfactual: &cf, Usage: ledger.Usage{Input: 900, CacheRead: 20_000, CacheWrite5m: 1_000}}))
	}
	require.NoError(b, ledger.UpdateCounters(d, "sess-42", time.Now(), func(c *ledger.Counters) {
		c.Denials, c.Blocked, c.TokensSaved, c.LoopsBroken = 9, 7, 12_000, 1
	}))

	testbin.Time(b, func() *exec.Cmd {
		cmd := exec.Command(bin)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(statusJSON)
		return cmd
	}, func(b *testing.B, out, _ []byte) {
		if !strings.Contains(string(out), "saved") {
			b.Fatalf("unexpected line %q", out)
		}
	})
	if fi, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(fi.Size()), "bin-bytes")
	}
}
