// Package server is synaxi-proxyd's data plane: a streaming reverse proxy in
// front of the Anthropic API (or a compatible endpoint) that forwards every
// request unchanged, hands worker requests to the projection engine through
// the gate, and measures what each Messages request was billed.
//
// Invariants:
//   - A request the gate does not take reaches the upstream byte-identical,
//     with the client's headers (credentials, betas, session ids) intact.
//   - Responses stream through unbuffered; usage is read from a copy of the
//     bytes as they pass (a tee), never by holding them back.
//   - A panic or error in gating, projection or measurement forwards the
//     original request and is counted as a fail-open (health and ledger).
//   - Every gated request gets one ledger row with the billed usage and the
//     count_tokens counterfactual of the original body, or null and why.
//     Other requests cost nothing beyond the gate's look at the body (and,
//     with the conversation log on, a tee of the response for usage).
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/convlog"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/measure"
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
	Transport     http.RoundTripper // nil: NewTransport()
	IdleExit      time.Duration     // 0: never
	DrainTimeout  time.Duration     // how long shutdown waits for streams; 0: 10 minutes
	ProbeTimeout  time.Duration     // 0: 60 seconds
}

// Server is the proxy. Create it with New.
type Server struct {
	o       Options
	log     *slog.Logger
	proxy   *httputil.ReverseProxy
	prober  *measure.Prober
	started time.Time

	requests, messages, gated, projected, failOpens atomic.Int64
	probeFailures, ledgerErrors, visibilityErrors   atomic.Int64
	active, lastActive                              atomic.Int64
	pending                                         sync.WaitGroup
	testHookGate                                    func() // tests only: runs inside the gate, to fault it
	cfMu                                            sync.Mutex
	previous                                        map[string]int64         // context → last counterfactual
	tails                                           map[string]chan struct{} // context → its latest exchange's recorded
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
	s := &Server{o: o, log: o.Logger, started: time.Now(), previous: map[string]int64{}, tails: map[string]chan struct{}{}}
	s.lastActive.Store(time.Now().UnixNano())
	s.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(o.Upstream)
			// Rewrite mode drops these from the outbound request; the
			// proxy adds none of its own and keeps the client's.
			for _, k := range forwardedHeaders {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
		},
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
	}
	return s, nil
}

// forwardedHeaders are client headers httputil.ReverseProxy strips in
// Rewrite mode.
var forwardedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

type exchangeKey struct{}

// exchange is one Messages request on its way through.
type exchange struct {
	id             string
	start          time.Time
	session, agent string
	path           string
	original       []byte
	body           *gate.Body // original, parsed
	served         []byte

	gated, projected bool
	failOpen         string // why the original was forwarded; "" when it was not a fault
	stats            *ledger.ProjectionStats
	firstRequest     bool

	// Rows of one context are recorded in request order: record waits for
	// after (the context's previous exchange) and closes recorded.
	after, recorded chan struct{}

	probeDone      chan struct{} // closed when the probe has answered
	counterfactual *int64
	probeNull      string
	visDone        chan struct{} // closed when the visibility export is written; nil if none

	// Set while the response passes, on the ServeHTTP goroutine.
	status       int
	upstreamID   string
	collector    *measure.Collector
	complete     bool
	measureFault string
	proxyErr     string
}

// ServeHTTP forwards one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	s.touch()
	defer func() {
		s.active.Add(-1)
		s.touch()
	}()
	if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		s.serveHealth(w)
		return
	}
	s.requests.Add(1)
	isCount := r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens"
	if !gate.IsMessages(r.Method, r.URL.Path) && !(isCount && s.o.UpstreamModel != "") {
		s.proxy.ServeHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		// The client stopped sending; there is nobody to answer.
		s.log.Debug("read request body", "path", r.URL.Path, "err", err)
		return
	}
	if isCount {
		setBody(r, s.rewriteModel(body))
		s.proxy.ServeHTTP(w, r)
		return
	}
	s.messages.Add(1)
	x := s.prepare(r, body)
	setBody(r, x.served)
	if !x.gated && s.o.ConvLog == nil {
		s.proxy.ServeHTTP(w, r) // nothing to record
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	s.pending.Add(1) // before any response byte, so Wait never misses the row
	defer s.finish(x)
	s.proxy.ServeHTTP(w, r)
}

// maxPrealloc bounds the buffer allocated up front from Content-Length.
const maxPrealloc = 64 << 20

// readBody reads the whole request body, sized from Content-Length when the
// client sent one.
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

