package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// countFields are the request fields count_tokens accepts; every other field
// (max_tokens, stream, metadata, temperature …) is generation-only and would
// be rejected.
var countFields = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true,
	"tool_choice": true, "thinking": true, "output_config": true,
	"context_management": true, "cache_control": true,
}

// ErrNotObject reports a request body that is not a JSON object.
var ErrNotObject = errors.New("request body is not a JSON object")

// CountBody builds the count_tokens body from a Messages body: the
// accepted fields, in their original order, with their original bytes,
// from the top-level members the gate read once. The body must be known to
// be valid JSON (the caller validated it once).
func CountBody(body *gate.Body) ([]byte, error) {
	return countBody(body, "")
}

// PreviousCountBody builds the count_tokens body of the request before
// this one in the same conversation, as this request carries it: the same
// fields with messages cut just before the last assistant message (the
// answer to that request). first is true, and the body nil, when there is no
// earlier request to cut back to (no assistant message after the first
// message): nothing of the
// conversation could have been cached. The body must be known to be valid
// JSON.
//
// It is what a perfect prefix cache would have held for this request
// without synaxi, computed from the request alone, so every replica (and a
// restarted proxy) prices the same request the same way.
func PreviousCountBody(body *gate.Body) (out []byte, first bool, err error) {
	if !body.JSON().IsObject() {
		return nil, false, ErrNotObject
	}
	msgs := body.Field("messages").Array()
	last := -1
	for i, m := range msgs {
		if m.Get("role").Str == "assistant" {
			last = i
		}
	}
	if last < 1 {
		return nil, true, nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgs[:last] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Raw)
	}
	b.WriteByte(']')
	out, err = countBody(body, b.String())
	return out, false, err
}

// countBody writes the count_tokens fields of body; messages, when not
// empty, replaces the messages member's value.
func countBody(body *gate.Body, messages string) ([]byte, error) {
	root := body.JSON()
	if !root.IsObject() {
		return nil, ErrNotObject
	}
	var b bytes.Buffer
	b.Grow(len(root.Raw))
	b.WriteByte('{')
	for _, m := range body.Members() {
		key := m.Key.String()
		if !countFields[key] {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(m.Key.Raw)
		b.WriteByte(':')
		if key == "messages" && messages != "" {
			b.WriteString(messages)
		} else {
			b.WriteString(m.Value.Raw)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// probeSkips are the client's headers a probe does not carry: those about
// the request's own body and connection, and Claude Code's session and
// agent ids (a probe is no turn of the session). Every other header goes
// with it: the credentials, the API version and betas they go with, the
// client's identity, and whatever a gateway asks for (the user's
// ANTHROPIC_CUSTOM_HEADERS), so a probe is let in wherever its request is.
var probeSkips = map[string]bool{
	"Content-Length": true, "Content-Encoding": true, "Content-Type": true, "Transfer-Encoding": true,
	"Accept-Encoding": true, "Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Te": true, "Trailer": true, "Upgrade": true,
}

// probeCarries reports whether the probe carries the client's header k
// (canonical form).
func probeCarries(k string) bool {
	return !probeSkips[k] && !strings.HasPrefix(k, "X-Claude-Code-")
}

// Prober asks the upstream's count_tokens for a request's input tokens.
type Prober struct {
	Client   *http.Client
	Upstream *url.URL // base URL; /v1/messages/count_tokens is appended
	// Outbound, if set, makes the built request what goes upstream: it
	// sets the body (the count_tokens body given) and may change headers.
	// nil sends the body as it is.
	Outbound func(req *http.Request, body []byte)
}

// ProbeError is a count_tokens answer that was not a count.
type ProbeError struct {
	Status int
	Type   string // the API error type, if the body said
}

func (e *ProbeError) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("count_tokens answered %d %s", e.Status, e.Type)
	}
	return fmt.Sprintf("count_tokens answered %d", e.Status)
}

// Count sends body (already a count_tokens body) with the client's headers
// h and query rawQuery (e.g. "beta=true") and returns input_tokens.
func (p *Prober) Count(ctx context.Context, rawQuery string, h http.Header, body []byte) (int64, error) {
	u := *p.Upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/messages/count_tokens"
	u.RawPath = ""
	u.RawQuery = rawQuery
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build count_tokens request: %w", err)
	}
	for k, v := range h {
		if probeCarries(k) {
			req.Header[k] = v
		}
	}
	req.Header.Set("Content-Type", "application/json")
	if p.Outbound != nil {
		p.Outbound(req, body)
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("count_tokens: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("read count_tokens answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, &ProbeError{Status: resp.StatusCode, Type: gjson.GetBytes(data, "error.type").Str}
	}
	n := gjson.GetBytes(data, "input_tokens")
	if n.Type != gjson.Number || n.Int() < 0 {
		return 0, fmt.Errorf("count_tokens answer has no input_tokens")
	}
	return n.Int(), nil
}
