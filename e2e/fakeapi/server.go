package fakeapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody is the real API's request size limit.
const maxBody = 32 << 20

// Options configure a Server. The zero value is usable.
type Options struct {
	// Agent answers agent-loop requests; nil answers every one with a short
	// end_turn text. It is called from the handler goroutines, concurrently
	// when requests overlap (subagents), so it must be safe for that.
	Agent Agent
	// Faults injects failures; nil injects none.
	Faults *Faults
	// CacheMinTokens is the minimum cacheable prefix; 0 means 1024.
	CacheMinTokens int
	// Now is the cache simulator's clock; nil means time.Now.
	Now func() time.Time
	// RejectEmptyTools rejects "tools": [] even in a request without tool
	// blocks. By default such a request is accepted, because Claude Code's
	// own title-generation request sends exactly that.
	RejectEmptyTools bool
	// RequireAuth answers 401 to API requests carrying neither x-api-key nor
	// authorization, as the real API does.
	RequireAuth bool
	// Gzip compresses JSON answers for clients that accept gzip.
	Gzip bool
	// ChunkSize is the length in runes of each text, thinking and
	// partial-JSON delta; 0 means 24.
	ChunkSize int
	// Observe, when set, is called with a copy of each request after it
	// has been answered (from the handler's goroutine).
	Observe func(r *Request)
	// KeepNone keeps no request once it is answered (Requests returns
	// none), so a long load run's memory stays flat.
	KeepNone bool
}

// Request is one request the server received.
type Request struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	// Time is when it arrived, on the server's clock (Options.Now).
	Time time.Time
	// Kind is "messages", "count_tokens" or "other".
	Kind string
	// Invalid is the validation error the fake answered 400 with, if any.
	Invalid string
	// Usage is what the fake reported for a messages request.
	Usage Usage
	// Status is the HTTP status answered (200 for a stream later cut).
	Status int
	// Side marks a messages request answered without the Agent.
	Side bool
	// Fault is the fault injected into this request, 0 for none.
	Fault FaultKind
	// RequestID is the request-id header the fake answered with.
	RequestID string
}

// Server is a running fake upstream.
type Server struct {
	opts  Options
	ln    net.Listener
	srv   *http.Server
	cache *cacheSim
	seq   atomic.Int64

	mu       sync.Mutex
	reqs     []*Request
	received int // requests so far, kept or not
}

// New starts a server on 127.0.0.1:0. It panics if it cannot listen, like
// httptest.NewServer.
func New(opts Options) *Server {
	s, err := Listen("127.0.0.1:0", opts)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: %v", err))
	}
	return s
}

// Listen starts a server on addr.
func Listen(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := NewHandler(opts)
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// NewHandler returns a server that is not listening, for use as an
// http.Handler (URL and Close are then meaningless).
func NewHandler(opts Options) *Server {
	if opts.CacheMinTokens <= 0 {
		opts.CacheMinTokens = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 24
	}
	return &Server{opts: opts, cache: newCacheSim(opts.CacheMinTokens)}
}

// URL returns the base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and drops open connections.
func (s *Server) Close() {
	if s.srv != nil {
		_ = s.srv.Close()
	}
}

// Requests returns copies of every request received, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.reqs))
	for i, r := range s.reqs {
		c := *r
		c.Header = r.Header.Clone()
		c.Body = append([]byte(nil), r.Body...)
		out[i] = &c
	}
	return out
}

// MessagesRequests returns copies of the messages requests, in order.
func (s *Server) MessagesRequests() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Kind == "messages" {
			out = append(out, r)
		}
	}
	return out
}

// CacheStats returns totals over the messages requests answered with usage.
func (s *Server) CacheStats() CacheStats { return s.cache.snapshot() }