// prepare gates and projects one Messages request. Whatever goes wrong, x
// comes back ready to forward the original body.
func (s *Server) prepare(r *http.Request, body []byte) (x *exchange) {
	x = &exchange{id: newID(), start: time.Now(), path: r.URL.Path, original: body, served: body}
	defer func() {
		if v := recover(); v != nil {
			s.failOpen(x, fmt.Sprintf("panic in gate: %v", v))
			x.served = body
			// Whether it was a worker request is unknown: record it as
			// gated, unmeasured, so the fault leaves a ledger row.
			if !x.gated {
				x.gated = true
				s.gated.Add(1)
			}
			if x.probeDone == nil {
				x.probeDone = make(chan struct{})
				x.probeNull = "not measured: " + x.failOpen
				close(x.probeDone)
			}
		}
	}()
	if s.testHookGate != nil {
		s.testHookGate()
	}
	x.body = gate.Parse(body)
	x.session = gate.Session(r.Header, x.body)
	x.agent = gate.Agent(r.Header)
	x.gated = s.o.Rule.Gated(r.Method, r.URL.Path, x.body)
	if x.gated {
		s.gated.Add(1)
		x.firstRequest = gjson.GetBytes(body, "messages.#").Int() == 1
		s.enqueue(x)
		s.startProbe(r, x)
		s.project(r, x)
	}
	x.served = s.rewriteModel(x.served)
	return x
}

func (s *Server) project(r *http.Request, x *exchange) {
	if !x.body.Valid() {
		// The projector only ever sees valid JSON; the upstream answers
		// the malformed original as it would without the proxy.
		s.failOpen(x, "gated request body is not valid JSON")
		return
	}
	out, err := gate.Run(r.Context(), s.o.Projector, &gate.Input{
		Body: x.body, Session: x.session, Agent: x.agent, Header: r.Header.Clone(),
	})
	if err != nil {
		var pe *gate.PanicError
		if errors.As(err, &pe) {
			s.log.Error("projection panic", "id", x.id, "panic", pe.Value, "stack", string(pe.Stack))
		}
		s.failOpen(x, err.Error())
		return
	}
	x.projected = true
	s.projected.Add(1)
	x.served = out.Body
	stats := out.Stats
	x.stats = &stats
	if v := out.Visibility; v != nil {
		v.Session, v.Agent = x.session, x.agent
		if v.Agent == "" {
			v.Agent = visibility.MainAgent
		}
		if v.Updated.IsZero() {
			v.Updated = time.Now()
		}
		x.visDone = make(chan struct{})
		go func() {
			defer close(x.visDone)
			if err := visibility.Write(s.o.Dirs, v); err != nil {
				s.visibilityErrors.Add(1)
				s.log.Warn("write visibility export", "id", x.id, "err", err)
			}
		}()
	}
}

func (s *Server) failOpen(x *exchange, reason string) {
	if x.failOpen == "" {
		s.failOpens.Add(1)
	}
	x.failOpen = reason
	x.projected = false
	x.stats = nil
	s.log.Warn("fail-open: forwarding the original request", "id", x.id, "reason", reason)
}

// rewriteModel applies proxy.upstream_model; a body that is not a JSON object
// is forwarded as it is.
func (s *Server) rewriteModel(body []byte) []byte {
	if s.o.UpstreamModel == "" || !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return body
	}
	out, err := sjson.SetBytes(body, "model", s.o.UpstreamModel)
	if err != nil {
		return body
	}
	return out
}

// startProbe asks count_tokens about the original body, concurrently with
// the real call.
func (s *Server) startProbe(r *http.Request, x *exchange) {
	x.probeDone = make(chan struct{})
	if !s.o.CountTokens {
		x.probeNull = "count_tokens disabled (proxy.count_tokens = false)"
		close(x.probeDone)
		return
	}
	cb, err := measure.CountBody(s.rewriteModel(x.original))
	if err != nil {
		x.probeNull = "count_tokens body: " + err.Error()
		close(x.probeDone)
		return
	}
	h := r.Header.Clone()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.o.ProbeTimeout)
	query := r.URL.RawQuery
	go func() {
		defer close(x.probeDone)
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				x.probeNull = fmt.Sprintf("count_tokens panic: %v", v)
			}
		}()
		n, err := s.prober.Count(ctx, query, h, cb)
		if err != nil {
			x.probeNull = err.Error()
			return
		}
		x.counterfactual = &n
	}()
}

func (s *Server) modifyResponse(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil
	}
	if x.projected && resp.StatusCode == http.StatusBadRequest {
		s.retryOriginal(resp, x)
	}
	x.status = resp.StatusCode
	x.upstreamID = resp.Header.Get("Request-Id")
	x.collector = measure.NewCollector(resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
	resp.Body = &tee{ReadCloser: resp.Body, x: x}
	return nil
}

