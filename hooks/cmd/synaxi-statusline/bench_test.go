package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/testbin"
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

	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(statusJSON)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		require.NoError(b, cmd.Run())
		durs = append(durs, time.Since(start))
		if !strings.Contains(out.String(), "saved") {
			b.Fatalf("unexpected line %q", out.String())
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[min(len(durs)-1, len(durs)*99/100)].Microseconds())/1000, "p99-ms")
	if fi, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(fi.Size()), "bin-bytes")
	}
}
