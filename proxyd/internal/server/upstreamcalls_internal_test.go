package server

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Failures leave the count once they are older than the window; the last
// error and its time stay.
func TestUpstreamCallsWindow(t *testing.T) {
	var u upstreamCalls
	t0 := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	u.failed(t0, errors.New("dial tcp: connection refused"))
	u.failed(t0.Add(time.Minute), errors.New("dial tcp: i/o timeout"))
	u.answered(t0.Add(2 * time.Minute))
	r := u.report(t0.Add(2 * time.Minute))
	assert.Equal(t, 2, r.RecentFailures)
	assert.Equal(t, "dial tcp: i/o timeout", r.LastError)
	assert.Equal(t, t0.Add(2*time.Minute), *r.LastAnswer)

	r = u.report(t0.Add(failureWindow + 30*time.Second))
	assert.Equal(t, 1, r.RecentFailures, "the first failure is out of the window")
	r = u.report(t0.Add(time.Minute + failureWindow + time.Second))
	assert.Zero(t, r.RecentFailures)
	assert.Equal(t, t0.Add(time.Minute), *r.LastFailure)

	for i := range maxFailures + 10 {
		u.failed(t0.Add(time.Hour+time.Duration(i)*time.Millisecond), errors.New("x"))
	}
	assert.Equal(t, maxFailures, u.report(t0.Add(time.Hour+time.Minute)).RecentFailures)
}
