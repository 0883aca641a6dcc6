// Package gcpolicy is the garbage-collector setting synaxi-proxyd runs
// with, shared with the benchmarks so that they measure what ships.
//
// The proxy's live heap is small (a few MB: the projection memo and the
// requests in flight) while every request allocates its body (a worker
// request is often over 1 MB). At Go's default GOGC=100 a collection starts
// every few requests, and on a 2-core machine its mark phase competes with
// the streams: measured, it was what pushed the added p99 latency of a 1 MB
// pass-through from about 1 ms to 3.5-4 ms. At GOGC=400 collections are a
// quarter as frequent; the soft memory limit keeps the heap bounded if the
// live heap ever grows (the collector works harder past it).
package gcpolicy

import (
	"os"
	"runtime/debug"
)

const (
	// Percent is the GOGC the proxy runs with unless GOGC is set.
	Percent = 400
	// MemoryLimit is the soft limit in bytes unless GOMEMLIMIT is set.
	MemoryLimit = 256 << 20
)

// Apply sets the policy, leaving alone whatever the environment sets
// (GOGC, GOMEMLIMIT), and reports what it changed.
func Apply() (gcPercent, memoryLimit bool) {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(Percent)
		gcPercent = true
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(MemoryLimit)
		memoryLimit = true
	}
	return gcPercent, memoryLimit
}
