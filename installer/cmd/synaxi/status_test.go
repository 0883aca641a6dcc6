package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

// TestLoopsInStatus: synaxi status sums the loop governor's fires over the
// sessions' hook counters.
func TestLoopsInStatus(t *testing.T) {
	learningHome(t)
	_, out, _ := runCLI(t, "status")
	assert.Regexp(t, `loops +the governor flagged no loop`, out)
	d := xdg.Resolve()
	at := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	require.NoError(t, ledger.UpdateCounters(d, "s1", at, func(c *ledger.Counters) {
		c.Loops = map[string]int64{"unchanged": 2, "repeat": 1}
		c.LastLoop = &ledger.LoopFire{Rule: "unchanged", Subject: "pytest -q", At: at}
	}))
	require.NoError(t, ledger.UpdateCounters(d, "s2", at, func(c *ledger.Counters) {
		c.Loops = map[string]int64{"revert": 1}
		c.Stops = 1
		c.LastLoop = &ledger.LoopFire{Rule: "revert", Subject: "/w/a.go", At: at.Add(-time.Hour)}
	}))
	_, out, _ = runCLI(t, "status")
	assert.Regexp(t, `loops +4 flagged \(repeat 1, revert 1, unchanged 2\), 1 stopped; last: unchanged on pytest -q, 2026-12-07T05:00:00Z`, out)
}
