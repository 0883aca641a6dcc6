package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/server"
)

func health(t *testing.T, p *proxy) server.Health {
	t.Helper()
	resp, body := do(t, rawClient(), "GET", p.URL+"/health", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	var h server.Health
	require.NoError(t, json.Unmarshal(body, &h))
	return h
}

// /health tells what the running proxy really uses: its upstream (a
// password in the URL redacted), the fingerprint of the configuration it
// started with, and whether its recent upstream calls got an answer.
func TestHealthUpstreamCalls(t *testing.T) {
	dead := startProxy(t, "http://gateway:s3cret@127.0.0.1:1", func(o *server.Options) { o.ConfigHash = "0123456789ab" })
	for range 3 {
		resp, _ := do(t, rawClient(), "POST", dead.URL+"/v1/messages", nil, []byte(`{}`))
		assert.Equal(t, 502, resp.StatusCode)
	}
	h := health(t, dead)
	assert.Equal(t, "http://gateway:xxxxx@127.0.0.1:1", h.Upstream)
	assert.Equal(t, "0123456789ab", h.Config)
	c := h.UpstreamCalls
	assert.Equal(t, 3, c.RecentFailures)
	assert.Equal(t, 300, c.WindowSeconds)
	assert.Contains(t, c.LastError, "127.0.0.1:1")
	assert.NotNil(t, c.LastFailure)
	assert.Nil(t, c.LastAnswer, "no call got an answer")
	_, raw := do(t, rawClient(), "GET", dead.URL+"/health", nil, nil)
	assert.NotContains(t, string(raw), "s3cret")

	up := newUpstream(t)
	live := startProxy(t, up.URL, nil)
	do(t, rawClient(), "POST", live.URL+"/v1/messages", nil, []byte(`{}`))
	c = health(t, live).UpstreamCalls
	assert.Zero(t, c.RecentFailures)
	assert.Empty(t, c.LastError)
	assert.NotNil(t, c.LastAnswer)
}
