package doctor

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fakeProxy answers like synaxi-proxyd: /livez open, the rest behind the
// token when token is set; ready says what /readyz answers.
func fakeProxy(t *testing.T, token string, ready int, metrics string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/livez" {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		if token != "" && r.Header.Get("X-Synaxi-Token") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/health":
			_, _ = w.Write([]byte(`{"status":"ok"}`))
		case "/readyz":
			w.WriteHeader(ready)
			_, _ = w.Write([]byte("upstream api.example unreachable: dial tcp: refused\n"))
		case "/metrics":
			_, _ = w.Write([]byte(metrics))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const goodMetrics = "# TYPE synaxi_proxy_requests_total counter\nsynaxi_proxy_requests_total{outcome=\"passed\"} 3\n"

func TestRemote(t *testing.T) {
	const tok = "0123456789abcdef0123"
	tokenFile := filepath.Join(t.TempDir(), "token")
	assert.NoError(t, os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600))
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "ANTHROPIC_CUSTOM_HEADERS" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		srv    *httptest.Server
		e      RemoteEnv
		failed int
		want   []string
	}{
		{"all good, token from the file", fakeProxy(t, tok, 200, goodMetrics), RemoteEnv{TokenFile: tokenFile}, 0,
			[]string{"[ok  ] team token: required, and the token from " + tokenFile + " is accepted", "[ok  ] upstream reachable", "[ok  ] metrics"}},
		{"token from ANTHROPIC_CUSTOM_HEADERS", fakeProxy(t, tok, 200, goodMetrics), RemoteEnv{Getenv: env("X-Other: 1\nx-synaxi-token: " + tok)}, 0,
			[]string{"token from ANTHROPIC_CUSTOM_HEADERS is accepted"}},
		{"no token given", fakeProxy(t, tok, 200, goodMetrics), RemoteEnv{Getenv: env("")}, 1,
			[]string{"[FAIL] team token: the proxy asks for a team token; no token given", "hint: pass --token-file"}},
		{"wrong token", fakeProxy(t, tok, 200, goodMetrics), RemoteEnv{Getenv: env("x-synaxi-token: nope")}, 1,
			[]string{"is refused (status 401)"}},
		{"upstream down, no metrics", fakeProxy(t, tok, 503, "go_goroutines 3\n"), RemoteEnv{TokenFile: tokenFile}, 2,
			[]string{"[FAIL] upstream reachable: /readyz 503: upstream api.example unreachable", "[FAIL] metrics: /metrics answers without synaxi_proxy_requests_total"}},
		{"no token on loopback", fakeProxy(t, "", 200, goodMetrics), RemoteEnv{}, 0,
			[]string{"[ok  ] team token: the proxy asks for no team token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.URL = tt.srv.URL
			var out bytes.Buffer
			assert.Equal(t, tt.failed, Remote(context.Background(), &out, tt.e), out.String())
			for _, w := range tt.want {
				assert.Contains(t, out.String(), w)
			}
			assert.NotContains(t, out.String(), tok, "the token is never printed")
		})
	}
	var out bytes.Buffer
	assert.Equal(t, 1, Remote(context.Background(), &out, RemoteEnv{URL: "http://127.0.0.1:1"}))
	assert.Contains(t, out.String(), "[FAIL] proxy answers")
	out.Reset()
	assert.Equal(t, 1, Remote(context.Background(), &out, RemoteEnv{URL: "synaxi.internal:8787"}))
	assert.Contains(t, out.String(), "not an http:// or https:// URL")
}

// The upstream calls a proxy reports on /health: failing now fails the
// check with the last error; answered since, or none failed, passes.
func TestRemoteCalls(t *testing.T) {
	const up = `"upstream":"https://gateway.corp.example"`
	for body, want := range map[string]string{
		`{` + up + `,"upstream_calls":{"window_seconds":300,"recent_failures":5,"last_failure":"2026-12-07T05:00:00Z","last_error":"dial tcp: no such host"}}`: "FAIL its upstream https://gateway.corp.example is failing: 5 call(s) in the last 5 minutes got no answer, none since (last: dial tcp: no such host)",
		`{` + up + `,"upstream_calls":{"window_seconds":300,"recent_failures":2,"last_failure":"2026-12-07T05:00:00Z","last_answer":"2026-12-07T05:01:00Z"}}`:  "ok upstream https://gateway.corp.example: no call failing",
		`{` + up + `,"upstream_calls":{"window_seconds":300,"recent_failures":0}}`:                                                                             "ok upstream",
		`{"status":"ok"}`: "warn the proxy does not report its upstream calls",
	} {
		c := remoteCalls(body)
		mark := "ok"
		switch {
		case c.Warn:
			mark = "warn"
		case !c.OK():
			mark = "FAIL"
		}
		got := mark + " " + c.Detail
		if c.Err != nil {
			got = mark + " " + c.Err.Error()
		}
		assert.Contains(t, got, want, body)
	}
}
