// Package gate decides which requests synaxi-proxyd hands to the projection
// engine, and defines the seam between the transport and that engine.
//
// Which requests are gated is the scope (scope.go): with scope "all" (the
// default) every Messages conversation — the main session and every
// subagent — is handed to the engine, which projects only where its cost
// model predicts a saving, while side requests (no tools, structured
// output, a small max_tokens, Claude Code's compaction summary, anything
// that is not a conversation) pass as sent; with "worker" only requests
// whose top-level system text carries the worker sentinel; with "off"
// none. The decision reads the top-level fields and, for the compaction
// summary only, the final message's opening text; the worker sentinel
// counts only in the top-level system (the orchestrator lists agent
// descriptions inside messages).
//
// Body is the one parse of a request body that the transport, the gate and
// the engine share: parsed without a copy, validated at most once.
package gate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/valyala/fastjson"

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

// Body is a request body read once: its bytes, their JSON parsed without a
// copy, and whether they are valid JSON, checked once in the background so
// the check overlaps whatever reads the body first.
//
// JSON is gjson's lazy view of the bytes: reading it never fails, but on
// invalid input it returns nonsense. Whoever keeps or serves anything read
// from it must first see Valid report true.
type Body struct {
	raw   []byte
	json  gjson.Result
	check sync.Once
	done  chan struct{}
	valid bool

	membersOnce sync.Once
	members     []Member
}

// Member is one top-level member of a body, as the client sent it.
type Member struct{ Key, Value gjson.Result }

// Parse wraps raw, which must not be modified afterwards (the parse shares
// its memory). It does not read the bytes; Check and Valid do.
func Parse(raw []byte) *Body {
	return &Body{raw: raw, json: gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw))), done: make(chan struct{})}
}

// Bytes returns the body as the client sent it; the caller must not modify it.
func (b *Body) Bytes() []byte { return b.raw }

// Members returns the body's top-level members in the client's order,
// duplicates included, read in one pass the first time anyone asks: a
// large body's messages are skipped over once, not once per field read.
// Nil when the body is not an object.
func (b *Body) Members() []Member {
	b.membersOnce.Do(func() {
		if !b.json.IsObject() {
			return
		}
		b.json.ForEach(func(k, v gjson.Result) bool {
			b.members = append(b.members, Member{k, v})
			return true
		})
	})
	return b.members
}

// Field returns the value of the body's top-level member key, its first
// occurrence as gjson's Get finds it, from Members.
func (b *Body) Field(key string) gjson.Result {
	for _, m := range b.Members() {
		if m.Key.Str == key {
			return m.Value
		}
	}
	return gjson.Result{}
}

// JSON returns the parsed body, valid or not (see Valid).
func (b *Body) JSON() gjson.Result { return b.json }

// Check starts validating the body in the background, once.
func (b *Body) Check() {
	b.check.Do(func() {
		go func() {
			b.valid = valid(b.raw)
			close(b.done)
		}()
	})
}

// valid reports whether raw is valid JSON, exactly as gjson's validator
// does (FuzzValid holds them equal). fastjson's validator skips the inside
// of a string with IndexByte, about three times faster than gjson's byte
// loop on a large body, but it misses a control character before an
// escape in a string; a body with no byte below 0x20 (a compact one, as
// clients send) cannot have one.
func valid(raw []byte) bool {
	if hasControl(raw) {
		return gjson.ValidBytes(raw)
	}
	return fastjson.ValidateBytes(raw) == nil
}

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time: a byte of x is below 0x20 exactly when subtracting 0x20 from it
// borrows into a high bit it did not have.
func hasControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// Valid reports whether the body is valid JSON, waiting for Check's answer
// (and starting it if nobody has).
func (b *Body) Valid() bool {
	b.Check()
	<-b.done
	return b.valid
}

// Input is one gated request as the client sent it.
type Input struct {
	// Body is the original request body, its validation already started.
	// A projector may read Body.JSON at once but must see Body.Valid before
	// it keeps or returns anything derived from it; the transport forwards
	// the original whenever Valid is false, whatever the projector said.
	Body    *Body
	Session string      // X-Claude-Code-Session-Id, else metadata.user_id
	Agent   string      // x-claude-code-agent-id; empty for the main conversation
	Header  http.Header // the client's headers (read only; includes credentials)
}

// Output is what the projection serves instead.
type Output struct {
	Body       []byte                 // the body sent upstream
	Stats      ledger.ProjectionStats // recorded in the ledger row
	Visibility *visibility.Export     // written after the serve, under the request's session and agent; nil writes nothing
	// Recall are tool outputs the projection folded out of this request,
	// each named in a fold note by its reference (internal/recall): the
	// proxy keeps them for the recall tool after the serve.
	Recall []string
}

// Identity projects nothing: it returns the body unchanged. The proxy uses it
// when projection is disabled and until an engine is wired in.
type Identity struct{}

// Project returns in.Body unchanged.
func (Identity) Project(_ context.Context, in *Input) (*Output, error) {
	b := in.Body.Bytes()
	return &Output{Body: b, Stats: ledger.ProjectionStats{
		OriginalBytes: len(b),
		ServedBytes:   len(b),
		Note:          "identity",
	}}, nil
}

// IsMessages reports whether method and path address the Messages endpoint
// (not count_tokens); the query string is not part of path.
func IsMessages(method, path string) bool {
	return method == http.MethodPost && strings.TrimSuffix(path, "/") == "/v1/messages"
}

// IsWorker reports whether the top-level system of a Messages body contains
// the sentinel (SystemIsWorker); anything else (including malformed JSON)
// is not a worker.
func IsWorker(body *Body) bool {
	if !bytes.Contains(body.Bytes(), []byte(Sentinel)) {
		return false // fast path: most requests never mention it
	}
	return SystemIsWorker(body.Field("system"))
}

// SystemIsWorker reports whether a request's top-level system (a string
// or an array of text blocks) contains the sentinel.
func SystemIsWorker(sys gjson.Result) bool {
	if !strings.Contains(sys.Raw, Sentinel) {
		return false
	}
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
func Session(h http.Header, body *Body) string {
	if s := h.Get(SessionHeader); s != "" {
		return s
	}
	if u := body.Field("metadata").Get("user_id"); u.Type == gjson.String {
		return strings.Clone(u.Str) // not a view into the body: it outlives it
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
