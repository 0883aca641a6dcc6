package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
	"github.com/synaxi/synaxi/proxyd/internal/visstore"
	"github.com/synaxi/synaxi/proxyd/internal/visstore/redistest"
)

// The proxy answers a context's visibility export over HTTP, for a hook on
// another machine, behind the team token, and never forwards the request.
func TestVisibilityEndpoint(t *testing.T) {
	up := newUpstream(t)
	const token = "team-token-0123456789"
	p := startProxy(t, up.URL, func(o *server.Options) { o.Token = token })
	want := &visibility.Export{Session: "sess/1", Agent: "w1", Updated: time.Now().UTC().Truncate(time.Millisecond),
		Files: map[string]visibility.File{"/repo/a.go": {Visible: []visibility.Range{{Start: 1, End: 0}}}, "/repo/b.go": {Evicted: true}}}
	require.NoError(t, visibility.Write(p.Dirs, want))

	get := func(query string, h http.Header) (*http.Response, []byte) {
		return do(t, rawClient(), "GET", p.URL+server.VisibilityPath+query, h, nil)
	}
	auth := http.Header{server.TokenHeader: {token}}
	resp, body := get("?session="+url.QueryEscape("sess/1")+"&agent=w1", auth)
	require.Equal(t, 200, resp.StatusCode, string(body))
	var got visibility.Export
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, want.Files, got.Files)
	assert.True(t, want.Updated.Equal(got.Updated))

	resp, _ = get("?session=sess%2F1&agent=other", auth)
	assert.Equal(t, 404, resp.StatusCode, "no export for that context")
	resp, _ = get("?session=sess%2F1", auth)
	assert.Equal(t, 404, resp.StatusCode, "the main conversation has none either")
	resp, body = get("", auth)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Contains(t, string(body), "session=")
	resp, _ = get("?session=sess%2F1&agent=w1", nil)
	assert.Equal(t, 401, resp.StatusCode, "the team token is needed")
	resp, _ = get("?session=..%2F..%2Fledger&agent=w1", auth)
	assert.Equal(t, 404, resp.StatusCode, "a session id never names a path")
	assert.Empty(t, up.requests(""), "never forwarded upstream")
}

// With a shared store, the export a projected request leaves on one replica
// is what every replica's endpoint answers, and a later projection on
// another replica replaces it everywhere.
func TestVisibilitySharedAcrossReplicas(t *testing.T) {
	url := redistest.Start(t)
	up := newUpstream(t)
	evicted := &atomic.Bool{}
	var ps []*proxy
	for range 2 {
		store, err := visstore.Open(context.Background(), url)
		require.NoError(t, err)
		t.Cleanup(func() { store.Close() })
		ps = append(ps, startProxy(t, up.URL, func(o *server.Options) {
			o.SharedVisibility = store
			o.Projector = projectorFunc(func(_ context.Context, in *gate.Input) (*gate.Output, error) {
				f := visibility.File{Visible: []visibility.Range{{Start: 1, End: 0}}}
				if evicted.Load() {
					f = visibility.File{Evicted: true}
				}
				return &gate.Output{Body: in.Body.Bytes(), Visibility: &visibility.Export{Files: map[string]visibility.File{"/w/a.go": f}}}, nil
			})
		}))
	}
	h := claudeHeaders()
	h.Set("X-Claude-Code-Agent-Id", "w9")
	ask := func(p *proxy) visibility.Export {
		t.Helper()
		resp, body := do(t, rawClient(), "GET", p.URL+server.VisibilityPath+"?session=sess-1&agent=w9", nil, nil)
		require.Equal(t, 200, resp.StatusCode, string(body))
		var e visibility.Export
		require.NoError(t, json.Unmarshal(body, &e))
		return e
	}
	resp, _ := do(t, rawClient(), "POST", ps[0].URL+"/v1/messages", h, workerBody(`[{"role":"user","content":"x"}]`))
	require.Equal(t, 200, resp.StatusCode)
	ps[0].Wait()
	for _, p := range ps {
		assert.False(t, ask(p).Files["/w/a.go"].Evicted, "the first replica's export, from either")
	}
	evicted.Store(true)
	resp, _ = do(t, rawClient(), "POST", ps[1].URL+"/v1/messages", h,
		workerBody(`[{"role":"user","content":"x"},{"role":"assistant","content":"ok"},{"role":"user","content":"y"}]`))
	require.Equal(t, 200, resp.StatusCode)
	ps[1].Wait()
	for _, p := range ps {
		assert.True(t, ask(p).Files["/w/a.go"].Evicted, "the later projection, on the other replica, from either")
	}
	_, err := visibility.Read(ps[0].Dirs, "sess-1", "w9")
	require.NoError(t, err, "the state dir keeps its own copy too")
	assert.Zero(t, ps[0].Health().VisibilityErrors+ps[1].Health().VisibilityErrors)
}
