// Package gate decides which requests synaxi-proxyd hands to the projection
// engine, and defines the seam between the transport and that engine.
//
// A request is gated when it is a POST to /v1/messages (any query string)
// whose top-level system text contains the worker sentinel, or when the
// configuration projects everything; disabling projection overrides both.
// Message text is never looked at: the orchestrator lists agent descriptions
// inside messages, and only the worker carries the sentinel in its system.
package gate

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
)

// Sentinel marks the synaxi-worker agent's system prompt.
const Sentinel = "SYNAXI-PROJECTION-WORKER"

// Header names Claude Code uses to identify the conversation context.
const (
	SessionHeader = "X-Claude-Code-Session-Id"
	AgentHeader   = "X-Claude-Code-Agent-Id"
)

// Projector rewrites a gated request body into the body served upstream.
// Implementations must be safe for concurrent use; the transport recovers
// panics and treats any error as a fail-open (the original body is sent).
type Projector interface {
	Project(ctx context.Context, in *Input) (*Output, error)
}

// Input is one gated request as the client sent it.
type Input struct {
	Body    []byte      // the original request body; must not be modified
	Session string      // X-Claude-Code-Session-Id, else metadata.user_id
	Agent   string      // x-claude-code-agent-id; empty for the main conversation
	Header  http.Header // the client's headers (read only; includes credentials)
}

// Output is what the projection serves instead.
type Output struct {
	Body       []byte                 // the body sent upstream
	Stats      ledger.ProjectionStats // recorded in the ledger row
	Visibility *visibility.Export     // written after the serve; nil writes nothing
}

// Identity projects nothing: it returns the body unchanged. The proxy uses it
// when projection is disabled and until an engine is wired in.
type Identity struct{}

// Project returns in.Body unchanged.
func (Identity) Project(_ context.Context, in *Input) (*Output, error) {
	return &Output{Body: in.Body, Stats: ledger.ProjectionStats{
		OriginalBytes: len(in.Body),
		ServedBytes:   len(in.Body),
		Note:          "identity",
	}}, nil
}

// Rule is the gate's configuration.
type Rule struct {
	ProjectAll bool // gate every /v1/messages POST
	Disable    bool // gate nothing
}

// IsMessages reports whether method and path address the Messages endpoint
// (not count_tokens); the query string is not part of path.
func IsMessages(method, path string) bool {
	return method == http.MethodPost && strings.TrimSuffix(path, "/") == "/v1/messages"
}

// Gated reports whether the request is handed to the projection engine.
// body is only inspected for its top-level system field.
func (r Rule) Gated(method, path string, body []byte) bool {
	if r.Disable || !IsMessages(method, path) {
		return false
	}
	return r.ProjectAll || IsWorker(body)
}

// IsWorker reports whether the top-level system of a Messages body contains
// the sentinel. system may be a string or an array of text blocks; anything
// else (including malformed JSON) is not a worker.
func IsWorker(body []byte) bool {
	if !bytes.Contains(body, []byte(Sentinel)) {
		return false // fast path: most requests never mention it
	}
	sys := gjson.GetBytes(body, "system")
	switch {
	case sys.Type == gjson.String:
		return strings.Contains(sys.Str, Sentinel)
	case sys.IsArray():
		found := false
		sys.ForEach(func(_, block gjson.Result) bool {
			if t := block.Get("text"); t.Type == gjson.String && strings.Contains(t.Str, Sentinel) {
				found = true
				return false
			}
			return true
		})
		return found
	}
	return false
}

// Session returns the conversation's session id: Claude Code's session
// header, else the body's metadata.user_id.
func Session(h http.Header, body []byte) string {
	if s := h.Get(SessionHeader); s != "" {
		return s
	}
	if u := gjson.GetBytes(body, "metadata.user_id"); u.Type == gjson.String {
		return u.Str
	}
	return ""
}

// Agent returns the subagent id of the request, empty for the main
// conversation.
func Agent(h http.Header) string { return h.Get(AgentHeader) }

// PanicError is a recovered panic inside a Projector.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("projection panic: %v", e.Value) }

// Run calls p.Project and turns a panic into a *PanicError, so the caller can
// fail open. A nil output or empty body is an error too.
func Run(ctx context.Context, p Projector, in *Input) (out *Output, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	out, err = p.Project(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	if out == nil || len(out.Body) == 0 {
		return nil, fmt.Errorf("project: empty output")
	}
	return out, nil
}
