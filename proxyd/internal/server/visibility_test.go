package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/server"
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
