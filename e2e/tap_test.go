package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tapped is one request as Claude Code sent it, recorded before the proxy,
// and the status it was answered with (0 while it is being answered).
type Tapped struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	Status                 int
}

// Tap is a recording reverse proxy in front of synaxi-proxyd (or a load
// balancer): it keeps the exact bytes Claude Code sent, in the order they
// arrived, so a test can compare them with what the fake upstream received
// behind the proxy, or send them again.
type Tap struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Tapped
}

// NewTap starts a Tap in front of target until the test ends.
func NewTap(t *testing.T, target string) *Tap {
	u, err := url.Parse(target)
	require.NoError(t, err)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: tr, FlushInterval: -1}
	tp := &Tap{}
	tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tp.mu.Lock()
		i := len(tp.reqs)
		tp.reqs = append(tp.reqs, Tapped{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body, 0})
		tp.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w}
		rp.ServeHTTP(sw, r)
		tp.mu.Lock()
		tp.reqs[i].Status = sw.status
		tp.mu.Unlock()
	}))
	t.Cleanup(tp.Close)
	return tp
}

// Requests returns what was recorded so far.
func (tp *Tap) Requests() []Tapped {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return slices.Clone(tp.reqs)
}

// statusWriter remembers the status a response was written with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