// retryOriginal handles an upstream 400 for a projected request: the
// projection made a request the upstream rejects, so the original request is
// sent instead (no response byte has reached the client yet) and the
// exchange counts as a fail-open. If the retry cannot be sent, the 400 stands.
func (s *Server) retryOriginal(resp *http.Response, x *exchange) {
	errBody, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	reason := "upstream rejected the projected request: " + gjson.GetBytes(errBody, "error.message").String()
	orig := s.rewriteModel(x.original)
	req := resp.Request.Clone(resp.Request.Context())
	setBody(req, orig)
	retry, err := s.o.Transport.RoundTrip(req)
	if err != nil {
		s.log.Warn("retry with the original request", "id", x.id, "err", err)
		resp.Body = io.NopCloser(bytes.NewReader(errBody))
		return
	}
	s.failOpen(x, reason)
	x.served = orig
	retry.Request = resp.Request
	*resp = *retry
}

// tee hands every byte read from the upstream to the collector. A panic in
// measurement stops the tee, never the stream.
type tee struct {
	io.ReadCloser
	x *exchange
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 && t.x.measureFault == "" {
		t.collect(p[:n])
	}
	if errors.Is(err, io.EOF) {
		t.x.complete = true
	}
	return n, err
}

func (t *tee) collect(b []byte) {
	defer func() {
		if v := recover(); v != nil {
			t.x.measureFault = fmt.Sprintf("panic in measurement: %v", v)
		}
	}()
	_, _ = t.x.collector.Write(b)
}

