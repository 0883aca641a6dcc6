// Package server is synaxi-proxyd's data plane: a streaming reverse proxy in
// front of the Anthropic API (or a compatible endpoint) that forwards every
// request unchanged, hands the conversations in the projection's scope to
// the engine through the gate, and measures what each Messages request was
// billed.
//
// Invariants:
//   - A request the gate does not take reaches the upstream byte-identical,
//     with the client's headers (credentials, betas, session ids) intact.
//   - Responses stream through unbuffered; usage is read from a copy of the
//     bytes as they pass (a tee), never by holding them back.
//   - A panic or error in gating, projection or measurement forwards the
//     original request and is counted as a fail-open (health and ledger).
//   - Every gated request gets one ledger row with the billed usage and the
//     count_tokens counterfactual of the original body, or null and why;
//     a context's rows are written in the order its requests arrived. A
//     side request in scope (gate.Decision.Passed) gets a row saying why it
//     passed, with its usage and no probe.
//     Other requests cost nothing beyond the gate's look at the body (and,
//     with the conversation log on, a tee of the response for usage).
//   - A request body is read once, parsed without a copy, never modified,
//     and validated at most once (gate.Body), in the background for a gated
//     request.
//   - Every change to a request on its way upstream (the team token header
//     removed, proxy.upstream_model written in) is made by outbound
//     (outbound.go), once for each request sent; once_test.go holds each
//     change to its one call site.
//
// A Messages request goes down one line (serveMessages): the gate reads it
// into a request value (path.go), the projection stage decides what is
// served, outbound applies the configured changes as the reverse proxy
// sends it, the upstream stage streams the answer through a usage tee
// (upstream.go), and the request's recorder (record.go), started at the
// gate, probes count_tokens, takes the finished exchange and writes the
// row. The request value is read-only after the gate; the exchange belongs
// to the ServeHTTP goroutine until it is handed to the recorder, which alone
// builds the row. Every stage recovers its own panics, and the hand-off is
// deferred, so no fault leaves a recorder (or Serve's drain) waiting.
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/convlog"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/measure"
	"github.com/synaxi/synaxi/proxyd/internal/metrics"
)

// Options configure a Server.
type Options struct {
	Upstream      *url.URL
	UpstreamModel string // rewrite every Messages request's model to this; "" keeps it
	CountTokens   bool   // probe count_tokens for gated requests
	Rule          gate.Rule
	Projector     gate.Projector // nil: gate.Identity
	Dirs          xdg.Dirs       // ledger and visibility live under Dirs.State
	Logger        *slog.Logger   // nil: discard
	ConvLog       *convlog.Log   // nil: no conversation log
	Version       string
	ConfigHash    string            // the fingerprint of the configuration the proxy started with (config.ProxyFingerprint), shown on /health
	Transport     http.RoundTripper // nil: NewTransport()
	IdleExit      time.Duration     // 0: never
	DrainTimeout  time.Duration     // how long shutdown waits for streams; 0: 10 minutes
	// OnDrain, if set, runs once when shutdown has closed the listener,
	// before in-flight requests are waited for: synaxi-proxyd releases its
	// lock and record there, so a replacement can take the port at once.
	OnDrain      func()
	ProbeTimeout time.Duration // 0: 60 seconds
	// Token, if set, is the team token every request but /livez must carry
	// in TokenHeader; a request without it is answered 401 and never
	// forwarded.
	Token string
	// Metrics are the instruments /metrics serves; nil: a set of this
	// process's own, with the host name as the replica.
	Metrics *metrics.Metrics
	// SharedVisibility, when set, also holds the visibility exports, shared
	// by a team's replicas (visibility.go); nil: the state dir only.
	SharedVisibility VisibilityStore
	// Governor is governor.mode: off records no loop in the ledger rows
	// (governor.go); "" counts as advise.
	Governor governor.Mode
}

// Server is the proxy. Create it with New.
type Server struct {
	o       Options
	log     *slog.Logger
	metrics *metrics.Metrics
	proxy   *httputil.ReverseProxy
	prober  *measure.Prober
	started time.Time

	requests, messages, gated, projected, failOpens atomic.Int64
	probeFailures, ledgerErrors, visibilityErrors   atomic.Int64
	active, lastActive                              atomic.Int64
	draining                                        atomic.Bool
	pending                                         sync.WaitGroup
	unauthorized                                    atomic.Int64
	calls                                           upstreamCalls
	testHook                                        atomic.Pointer[func(stage string)] // tests only: runs at each stage, to fault it
	tokenSum                                        [sha256.Size]byte
	local                                           map[string]http.HandlerFunc // the proxy's own endpoints (local.go)
	ready                                           readiness

	// Ledger order: each context's latest recorder (record.go).
	orderMu sync.Mutex
	tails   map[string]chan struct{} // context → closed when its latest row is written
}

