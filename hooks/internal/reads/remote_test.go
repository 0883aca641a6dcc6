package reads

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/visibility/remote"
)

// remoteProxy is a stand-in for synaxi-proxyd's visibility endpoint; answer
// writes the response for each call, and calls records what the hook sent.
type remoteProxy struct {
	*httptest.Server
	mu     sync.Mutex
	calls  []*http.Request
	answer func(w http.ResponseWriter, r *http.Request)
}

func newRemoteProxy(t *testing.T) *remoteProxy {
	p := &remoteProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.calls = append(p.calls, r.Clone(context.Background()))
		answer := p.answer
		p.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *remoteProxy) serve(e *visibility.Export) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != remote.Path || r.URL.Query().Get("session") != e.Session || r.URL.Query().Get("agent") != e.Agent {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(e)
	}
}

// dialer sends every connection to the test server, whatever host the URL
// names, so a non-loopback base URL reaches it.
func (p *remoteProxy) client() *http.Client {
	addr := p.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
}

// A worker routed through a proxy on another machine: the hook asks the
// proxy for the context's visibility and denies only on its positive word;
// every failure allows.
func TestRemoteVisibility(t *testing.T) {
	const team = "http://synaxi.team.example:8787" // TLS or not is the client's business
	const headers = "X-Synaxi-Token: team-token-0123456789\nX-Other: 1"
	fresh := func() time.Time { return time.Now().Add(time.Second) }
	visible := map[string]visibility.File{}
	cases := []struct {
		name    string
		baseURL string
		headers string
		config  bool // noreread.visibility_url names the proxy
		answer  func(e *env, p string, rp *remoteProxy)
		denied  bool
		asked   bool
	}{
		{"export confirms", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			visible[p] = visibility.File{Visible: []visibility.Range{{Start: 1, End: 0}}}
			rp.serve(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: fresh(), Files: visible})
		}, true, true},
		{"explicit visibility_url, export confirms", "", "", true, func(e *env, p string, rp *remoteProxy) {
			rp.serve(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: fresh(),
				Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 0}}}}})
		}, true, true},
		{"export says evicted", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.serve(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: fresh(), Files: map[string]visibility.File{p: {Evicted: true}}})
		}, false, true},
		{"stale export", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.serve(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: time.Now().Add(-time.Hour),
				Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 0}}}}})
		}, false, true},
		{"not found", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.answer = http.NotFound
		}, false, true},
		{"server error", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.answer = func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }
		}, false, true},
		{"undecodable", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.answer = func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"files":`)) }
		}, false, true},
		{"too slow", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.answer = func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(3 * time.Second):
				case <-r.Context().Done():
				}
				_ = json.NewEncoder(w).Encode(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: fresh(),
					Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 0}}}}})
			}
		}, false, true},
		{"unreachable", team, headers, false, func(e *env, p string, rp *remoteProxy) {
			rp.Close()
		}, false, false},
		{"a remote base URL without synaxi's token is not asked", team, "X-Other: 1", false, func(e *env, p string, rp *remoteProxy) {
			rp.serve(&visibility.Export{Session: e.sess, Agent: e.agent, Updated: fresh(),
				Files: map[string]visibility.File{p: {Visible: []visibility.Range{{Start: 1, End: 0}}}}})
		}, true, false}, // a worker direct to a gateway: Claude Code's transcript is what the model sees
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rp := newRemoteProxy(t)
			rp.answer = http.NotFound
			e := newEnv(t)
			e.agent, e.agentType = "a1", "synaxi:synaxi-worker"
			e.s.BaseURL, e.s.CustomHeaders = c.baseURL, c.headers
			e.s.AskRemote = func(ctx context.Context, r RemoteRequest) *visibility.Export {
				ctx, cancel := context.WithTimeout(ctx, RemoteTimeout)
				defer cancel()
				ex, _ := remote.Get(ctx, rp.client(), r.Base, r.Session, r.Agent, visibility.CustomHeaders(r.Headers))
				return ex
			}
			if c.config {
				e.s.Cfg.VisibilityURL = "http://synaxi.internal.example"
			}
			p := e.file("pkg/a.go", 100)
			denied, _ := e.read(p, 0, 0)
			require.False(t, denied, "first read")
			c.answer(e, p, rp)
			denied, reason := e.read(p, 0, 0)
			assert.Equal(t, c.denied, denied, reason)
			rp.mu.Lock()
			defer rp.mu.Unlock()
			if !c.asked {
				if c.name != "unreachable" {
					assert.Empty(t, rp.calls)
				}
				return
			}
			require.NotEmpty(t, rp.calls)
			last := rp.calls[len(rp.calls)-1]
			assert.Equal(t, remote.Path, last.URL.Path)
			assert.Equal(t, e.sess, last.URL.Query().Get("session"))
			assert.Equal(t, "a1", last.URL.Query().Get("agent"))
			if c.headers != "" {
				assert.Equal(t, "team-token-0123456789", last.Header.Get("X-Synaxi-Token"), "the team token goes with the call")
			}
		})
	}
}
