package gcpolicy

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// isolate resets the collector to Go's defaults for the test and restores
// the process's setting afterwards.
func isolate(t *testing.T) {
	pct := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}

// unset removes k from the environment for the test.
func unset(t *testing.T, k string) {
	t.Setenv(k, "") // restores the original value afterwards
	os.Unsetenv(k)
}

func TestApplyUnset(t *testing.T) {
	isolate(t)
	unset(t, "GOGC")
	unset(t, "GOMEMLIMIT")
	pct, lim := Apply()
	assert.True(t, pct)
	assert.True(t, lim)
	assert.Equal(t, Percent, debug.SetGCPercent(100))
	assert.Equal(t, int64(MemoryLimit), debug.SetMemoryLimit(-1))
}

func TestApplyRespectsEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	pct, lim := Apply()
	assert.False(t, pct, "the user's GOGC wins")
	assert.False(t, lim, "the user's GOMEMLIMIT wins")
	assert.Equal(t, 100, debug.SetGCPercent(100), "left as it was")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}
