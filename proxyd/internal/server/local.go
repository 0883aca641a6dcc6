package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/synaxi/synaxi/proxyd/internal/metrics"
)

// The proxy's own endpoints. They are answered here and never forwarded
// upstream, whatever the method; only GET and HEAD are allowed.

// localEndpoints maps each of the proxy's own paths to its handler. /livez
// is answered before authentication (ServeHTTP); every path here needs the
// team token when one is set.
func (s *Server) localEndpoints() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"/health":      s.serveHealth,
		"/readyz":      s.serveReady,
		"/metrics":     s.metrics.Handler().ServeHTTP,
		VisibilityPath: s.serveVisibility,
	}
}

func serveLocal(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "synaxi-proxyd: "+r.URL.Path+" answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	h(w, r)
}

// serveLive answers /livez: the process serves HTTP. It needs no token
// (orchestrators' liveness probes send none) and says nothing else.
func serveLive(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte("ok\n"))
	}
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.Health())
}

// authorized checks the team token, if one is set, and answers 401 when it
// is missing or wrong. The comparison takes the same time whatever the
// token presented; the token is never logged. The proxy's own endpoints
// (local) also take it as "Authorization: Bearer", which every Prometheus
// can send; a forwarded request's Authorization is the client's and is
// never read.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, local bool) bool {
	if s.o.Token == "" {
		return true
	}
	presented := r.Header.Get(TokenHeader)
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && local && presented == "" {
		presented = bearer
	}
	got := sha256.Sum256([]byte(presented))
	if subtle.ConstantTimeCompare(got[:], s.tokenSum[:]) == 1 {
		return true
	}
	s.unauthorized.Add(1)
	s.metrics.Request(metrics.Unauthorized, "")
	s.log.Warn("unauthorized request: missing or wrong "+TokenHeader, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	msg, _ := json.Marshal("synaxi-proxyd: this proxy needs the team token in the " + TokenHeader +
		" header; set ANTHROPIC_CUSTOM_HEADERS=\"" + TokenHeader + ": <token>\" (ask whoever runs the proxy for the token)")
	fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":%s}}`, msg)
	return false
}

// readyFor is how long a readiness answer is reused.
const readyFor = 5 * time.Second

// readiness caches the last upstream check.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

// serveReady answers /readyz: 200 when the upstream answered HTTP at all
// within the last few seconds (any status: it is reachable), 503 while
// draining or when it cannot be reached.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("draining\n"))
		return
	}
	if err := s.upstreamReachable(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "upstream %s unreachable: %v\n", s.o.Upstream.Host, err)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// upstreamReachable sends a HEAD to the upstream's base URL, at most once
// every readyFor; concurrent callers share the check.
func (s *Server) upstreamReachable(ctx context.Context) error {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if !s.ready.checked.IsZero() && time.Since(s.ready.checked) < readyFor {
		return s.ready.err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, s.o.Upstream.String(), nil)
	if err == nil {
		var resp *http.Response
		if resp, err = s.o.Transport.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	s.ready.checked, s.ready.err = time.Now(), err
	return err
}
