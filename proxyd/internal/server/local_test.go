package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/server"
)

const teamToken = "team-token-0123456789abcdef"

// With a team token, a request without it (or with another) is answered
// 401 and never reaches the upstream; with it, it is forwarded without it.
func TestTokenRequired(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) { o.Token = teamToken })
	c := rawClient()
	for _, tok := range []string{"", "wrong", teamToken + "x", teamToken[:len(teamToken)-1]} {
		h := claudeHeaders()
		if tok != "" {
			h.Set(server.TokenHeader, tok)
		}
		for _, path := range []string{"/v1/messages", "/health", "/readyz", "/metrics", "/v1/models"} {
			resp, body := do(t, c, "POST", p.URL+path, h, workerBody(`[{"role":"user","content":"x"}]`))
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with token %q", path, tok)
			assert.Contains(t, string(body), `"authentication_error"`)
			assert.Contains(t, string(body), "ANTHROPIC_CUSTOM_HEADERS")
		}
	}
	assert.Empty(t, up.requests(""), "no unauthorized request reaches the upstream")
	assert.Empty(t, p.rows(t))

	h := claudeHeaders()
	h.Set(server.TokenHeader, teamToken)
	resp, _ := do(t, c, "POST", p.URL+"/v1/messages", h, workerBody(`[{"role":"user","content":"x"}]`))
	assert.Equal(t, 200, resp.StatusCode)
	p.Wait()
	sent := up.requests("")
	require.Len(t, sent, 2, "the request and its count_tokens probe")
	for _, r := range sent {
		assert.Empty(t, r.Header.Values(server.TokenHeader))
	}
	require.Len(t, p.rows(t), 1)
	assert.Equal(t, int64(1), p.Health().Requests, "401s are not forwarded requests")
	assert.Equal(t, int64(4*5), p.Health().Unauthorized)

	// The proxy's own endpoints also take it as a bearer token (Prometheus's
	// authorization); a forwarded request's Authorization is the client's.
	bearer := http.Header{"Authorization": {"Bearer " + teamToken}}
	resp, _ = do(t, c, "GET", p.URL+"/metrics", bearer, nil)
	assert.Equal(t, 200, resp.StatusCode)
	resp, _ = do(t, c, "GET", p.URL+"/v1/models", bearer, nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Len(t, up.requests(""), 2, "nothing more reached the upstream")

	// /livez needs no token and says nothing but ok.
	resp, body := do(t, c, "GET", p.URL+"/livez", nil, nil)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok\n", string(body))
}

func TestLocalEndpointsNeverForwarded(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	c := rawClient()
	for _, path := range []string{"/health", "/readyz", "/livez", "/metrics"} {
		resp, _ := do(t, c, "GET", p.URL+path, nil, nil)
		assert.Equal(t, 200, resp.StatusCode, path)
		if path != "/livez" {
			resp, _ = do(t, c, "POST", p.URL+path, nil, []byte(`{}`))
			assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
		}
	}
	for _, r := range up.requests("") {
		assert.NotContains(t, []string{"/health", "/readyz", "/livez", "/metrics"}, r.Path)
	}
	assert.Equal(t, int64(0), p.Health().Requests)
}

// /readyz is 503 when the upstream cannot be reached, and while draining.
func TestReadyz(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	resp, body := do(t, rawClient(), "GET", p.URL+"/readyz", nil, nil)
	assert.Equal(t, 200, resp.StatusCode, string(body))
	assert.Equal(t, "HEAD", up.requests("")[0].Method)

	dead := startProxy(t, "http://127.0.0.1:1", nil)
	resp, body = do(t, rawClient(), "GET", dead.URL+"/readyz", nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "upstream 127.0.0.1:1 unreachable")
}

// Scrapes and probes are not activity: an idle proxy scraped every few
// milliseconds still exits after proxy.idle_exit.
func TestLocalEndpointsDoNotHoldOffIdleExit(t *testing.T) {
	up := newUpstream(t)
	u := startProxy(t, up.URL, nil) // for its Dirs only
	s, err := server.New(server.Options{Upstream: mustURL(up.URL), Dirs: u.Dirs, IdleExit: 200 * time.Millisecond})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	c := rawClient()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-done:
			require.NoError(t, err)
			return
		case <-deadline:
			t.Fatal("a scraped idle proxy never exits")
		case <-time.After(20 * time.Millisecond):
			for _, path := range []string{"/metrics", "/livez", "/readyz", "/health"} {
				if resp, err := c.Get("http://" + ln.Addr().String() + path); err == nil {
					resp.Body.Close()
				}
			}
		}
	}
}