// NewTransport is the upstream transport: the default one, except that it
// never asks for or decodes compression itself (the client's Accept-Encoding
// passes through and so do encoded bodies).
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 64
	return t
}

// New builds a Server.
func New(o Options) (*Server, error) {
	if o.Upstream == nil || o.Upstream.Host == "" {
		return nil, errors.New("new proxy: upstream URL has no host")
	}
	if o.Projector == nil {
		o.Projector = gate.Identity{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Transport == nil {
		o.Transport = NewTransport()
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 10 * time.Minute
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = 60 * time.Second
	}
	if o.Metrics == nil {
		host, _ := os.Hostname()
		m, err := metrics.New(context.Background(), metrics.Options{Replica: host, Version: o.Version})
		if err != nil {
			return nil, fmt.Errorf("new proxy: %w", err)
		}
		o.Metrics = m
	}
	s := &Server{o: o, log: o.Logger, metrics: o.Metrics, started: time.Now(), tails: map[string]chan struct{}{}}
	s.lastActive.Store(time.Now().UnixNano())
	s.tokenSum = sha256.Sum256([]byte(o.Token))
	s.local = s.localEndpoints()
	s.proxy = &httputil.ReverseProxy{
		Rewrite:        s.rewrite,
		Transport:      o.Transport,
		FlushInterval:  -1,
		ModifyResponse: s.modifyResponse,
		ErrorHandler:   s.errorHandler,
		ErrorLog:       slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	s.prober = &measure.Prober{
		Client: &http.Client{
			Transport:     o.Transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		Upstream: o.Upstream,
		Outbound: func(req *http.Request, body []byte) { s.outbound(req, &payload{body: body, valid: always}) },
	}
	return s, nil
}

// ServeHTTP answers the proxy's own endpoints (local.go) and forwards
// every other request. With a team token, every request but /livez must
// carry it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/livez" {
		serveLive(w, r)
		return
	}
	if h, ok := s.local[r.URL.Path]; ok {
		if s.authorized(w, r, true) {
			serveLocal(w, r, h)
		}
		return
	}
	if !s.authorized(w, r, false) {
		return
	}
	start := time.Now()
	s.active.Add(1)
	s.touch()
	defer func() {
		s.active.Add(-1)
		s.touch()
	}()
	s.requests.Add(1)
	isCount := r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens"
	if !gate.IsMessages(r.Method, r.URL.Path) && !(isCount && s.o.UpstreamModel != "") {
		s.metrics.Request(metrics.Passed, "")
		s.forward(w, r, start, nil, nil)
		return
	}
	raw, err := readBody(r)
	if err != nil {
		// The client stopped sending; there is nobody to answer.
		s.log.Debug("read request body", "path", r.URL.Path, "err", err)
		return
	}
	if isCount {
		s.metrics.Request(metrics.Passed, "")
		s.forward(w, r, start, &payload{body: raw, valid: gate.Parse(raw).Valid}, nil)
		return
	}
	s.messages.Add(1)
	s.serveMessages(w, r, start, raw)
}

// serveMessages takes one Messages request down its path: gate, then
// projection or pass-through, the upstream, usage, and the ledger. The
// request is read once (gate); what is served is decided once (project);
// the upstream's answer is gathered as it passes (upstream.go); the row is
// built and written by the request's recorder (record.go), which is handed
// the finished exchange even when a stage panics.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, start time.Time, raw []byte) {
	req := s.gate(r, start, raw)
	if !req.gated && req.passed == "" && s.o.ConvLog == nil {
		// Nothing to record: the original goes up as it came.
		s.metrics.Request(metrics.Passed, req.body.Field("model").Str)
		s.forward(w, r, start, &payload{body: raw, valid: req.body.Valid}, nil)
		return
	}
	handOff := s.startRecorder(context.WithoutCancel(r.Context()), req)
	x := &exchange{req: req}
	defer func() { handOff <- x }() // after a panic too (ReverseProxy aborts a cut stream with one)
	x.served = s.project(r.Context(), req)
	s.forward(w, r, start, x.payload(), x)
}

// maxPrealloc bounds the buffer allocated up front from Content-Length.
const maxPrealloc = 64 << 20

// readBody reads the whole request body, sized from Content-Length when the
// client sent one. The bytes are never modified afterwards: the parse and
// everything the projection engine remembers point into them.
func readBody(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	if n := r.ContentLength; n > 0 && n <= maxPrealloc {
		buf := bytes.NewBuffer(make([]byte, 0, n+1))
		_, err := buf.ReadFrom(r.Body)
		return buf.Bytes(), err
	}
	return io.ReadAll(r.Body)
}

func setBody(r *http.Request, b []byte) {
	r.ContentLength = int64(len(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.Body, _ = r.GetBody()
	if len(b) == 0 {
		r.Body = http.NoBody
	}
	r.TransferEncoding = nil
}

// hook runs the test hook for a stage, if any.
func (s *Server) hook(stage string) {
	if f := s.testHook.Load(); f != nil {
		(*f)(stage)
	}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func (s *Server) touch() { s.lastActive.Store(time.Now().UnixNano()) }

// Health is the body of GET /health.
type Health struct {
	Status           string        `json:"status"`
	Version          string        `json:"version"`
	PID              int           `json:"pid"`
	Upstream         string        `json:"upstream"` // the base URL requests are forwarded to (a password in it redacted)
	Config           string        `json:"config"`   // fingerprint of the configuration it started with (config.ProxyFingerprint)
	Started          time.Time     `json:"started"`
	UptimeSeconds    float64       `json:"uptime_seconds"`
	Projection       string        `json:"projection"` // the scope: "all", "worker" or "off"
	Requests         int64         `json:"requests"`   // every forwarded request
	Messages         int64         `json:"messages"`   // of which Messages requests
	Gated            int64         `json:"gated"`      // of which gated (one ledger row each)
	Projected        int64         `json:"projected"`
	FailOpens        int64         `json:"fail_opens"`
	ProbeFailures    int64         `json:"probe_failures"`
	LedgerErrors     int64         `json:"ledger_errors"`
	VisibilityErrors int64         `json:"visibility_errors"`
	Unauthorized     int64         `json:"unauthorized"` // answered 401: no or a wrong team token (not in requests)
	Active           int64         `json:"active"`       // forwarded requests in flight
	UpstreamCalls    UpstreamCalls `json:"upstream_calls"`
}

// Health reports the counters.
func (s *Server) Health() Health {
	return Health{
		Status: "ok", Version: s.o.Version, PID: os.Getpid(), Upstream: s.o.Upstream.Redacted(), Config: s.o.ConfigHash,
		Started: s.started.UTC(), UptimeSeconds: time.Since(s.started).Seconds(), Projection: s.o.Rule.Scope,
		Requests: s.requests.Load(), Messages: s.messages.Load(), Gated: s.gated.Load(),
		Projected: s.projected.Load(), FailOpens: s.failOpens.Load(),
		ProbeFailures: s.probeFailures.Load(), LedgerErrors: s.ledgerErrors.Load(),
		VisibilityErrors: s.visibilityErrors.Load(), Unauthorized: s.unauthorized.Load(), Active: s.active.Load(),
		UpstreamCalls: s.calls.report(time.Now()),
	}
}

// Wait blocks until every finished request's ledger row is written.
func (s *Server) Wait() { s.pending.Wait() }

// Serve accepts connections on ln until ctx is done or the proxy has been
// idle for Options.IdleExit, then drains: it stops accepting (closing ln,
// then running Options.OnDrain), lets in-flight requests and streams finish
// for up to Options.DrainTimeout, cuts what is left, and waits for pending
// ledger rows. It returns nil when nothing was cut.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	if s.o.OnDrain != nil {
		ln = &drainListener{Listener: ln, onClose: s.o.OnDrain}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	var idle <-chan time.Time
	if s.o.IdleExit > 0 {
		t := time.NewTicker(min(s.o.IdleExit/4+time.Millisecond, time.Second))
		defer t.Stop()
		idle = t.C
	}
	reason := ""
loop:
	for {
		select {
		case err := <-errc:
			s.pending.Wait()
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
			reason = "signal"
			break loop
		case <-idle:
			last := time.Unix(0, s.lastActive.Load())
			if s.active.Load() == 0 && time.Since(last) >= s.o.IdleExit {
				reason = "idle"
				break loop
			}
		}
	}
	s.draining.Store(true)
	s.log.Info("draining: no new connections; waiting for requests in flight", "reason", reason, "active", s.active.Load(), "deadline", s.o.DrainTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), s.o.DrainTimeout)
	defer cancel()
	err := srv.Shutdown(dctx)
	if err != nil {
		cut := s.active.Load()
		_ = srv.Close()
		err = fmt.Errorf("drain: %d requests still in flight after %s were cut (raise --drain to wait longer): %w", cut, s.o.DrainTimeout, err)
	}
	s.pending.Wait()
	return err
}

// drainListener runs onClose once, after the listener is closed.
type drainListener struct {
	net.Listener
	once    sync.Once
	onClose func()
}

func (l *drainListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(l.onClose)
	return err
}

// IsLoopback reports whether a listen address's host is a loopback address
// ("localhost", 127.0.0.0/8, ::1). An empty host (all interfaces) is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
