package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/measure"
)

// The upstream stage runs inside httputil.ReverseProxy, on the ServeHTTP
// goroutine: modifyResponse and errorHandler fill the exchange's answer, and
// the tee feeds the usage collector as the client reads.

// modifyResponse starts measuring a recorded exchange's response. A panic
// here lets the response through unmeasured.
func (s *Server) modifyResponse(resp *http.Response) error {
	s.calls.answered(time.Now())
	x := sendingOf(resp.Request.Context()).x
	if x == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			x.answer.status = resp.StatusCode
			x.answer.measureFault = fmt.Sprintf("panic in measurement: %v", v)
		}
	}()
	s.hook("response")
	if x.served.projected && resp.StatusCode == http.StatusBadRequest {
		s.retryOriginal(resp, x)
	}
	a := &x.answer
	a.status = resp.StatusCode
	a.upstreamID = resp.Header.Get("Request-Id")
	a.collector = measure.NewCollector(resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
	resp.Body = &tee{ReadCloser: resp.Body, a: a}
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
	req := resp.Request.Clone(resp.Request.Context())
	body, note := s.safeOriginal(x.req)
	s.outbound(req, &payload{body: body, valid: x.req.body.Valid})
	retry, err := s.o.Transport.RoundTrip(req)
	if err != nil {
		s.calls.failed(time.Now(), err)
		s.log.Warn("retry with the original request", "id", x.req.id, "err", err)
		resp.Body = io.NopCloser(bytes.NewReader(errBody))
		return
	}
	x.served = s.servedOpen(x.req, body, reason+note)
	retry.Request = resp.Request
	*resp = *retry
}

// tee hands every byte read from the upstream to the collector. A panic in
// measurement stops the tee, never the stream.
type tee struct {
	io.ReadCloser
	a *answer
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 && t.a.measureFault == "" {
		t.collect(p[:n])
	}
	if errors.Is(err, io.EOF) {
		t.a.complete = true
	}
	return n, err
}

func (t *tee) collect(b []byte) {
	defer func() {
		if v := recover(); v != nil {
			t.a.measureFault = fmt.Sprintf("panic in measurement: %v", v)
		}
	}()
	_, _ = t.a.collector.Write(b)
}

func (s *Server) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	x := sendingOf(r.Context()).x
	status, kind := http.StatusBadGateway, "api_error"
	var ne net.Error
	switch {
	case r.Context().Err() != nil:
		// The client went away; the upstream call was cancelled with it.
		if x != nil {
			x.answer.status, x.answer.proxyErr = 499, "client closed the request"
		}
		return
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		status, kind = http.StatusGatewayTimeout, "timeout_error"
	}
	if x != nil {
		x.answer.status, x.answer.proxyErr = status, err.Error()
	}
	s.calls.failed(time.Now(), err)
	s.log.Warn("upstream unreachable", "path", r.URL.Path, "err", err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	msg, _ := json.Marshal(fmt.Sprintf("synaxi-proxyd: upstream %s: %v", s.o.Upstream.Host, err))
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s}}`, kind, msg)
}
