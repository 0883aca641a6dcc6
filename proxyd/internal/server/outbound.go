package server

import (
	"context"
	"net/http"
	"net/http/httputil"
	"time"

	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/metrics"
)

// The outbound stage: what the proxy changes in a request on its way
// upstream happens in outbound, once per request sent, whichever of the
// three senders sends it (the reverse proxy's rewrite, the count_tokens
// probe, the retry of a rejected projection). What is served (the
// client's body or the projection) is decided before, once, by project;
// outbound only applies the configured changes to it. once_test.go holds
// every change to its one call site.

// TokenHeader carries the team token (proxy.token). The proxy checks it on
// every request and never forwards it.
const TokenHeader = "X-Synaxi-Token"

// payload is a body the proxy read whole and decided to send, before
// outbound's changes: the client's own, or its projection.
type payload struct {
	body  []byte
	valid func() bool // whether body is valid JSON; asked only when the model is rewritten
}

func always() bool { return true }

// sending is what the reverse proxy's hooks know of a request it forwards.
type sending struct {
	start time.Time // when the request arrived
	p     *payload  // the body to send; nil: the request's own streams through
	x     *exchange // nil unless the request is recorded
}

type sendingKey struct{}

func sendingOf(ctx context.Context) *sending {
	s, _ := ctx.Value(sendingKey{}).(*sending)
	if s == nil {
		return &sending{}
	}
	return s
}

// forward hands r, which arrived at start, to the reverse proxy. p, when
// the proxy read the body, is what goes upstream (nil: r's body streams
// through untouched); x, when the request is recorded, is its exchange.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, start time.Time, p *payload, x *exchange) {
	ctx := context.WithValue(r.Context(), sendingKey{}, &sending{start: start, p: p, x: x})
	s.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// rewrite is the reverse proxy's Rewrite: the upstream's address, the
// client's forwarding headers kept, then outbound; the time the proxy took
// until here is its added latency.
func (s *Server) rewrite(pr *httputil.ProxyRequest) {
	snd := sendingOf(pr.In.Context())
	if !snd.start.IsZero() {
		s.metrics.AddedLatency(snd.outcome(), time.Since(snd.start))
	}
	pr.SetURL(s.o.Upstream)
	// Rewrite mode drops these from the outbound request; the proxy adds
	// none of its own and keeps the client's.
	for _, k := range forwardedHeaders {
		if v, ok := pr.In.Header[k]; ok {
			pr.Out.Header[k] = v
		}
	}
	s.outbound(pr.Out, snd.p)
}

// forwardedHeaders are client headers httputil.ReverseProxy strips in
// Rewrite mode.
var forwardedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// outbound makes out what goes upstream: the team token and scope headers
// removed; a body the proxy read (p; nil leaves out's own body alone) set
// as out's body with proxy.upstream_model written into its model.
func (s *Server) outbound(out *http.Request, p *payload) {
	s.hook("outbound")
	out.Header.Del(TokenHeader)
	out.Header.Del(gate.ScopeHeader)
	if p != nil {
		setBody(out, s.withModel(p.body, p.valid))
	}
}

// withModel applies proxy.upstream_model to a request body; valid says
// (and is only asked when a rewrite is configured) whether the body is
// valid JSON. Anything but a JSON object is forwarded as it is.
func (s *Server) withModel(body []byte, valid func() bool) []byte {
	if s.o.UpstreamModel == "" || !valid() || !gate.Parse(body).JSON().IsObject() {
		return body
	}
	out, err := sjson.SetBytes(body, "model", s.o.UpstreamModel)
	if err != nil {
		return body
	}
	return out
}

// outcome is what the request's served body is, as it is sent.
func (snd *sending) outcome() metrics.Outcome {
	switch {
	case snd.x == nil:
		return metrics.Passed
	case snd.x.served.projected:
		return metrics.Projected
	case snd.x.served.failOpen != "":
		return metrics.FailOpen
	}
	return metrics.Passed
}
