package server_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// TestScopeAll: with the default scope, a main-session request is gated
// (probed and recorded), while a side request reaches the upstream byte
// for byte, unprobed, and its ledger row says why it passed.
func TestScopeAll(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) { o.Rule = gate.Rule{Scope: config.ScopeAll} })
	main := []byte(`{"model":"claude-sonnet-4-6","max_tokens":32000,"tools":[{"name":"Read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`)
	title := []byte(`{"model":"claude-haiku-4-5","max_tokens":32000,"tools":[],"output_config":{"format":{"type":"json_schema"}},"messages":[{"role":"user","content":"name this session"}]}`)
	for _, b := range [][]byte{main, title} {
		resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", claudeHeaders(), b)
		require.Equal(t, 200, resp.StatusCode)
	}
	rows := p.rows(t)
	require.Len(t, rows, 2)
	byPassed := map[string]bool{}
	for _, r := range rows {
		byPassed[r.Passed] = true
		if r.Passed != "" {
			assert.Nil(t, r.Counterfactual, "a side request is not probed")
			assert.Empty(t, r.CounterfactualNull)
			assert.False(t, r.Projected)
		} else {
			assert.NotNil(t, r.Counterfactual, r.CounterfactualNull)
		}
	}
	assert.True(t, byPassed["side request: no tools (title or topic generation, a helper call)"], "%v", byPassed)
	assert.Len(t, up.requests("/v1/messages/count_tokens"), 1, "only the main session's request was probed")
	sent := up.requests("/v1/messages")
	require.Len(t, sent, 2)
	assert.Equal(t, title, sent[1].Body, "the side request went up byte for byte")
	h := p.Health()
	assert.Equal(t, config.ScopeAll, h.Projection)
	assert.Equal(t, int64(1), h.Gated)
	assert.Equal(t, int64(0), h.ProbeFailures)
}

// TestCompactionSummary: Claude Code's summary request passes as sent
// (a row says so), unless its history is larger than the model's window,
// where it would be refused: then it is gated, and served projected.
func TestCompactionSummary(t *testing.T) {
	summarize := func(body []byte) []byte {
		prompt := `,{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"CRITICAL: Respond with TEXT ONLY.\n\nYour task is to create a detailed summary of the conversation so far"}]}]}`
		return append(bytes.Clone(body[:len(body)-2]), prompt...)
	}
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) { o.Rule = gate.Rule{Scope: config.ScopeAll} })
	for _, b := range [][]byte{summarize(oversizedBody(3)), summarize(oversizedBody(220))} {
		resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", claudeHeaders(), b)
		require.Equal(t, 200, resp.StatusCode)
	}
	rows := p.rows(t)
	require.Len(t, rows, 2)
	assert.Equal(t, "compaction: Claude Code's summary request passes as sent", rows[0].Passed)
	assert.Empty(t, rows[1].Passed, "the oversized summary request is gated")
	assert.Equal(t, int64(1), p.Health().Gated)
}
