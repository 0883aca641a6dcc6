package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// A launch's X-Synaxi-Scope decides for its requests and never reaches the
// upstream; the client's credentials and custom headers do, unchanged.
func TestScopeHeaderPerLaunch(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) { o.Rule = gate.Rule{Scope: config.ScopeAll} })
	body := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`)
	h := http.Header{}
	h.Set("Authorization", "Bearer gw-token")
	h.Set("X-Gateway-Team", "team-blue")
	h.Set(gate.ScopeHeader, "off")
	resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, body)
	require.Equal(t, 200, resp.StatusCode)
	assert.Zero(t, p.Health().Gated, "scope off for this launch: not gated")

	h.Del(gate.ScopeHeader)
	do(t, rawClient(), "POST", p.URL+"/v1/messages", h, body)
	assert.Equal(t, int64(1), p.Health().Gated, "no header: proxy.scope (all)")

	for _, r := range up.requests("/v1/messages") {
		assert.Empty(t, r.Header.Values(gate.ScopeHeader), "the scope header is the proxy's, never forwarded")
		assert.Equal(t, "Bearer gw-token", r.Header.Get("Authorization"))
		assert.Equal(t, "team-blue", r.Header.Get("X-Gateway-Team"))
	}
	probes := up.requests("/v1/messages/count_tokens")
	require.NotEmpty(t, probes)
	for _, r := range probes {
		assert.Empty(t, r.Header.Values(gate.ScopeHeader))
		assert.Equal(t, "Bearer gw-token", r.Header.Get("Authorization"))
		assert.Equal(t, "team-blue", r.Header.Get("X-Gateway-Team"), "a gateway's header goes with the probe")
	}
}
