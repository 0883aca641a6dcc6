package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// The token metrics are the ledger's sums, field by field; requests are
// counted by outcome; no label carries a session, agent or request id.
func TestMetricsMatchLedger(t *testing.T) {
	up := newUpstream(t)
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream)
	})
	p := startProxy(t, up.URL, func(o *server.Options) {
		o.Projector = projectorFunc(func(_ context.Context, in *gate.Input) (*gate.Output, error) {
			if strings.Contains(string(in.Body.Bytes()), "fail") {
				return nil, fmt.Errorf("no")
			}
			return &gate.Output{Body: []byte(`{"model":"claude-sonnet-4-6","messages":[{"role":"user","content":"p"}]}`)}, nil
		})
	})
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := claudeHeaders()
			h.Set("X-Claude-Code-Session-Id", fmt.Sprintf("sess-%d", i%5))
			h.Set("X-Claude-Code-Agent-Id", fmt.Sprintf("agent-%d", i))
			body := workerBody(`[{"role":"user","content":"x"}]`)
			switch i % 3 {
			case 1:
				body = workerBody(`[{"role":"user","content":"fail"}]`)
			case 2:
				body = []byte(`{"model":"claude-haiku-4-5","messages":[]}`)
			}
			resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, body)
			assert.Equal(t, 200, resp.StatusCode)
		}()
	}
	wg.Wait()
	do(t, rawClient(), "GET", p.URL+"/v1/models", nil, nil)
	rows := p.rows(t)
	require.Len(t, rows, 16)

	want := map[string]float64{}
	var cf float64
	outcomes := map[string]float64{"passed": 8 + 1}
	for _, r := range rows {
		want["input"] += float64(r.Usage.Input)
		want["cache_read"] += float64(r.Usage.CacheRead)
		want["cache_creation"] += float64(r.Usage.CacheWrite5m + r.Usage.CacheWrite1h)
		want["output"] += float64(r.Usage.Output)
		if r.Counterfactual != nil {
			cf += float64(*r.Counterfactual)
		}
		switch {
		case r.FailOpen:
			outcomes["fail_open"]++
		case r.Projected:
			outcomes["projected"]++
		}
	}
	assert.Equal(t, float64(8), outcomes["fail_open"])
	assert.Equal(t, float64(8), outcomes["projected"])

	resp, body := do(t, rawClient(), "GET", p.URL+"/metrics", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	for _, id := range []string{"sess-", "agent-", "req_", "msg_"} {
		assert.NotContains(t, string(body), id, "no session, agent or request id in a label")
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	got := map[string]float64{}
	for _, m := range fams["synaxi_tokens_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "gen_ai_token_type" {
				got[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	assert.Equal(t, want, got)
	var gotCF float64
	for _, m := range fams["synaxi_counterfactual_tokens_total"].GetMetric() {
		gotCF += m.GetCounter().GetValue()
	}
	assert.Equal(t, cf, gotCF)
	gotOutcomes := map[string]float64{}
	for _, m := range fams["synaxi_proxy_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" {
				gotOutcomes[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	assert.Equal(t, outcomes, gotOutcomes)
	var latencies uint64
	for _, m := range fams["synaxi_proxy_added_latency_seconds"].GetMetric() {
		latencies += m.GetHistogram().GetSampleCount()
	}
	assert.Equal(t, uint64(n+1), latencies, "one added latency per forwarded request")
}