func (s *Server) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	status, kind := http.StatusBadGateway, "api_error"
	var ne net.Error
	switch {
	case r.Context().Err() != nil:
		// The client went away; the upstream call was cancelled with it.
		if x != nil {
			x.status, x.proxyErr = 499, "client closed the request"
		}
		return
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		status, kind = http.StatusGatewayTimeout, "timeout_error"
	}
	if x != nil {
		x.status, x.proxyErr = status, err.Error()
	}
	s.log.Warn("upstream unreachable", "path", r.URL.Path, "err", err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	msg, _ := json.Marshal(fmt.Sprintf("synaxi-proxyd: upstream %s: %v", s.o.Upstream.Host, err))
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s}}`, kind, msg)
}

// finish records the exchange once the response is over. It returns at
// once; the row is written after the probe answers.
func (s *Server) finish(x *exchange) {
	go func() {
		defer s.pending.Done()
		defer s.dequeue(x)
		defer func() {
			if v := recover(); v != nil {
				s.ledgerErrors.Add(1)
				s.log.Error("record exchange", "id", x.id, "panic", v)
			}
		}()
		s.record(x)
	}()
}

func (s *Server) record(x *exchange) {
	res := measure.Result{Problem: x.proxyErr}
	if x.collector != nil {
		res = x.collector.Result(x.complete)
	}
	if x.measureFault != "" {
		s.failOpens.Add(1)
		if x.failOpen == "" {
			x.failOpen = x.measureFault
		}
	}
	row := &ledger.Row{
		ID:             x.id,
		Upstrm:         x.upstreamID,
		Time:           x.start.UTC(),
		Session:        x.session,
		Agent:          x.agent,
		Model:          res.Model,
		Status:         x.status,
		Projected:      x.projected,
		FailOpen:       x.failOpen != "",
		FailOpenReason: x.failOpen,
		Usage:          res.Usage,
		Projection:     x.stats,
	}
	if row.Model == "" {
		row.Model = gjson.GetBytes(x.served, "model").Str
	}
	if x.visDone != nil {
		<-x.visDone
	}
	if x.gated {
		<-x.probeDone
		row.Counterfactual, row.CounterfactualNull = x.counterfactual, x.probeNull
		if row.Counterfactual == nil && row.CounterfactualNull == "" {
			row.CounterfactualNull = "count_tokens gave no answer"
		}
		if row.Counterfactual == nil {
			s.probeFailures.Add(1)
		}
		if x.after != nil {
			<-x.after
		}
		row.CounterfactualCached = s.cached(x, row.Counterfactual)
		if err := ledger.Record(s.o.Dirs, row); err != nil {
			s.ledgerErrors.Add(1)
			s.log.Error("write ledger row", "id", x.id, "err", err)
		}
	}
	if s.o.ConvLog != nil {
		s.logConversation(x, row, res)
	}
}

// context names the conversation context of x: its session and agent.
func (x *exchange) context() string { return x.session + "\x00" + x.agent }

// enqueue makes x its context's latest exchange, to be recorded after the
// one before it. Responses end in any order (the client may send the next
// request before the previous row is written), but the ledger and the
// cached counterfactual follow the order the requests arrived in.
func (s *Server) enqueue(x *exchange) {
	key := x.context()
	x.recorded = make(chan struct{})
	s.cfMu.Lock()
	defer s.cfMu.Unlock()
	x.after = s.tails[key]
	s.tails[key] = x.recorded
}

// dequeue marks x recorded, releasing the context's next exchange.
func (s *Server) dequeue(x *exchange) {
	if x.recorded == nil {
		return
	}
	key := x.context()
	s.cfMu.Lock()
	defer s.cfMu.Unlock()
	if s.tails[key] == x.recorded {
		delete(s.tails, key)
	}
	close(x.recorded)
}

// cached returns the counterfactual a perfect prefix cache would have read
// for this request: the context's previous counterfactual, 0 for a
// conversation's first request, nil when unknown. It remembers cf.
func (s *Server) cached(x *exchange, cf *int64) *int64 {
	key := x.context()
	s.cfMu.Lock()
	defer s.cfMu.Unlock()
	var out *int64
	if x.firstRequest {
		out = new(int64)
	} else if prev, ok := s.previous[key]; ok {
		out = &prev
	}
	if cf != nil {
		if len(s.previous) >= 10000 {
			clear(s.previous)
		}
		s.previous[key] = *cf
	}
	return out
}

func (s *Server) logConversation(x *exchange, row *ledger.Row, res measure.Result) {
	e := &convlog.Entry{
		Time: row.Time, ID: x.id, Session: x.session, Agent: x.agent, Path: x.path,
		Status: row.Status, Gated: x.gated, Projected: x.projected, FailOpen: x.failOpen,
		Original: convlog.Summarize(x.original), Projection: x.stats, Problem: res.Problem,
		Millis: time.Since(x.start).Milliseconds(),
	}
	if res.Known {
		u := res.Usage
		e.Usage = &u
	}
	if !bytes.Equal(x.served, x.original) {
		sum := convlog.Summarize(x.served)
		e.Served = &sum
	}
	if err := s.o.ConvLog.Write(e); err != nil {
		s.log.Warn("write conversation log", "id", x.id, "err", err)
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
	Status           string    `json:"status"`
	Version          string    `json:"version"`
	PID              int       `json:"pid"`
	Upstream         string    `json:"upstream"`
	Started          time.Time `json:"started"`
	UptimeSeconds    float64   `json:"uptime_seconds"`
	Projection       string    `json:"projection"` // "worker", "all" or "disabled"
	Requests         int64     `json:"requests"`   // every forwarded request
	Messages         int64     `json:"messages"`   // of which Messages requests
	Gated            int64     `json:"gated"`      // of which gated (one ledger row each)
	Projected        int64     `json:"projected"`
	FailOpens        int64     `json:"fail_opens"`
	ProbeFailures    int64     `json:"probe_failures"`
	LedgerErrors     int64     `json:"ledger_errors"`
	VisibilityErrors int64     `json:"visibility_errors"`
	Active           int64     `json:"active"` // requests in flight, this one excluded
}

// Health reports the counters.
func (s *Server) Health() Health {
	mode := "worker"
	switch {
	case s.o.Rule.Disable:
		mode = "disabled"
	case s.o.Rule.ProjectAll:
		mode = "all"
	}
	return Health{
		Status: "ok", Version: s.o.Version, PID: os.Getpid(), Upstream: s.o.Upstream.String(),
		Started: s.started.UTC(), UptimeSeconds: time.Since(s.started).Seconds(), Projection: mode,
		Requests: s.requests.Load(), Messages: s.messages.Load(), Gated: s.gated.Load(),
		Projected: s.projected.Load(), FailOpens: s.failOpens.Load(),
		ProbeFailures: s.probeFailures.Load(), LedgerErrors: s.ledgerErrors.Load(),
		VisibilityErrors: s.visibilityErrors.Load(), Active: s.active.Load() - 1,
	}
}

func (s *Server) serveHealth(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.Health())
}

// Wait blocks until every finished request's ledger row is written.
func (s *Server) Wait() { s.pending.Wait() }

// Serve accepts connections on ln until ctx is done or the proxy has been
// idle for Options.IdleExit, then drains in-flight streams (up to
// Options.DrainTimeout) and waits for pending ledger rows.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
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
	s.log.Info("shutting down", "reason", reason, "active", s.active.Load())
	dctx, cancel := context.WithTimeout(context.Background(), s.o.DrainTimeout)
	defer cancel()
	err := srv.Shutdown(dctx)
	s.pending.Wait()
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	return nil
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
