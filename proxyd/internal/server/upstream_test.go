package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// seen is one request as the fake upstream received it.
type seen struct {
	Method, Path, RawQuery, Host string
	Header                       http.Header
	Body                         []byte
}

// upstream is a scripted fake of the Messages API.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []seen
	handler func(w http.ResponseWriter, r *http.Request, body []byte) // nil: default
	count   func(w http.ResponseWriter, body []byte)                  // count_tokens; nil: len(body)/4
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Host, r.Header.Clone(), body})
		h, c := u.handler, u.count
		u.mu.Unlock()
		if r.URL.Path == "/v1/messages/count_tokens" {
			if c != nil {
				c(w, body)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]int{"input_tokens": len(body) / 4})
			return
		}
		if h != nil {
			h(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_up")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","model":"claude-sonnet-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":11,"cache_creation_input_tokens":22,"cache_read_input_tokens":33,"output_tokens":44}}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) set(h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	u.mu.Lock()
	u.handler = h
	u.mu.Unlock()
}

func (u *upstream) setCount(c func(w http.ResponseWriter, body []byte)) {
	u.mu.Lock()
	u.count = c
	u.mu.Unlock()
}

func (u *upstream) requests(path string) []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []seen
	for _, r := range u.reqs {
		if path == "" || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// proxy is a running Server on a loopback port.
type proxy struct {
	*server.Server
	URL  string
	Dirs xdg.Dirs
	stop func()
}

func startProxy(t testing.TB, up string, mod func(*server.Options)) *proxy {
	t.Helper()
	u, err := url.Parse(up)
	require.NoError(t, err)
	dirs := xdg.Dirs{State: t.TempDir()}
	// Most tests gate the worker alone; scope "all" is tested where set.
	o := server.Options{Upstream: u, CountTokens: true, Dirs: dirs, Version: "test", Rule: gate.Rule{Scope: config.ScopeWorker}}
	if mod != nil {
		mod(&o)
	}
	s, err := server.New(o)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	p := &proxy{Server: s, URL: "http://" + ln.Addr().String(), Dirs: dirs}
	p.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(p.stop)
	return p
}

// rows waits for pending rows and reads the ledger.
func (p *proxy) rows(t testing.TB) []ledger.Row {
	t.Helper()
	p.Wait()
	f, err := os.Open(ledger.Path(p.Dirs))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []ledger.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ledger.Row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

// rawClient never asks for or decodes compression, so tests see wire bytes.
func rawClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

func do(t testing.TB, c *http.Client, method, url string, h http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(string(body)))
	require.NoError(t, err)
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, got
}

const workerSystem = `[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332"},{"type":"text","text":"You are Claude Code."},{"type":"text","text":"SYNAXI-PROJECTION-WORKER\nWork the loop."}]`

func workerBody(messages string) []byte {
	return []byte(`{"model":"claude-sonnet-4-6","max_tokens":32000,"stream":false,"metadata":{"user_id":"user_abc"},"system":` +
		workerSystem + `,"messages":` + messages + `,"tools":[{"name":"Read","input_schema":{"type":"object"}}]}`)
}

func claudeHeaders() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-ant-oat01-SECRETOAUTHTOKEN")
	h.Set("X-Api-Key", "sk-ant-api03-SECRETAPIKEY")
	h.Set("Anthropic-Beta", "oauth-2025-04-20,context-management-2025-06-27")
	h.Set("Anthropic-Version", "2023-06-01")
	h.Set("X-App", "cli")
	h.Set("User-Agent", "claude-cli/2.1.332 (external, cli)")
	h.Set("X-Claude-Code-Session-Id", "sess-1")
	h.Set("Content-Type", "application/json")
	h.Set("X-Stainless-Retry-Count", "0")
	return h
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
