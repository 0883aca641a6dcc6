package fakeapi

import (
	"slices"
	"sync"
	"time"
)

// FaultKind says what a fault does to the response.
type FaultKind int

const (
	// FaultHTTPError answers Status (default 500) with the real API's error
	// body for that status and, when set, a retry-after header.
	FaultHTTPError FaultKind = iota + 1
	// FaultSlowFirstByte waits Delay (or until the client gives up) before
	// anything is written, then answers normally. On count_tokens with a long
	// Delay this is a count_tokens timeout.
	FaultSlowFirstByte
	// FaultCutStream writes AfterEvents complete SSE events plus half of the
	// next one, then drops the connection without ending the response.
	FaultCutStream
	// FaultStreamError answers 200 and, after AfterEvents events, sends an
	// SSE error event (ErrorType, default overloaded_error) and ends the stream.
	FaultStreamError
	// FaultMalformedJSON answers 200 with a body that is not valid JSON (a
	// non-streaming or count_tokens answer) or an SSE event whose data is not
	// valid JSON (after AfterEvents events).
	FaultMalformedJSON
)

// Fault is one injected failure. It fires for a request when the request's
// number (1-based, over all requests the server received, as in Requests())
// is in On, or On is empty; and For matches the request kind when set
// ("messages", "count_tokens", "other"); and Match, when set, returns true.
// Times limits how often it fires (0: unlimited).
type Fault struct {
	Kind  FaultKind
	On    []int
	For   string // "" any request; else only requests of this Kind
	Match func(r *Request) bool
	Times int

	Status      int           // FaultHTTPError: 500, 529, 429, …
	RetryAfter  string        // FaultHTTPError: retry-after header value
	Delay       time.Duration // FaultSlowFirstByte
	AfterEvents int           // FaultCutStream, FaultStreamError, FaultMalformedJSON
	ErrorType   string        // FaultStreamError
}

// Faults is a set of fault rules, safe for concurrent use. The first rule
// that matches a request fires.
type Faults struct {
	mu    sync.Mutex
	rules []*faultRule
	fired int
}

type faultRule struct {
	Fault
	fired int
}

// NewFaults returns a rule set holding fs.
func NewFaults(fs ...Fault) *Faults {
	f := &Faults{}
	for _, x := range fs {
		f.Add(x)
	}
	return f
}

// Add appends a rule.
func (f *Faults) Add(x Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &faultRule{Fault: x})
}

// Fired returns how many faults have fired so far.
func (f *Faults) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// pick returns the fault for request number n, or nil.
func (f *Faults) pick(n int, r *Request) *Fault {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rule := range f.rules {
		if rule.Times > 0 && rule.fired >= rule.Times {
			continue
		}
		if len(rule.On) > 0 && !slices.Contains(rule.On, n) {
			continue
		}
		if rule.For != "" && rule.For != r.Kind {
			continue
		}
		if rule.Match != nil && !rule.Match(r) {
			continue
		}
		rule.fired++
		f.fired++
		x := rule.Fault
		return &x
	}
	return nil
}

// errorTypes maps HTTP status to the real API's error.type.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
	403: "permission_error", 404: "not_found_error", 409: "conflict_error",
	413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
	504: "timeout_error", 529: "overloaded_error",
}

var errorMessages = map[string]string{
	"rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
	"overloaded_error": "Overloaded",
	"api_error":        "Internal server error",
	"timeout_error":    "Request timed out",
	"not_found_error":  "Not found",
}
