package server

import (
	"sync"
	"time"
)

// failureWindow is how far back /health counts failed upstream calls.
const failureWindow = 5 * time.Minute

// maxFailures bounds the failure times kept within the window.
const maxFailures = 4096

// UpstreamCalls is what /health says about the proxy's recent calls to its
// upstream. A failure is a call that got no HTTP answer (the upstream is
// unreachable, or timed out); an answer of any status counts as an answer.
// LastError is the transport's error text: host and cause, never a header.
type UpstreamCalls struct {
	WindowSeconds  int        `json:"window_seconds"`
	RecentFailures int        `json:"recent_failures"` // failures within the window
	LastFailure    *time.Time `json:"last_failure,omitempty"`
	LastError      string     `json:"last_error,omitempty"`
	LastAnswer     *time.Time `json:"last_answer,omitempty"`
}

// upstreamCalls records the outcome of the forwarded calls.
type upstreamCalls struct {
	mu       sync.Mutex
	failures []time.Time // within the window, oldest first
	lastErr  string
	lastFail time.Time
	lastOK   time.Time
}

func (u *upstreamCalls) answered(now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lastOK = now
}

func (u *upstreamCalls) failed(now time.Time, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.prune(now)
	if len(u.failures) == maxFailures {
		u.failures = u.failures[1:]
	}
	u.failures = append(u.failures, now)
	u.lastFail, u.lastErr = now, err.Error()
}

// prune drops the failures older than the window.
func (u *upstreamCalls) prune(now time.Time) {
	i := 0
	for i < len(u.failures) && now.Sub(u.failures[i]) > failureWindow {
		i++
	}
	u.failures = u.failures[i:]
}

func (u *upstreamCalls) report(now time.Time) UpstreamCalls {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.prune(now)
	r := UpstreamCalls{WindowSeconds: int(failureWindow / time.Second), RecentFailures: len(u.failures), LastError: u.lastErr}
	if !u.lastFail.IsZero() {
		t := u.lastFail.UTC()
		r.LastFailure = &t
	}
	if !u.lastOK.IsZero() {
		t := u.lastOK.UTC()
		r.LastAnswer = &t
	}
	return r
}