func (s *Server) update(r *Request, fn func(r *Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(r)
}

func (s *Server) nextID(prefix string) string {
	return fmt.Sprintf("%s%024d", prefix, s.seq.Add(1))
}

// ServeHTTP records the request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := readBody(hr)
	rec := &Request{
		Method: hr.Method, Path: hr.URL.Path, RawQuery: hr.URL.RawQuery,
		Header: hr.Header.Clone(), Body: body, Time: s.opts.Now(), Kind: kindOf(hr.URL.Path),
		RequestID: s.nextID("req_fake"),
	}
	s.mu.Lock()
	if !s.opts.KeepNone {
		s.reqs = append(s.reqs, rec)
	}
	s.received++
	n := s.received
	snapshot := *rec
	s.mu.Unlock()

	if s.opts.Observe != nil {
		defer func() {
			s.mu.Lock()
			c := *rec
			s.mu.Unlock()
			s.opts.Observe(&c)
		}()
	}
	w.Header().Set("request-id", rec.RequestID)
	if err != nil {
		s.fail(w, rec, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	fault := s.opts.Faults.pick(n, &snapshot)
	if fault != nil {
		s.update(rec, func(r *Request) { r.Fault = fault.Kind })
		switch fault.Kind {
		case FaultHTTPError:
			status := fault.Status
			if status == 0 {
				status = http.StatusInternalServerError
			}
			if fault.RetryAfter != "" {
				w.Header().Set("retry-after", fault.RetryAfter)
			}
			if status == 529 || status == 429 || status >= 500 {
				w.Header().Set("x-should-retry", "true")
			}
			s.fail(w, rec, status, "")
			return
		case FaultSlowFirstByte:
			if !sleepCtx(hr.Context(), fault.Delay) {
				s.update(rec, func(r *Request) { r.Status = 499 })
				return
			}
		}
	}
	switch rec.Kind {
	case "messages":
		s.serveMessages(w, hr, rec, fault)
	case "count_tokens":
		s.serveCountTokens(w, hr, rec, fault)
	default:
		s.serveOther(w, hr, rec)
	}
}

func kindOf(path string) string {
	switch path {
	case "/v1/messages":
		return "messages"
	case "/v1/messages/count_tokens":
		return "count_tokens"
	}
	return "other"
}

func readBody(hr *http.Request) ([]byte, error) {
	var r io.Reader = http.MaxBytesReader(nil, hr.Body, maxBody)
	if strings.EqualFold(hr.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("decode gzip request body: %w", err)
		}
		r = io.LimitReader(zr, maxBody+1)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("request_too_large: read body: %w", err)
	}
	if len(body) > maxBody {
		return nil, errors.New("request_too_large: body exceeds 32 MB")
	}
	return body, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fail answers an error in the real API's shape and records it.
func (s *Server) fail(w http.ResponseWriter, rec *Request, status int, msg string) {
	typ := errorTypes[status]
	if typ == "" {
		typ = "api_error"
	}
	if msg == "" {
		msg = errorMessages[typ]
	}
	s.update(rec, func(r *Request) {
		r.Status = status
		if status == http.StatusBadRequest {
			r.Invalid = msg
		}
	})
	body, _ := json.Marshal(map[string]any{
		"type":       "error",
		"error":      map[string]string{"type": typ, "message": msg},
		"request_id": rec.RequestID,
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Server) authorized(hr *http.Request) bool {
	return !s.opts.RequireAuth || hr.Header.Get("x-api-key") != "" || hr.Header.Get("authorization") != ""
}

// parseValid decodes and validates an API body, answering 400 on failure.
func (s *Server) parseValid(w http.ResponseWriter, hr *http.Request, rec *Request, countTokens bool) (*parsedRequest, bool) {
	if hr.Method != http.MethodPost {
		s.fail(w, rec, http.StatusNotFound, fmt.Sprintf("%s %s is not supported", hr.Method, hr.URL.Path))
		return nil, false
	}
	if !s.authorized(hr) {
		s.fail(w, rec, http.StatusUnauthorized, "x-api-key header is required")
		return nil, false
	}
	p, err := parseRequest(rec.Body)
	if err == nil {
		p.betas = betas(hr.Header)
		err = validate(p, countTokens, s.opts.RejectEmptyTools)
	}
	if err != nil {
		s.fail(w, rec, http.StatusBadRequest, err.Error())
		return nil, false
	}
	return p, true
}

func (s *Server) serveCountTokens(w http.ResponseWriter, hr *http.Request, rec *Request, fault *Fault) {
	p, ok := s.parseValid(w, hr, rec, true)
	if !ok {
		return
	}
	s.update(rec, func(r *Request) { r.Status = http.StatusOK })
	if fault != nil && fault.Kind == FaultMalformedJSON {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":`)
		return
	}
	s.writeJSON(w, hr, map[string]int64{"input_tokens": p.totalTokens()})
}

func (s *Server) writeJSON(w http.ResponseWriter, hr *http.Request, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	if s.opts.Gzip && strings.Contains(hr.Header.Get("Accept-Encoding"), "gzip") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		body = buf.Bytes()
	}
	_, _ = w.Write(body)
}

func (s *Server) serveOther(w http.ResponseWriter, hr *http.Request, rec *Request) {
	switch {
	case hr.URL.Path == "/api/hello" && (hr.Method == http.MethodHead || hr.Method == http.MethodGet):
		s.update(rec, func(r *Request) { r.Status = http.StatusOK })
		w.WriteHeader(http.StatusOK)
	case hr.URL.Path == "/v1/models" && hr.Method == http.MethodGet:
		s.update(rec, func(r *Request) { r.Status = http.StatusOK })
		models := []map[string]string{}
		for _, id := range []string{"claude-opus-5-5", "claude-sonnet-5", "claude-haiku-4-5"} {
			models = append(models, map[string]string{
				"type": "model", "id": id, "display_name": id, "created_at": "2026-01-01T00:00:00Z",
			})
		}
		s.writeJSON(w, hr, map[string]any{
			"data": models, "has_more": false, "first_id": models[0]["id"], "last_id": models[len(models)-1]["id"],
		})
	default:
		s.fail(w, rec, http.StatusNotFound, fmt.Sprintf("%s %s not found", hr.Method, hr.URL.Path))
	}
}
