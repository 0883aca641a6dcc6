package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/measure"
)

// request is one Messages request as the gate read it. It is complete when
// gate returns and read-only from then on, shared by the ServeHTTP
// goroutine and the request's recorder.
type request struct {
	id             string
	start          time.Time
	path, query    string
	header         http.Header // the client's, cloned for a gated request (probe and projector)
	body           *gate.Body  // the original
	session, agent string
	gated          bool
	passed         string // why a request in scope was not gated (gate.Decision); its row says so
	fault          string // a panic in the gate: the request is gated, forwarded as it came, unmeasured
}

// context names the conversation context of r: its session and agent.
func (r *request) context() string { return r.session + "\x00" + r.agent }

// served is what went upstream for a request, and why.
type served struct {
	body      []byte // before outbound's changes
	projected bool
	failOpen  string // why the original was forwarded; "" when that was not a fault
	stats     *ledger.ProjectionStats
}

// exchange is a request on its way through: what was served and what the
// upstream answered. Only the ServeHTTP goroutine touches it until the
// response is over; then it is handed whole to the recorder.
type exchange struct {
	req    *request
	served served
	answer answer
}

// payload is what the exchange sends upstream: the projection, valid JSON
// by contract (gate.Output), or the original.
func (x *exchange) payload() *payload {
	if x.served.projected {
		return &payload{body: x.served.body, valid: always}
	}
	return &payload{body: x.served.body, valid: x.req.body.Valid}
}

// answer is what the upstream answered, gathered while the response passes.
type answer struct {
	status       int
	upstreamID   string
	collector    *measure.Collector
	complete     bool
	measureFault string // a panic in measurement stopped the tee
	proxyErr     string
}

// gate reads one Messages request: its body (parsed, not copied), session,
// agent and whether it is gated. A panic here gates the request as a fault,
// so it is forwarded as it came and still leaves a ledger row.
func (s *Server) gate(r *http.Request, start time.Time, raw []byte) (req *request) {
	req = &request{id: newID(), start: start, path: r.URL.Path, query: r.URL.RawQuery, body: gate.Parse(raw)}
	defer func() {
		if v := recover(); v != nil {
			req.fault = fmt.Sprintf("panic in gate: %v", v)
			req.gated = true
		}
		if req.gated {
			s.gated.Add(1)
		}
	}()
	s.hook("gate")
	req.session = gate.Session(r.Header, req.body)
	req.agent = gate.Agent(r.Header)
	d := s.o.Rule.Decide(r.Method, r.URL.Path, r.Header, req.body)
	if strings.HasPrefix(d.Passed, gate.PassedCompaction) {
		if _, over := oversized(req.body, r.Header); over {
			// Sent as it came, the summary request would be refused as too
			// long: the summary is written from the projection instead.
			d = gate.Decision{Gated: true}
		}
	}
	if req.gated, req.passed = d.Gated, d.Passed; req.gated {
		req.body.Check() // beside everything that follows; asked for by the projection and the probe
		req.header = r.Header.Clone()
	}
	return req
}

// project decides what is served: a gated request's projection, else the
// original (outbound then applies proxy.upstream_model to either). Any
// fault serves the original and counts a fail-open.
func (s *Server) project(ctx context.Context, req *request) (out served) {
	if !req.gated {
		return served{body: req.body.Bytes()}
	}
	if req.fault != "" {
		return s.failOpen(req, req.fault)
	}
	defer func() {
		if v := recover(); v != nil {
			out = s.failOpen(req, fmt.Sprintf("panic in projection: %v", v))
		}
	}()
	s.hook("project")
	p, err := gate.Run(ctx, s.o.Projector, &gate.Input{Body: req.body, Session: req.session, Agent: req.agent, Header: req.header})
	if !req.body.Valid() {
		// Whatever the projector said: the upstream answers the malformed
		// original as it would without the proxy.
		return s.failOpen(req, "gated request body is not valid JSON")
	}
	if err != nil {
		var pe *gate.PanicError
		if errors.As(err, &pe) {
			s.log.Error("projection panic", "id", req.id, "panic", pe.Value, "stack", string(pe.Stack))
		}
		return s.failOpen(req, err.Error())
	}
	// The projector's output is a JSON object by contract (gate.Output).
	out = served{body: p.Body, projected: true, stats: &p.Stats}
	s.writeVisibility(req, p.Visibility)
	s.keepRecall(req, p.Recall)
	s.projected.Add(1)
	return out
}

// failOpen serves req's original (or, when the original is too large for
// the model's window, a minimal safe projection of it: window.go) and
// counts why.
func (s *Server) failOpen(req *request, reason string) served {
	body, note := s.safeOriginal(req)
	return s.servedOpen(req, body, reason+note)
}

// servedOpen counts a fail-open that serves body.
func (s *Server) servedOpen(req *request, body []byte, reason string) served {
	s.failOpens.Add(1)
	s.log.Warn("fail-open: forwarding the original request", "id", req.id, "reason", reason)
	return served{body: body, failOpen: reason}
}

// writeVisibility writes a projection's visibility export for the request's
// context, beside the serve; Wait covers it.
func (s *Server) writeVisibility(req *request, v *visibility.Export) {
	if v == nil {
		return
	}
	v.Session, v.Agent = req.session, req.agent
	if v.Agent == "" {
		v.Agent = visibility.MainAgent
	}
	if v.Updated.IsZero() {
		v.Updated = time.Now()
	}
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		if err := s.storeVisibility(v); err != nil {
			s.visibilityErrors.Add(1)
			s.log.Warn("write visibility export", "id", req.id, "err", err)
		}
	}()
}
