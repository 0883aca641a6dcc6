package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/metrics"
)

// Scrape reads m's /metrics into metric families.
func Scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	return fams
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func i64(n int64) *int64 { return &n }

func TestRowTokens(t *testing.T) {
	m, err := metrics.New(context.Background(), metrics.Options{Replica: "r1"})
	require.NoError(t, err)
	rows := []*ledger.Row{
		{Model: "claude-sonnet-4-6", Status: 200, Projected: true, Counterfactual: i64(1000),
			Usage: ledger.Usage{Input: 10, CacheRead: 300, CacheWrite5m: 50, CacheWrite1h: 5, Output: 7}},
		{Model: "claude-sonnet-4-6", Status: 200, Counterfactual: i64(200),
			Usage: ledger.Usage{Input: 20, CacheRead: 100, CacheWrite5m: 90, Output: 3}}, // saved -10
		{Model: "claude-haiku-4-5", Status: 500, Usage: ledger.Usage{Input: 1}}, // no counterfactual, not measured
	}
	for _, r := range rows {
		m.Row(r)
	}
	fams := Scrape(t, m.Handler())
	got := map[string]float64{}
	for _, mm := range fams["synaxi_tokens_total"].GetMetric() {
		l := labels(mm)
		assert.Equal(t, "r1", l["replica"])
		got[l["model"]+"/"+l["gen_ai_token_type"]] = mm.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{
		"claude-sonnet-4-6/input": 30, "claude-sonnet-4-6/cache_read": 400, "claude-sonnet-4-6/cache_creation": 145, "claude-sonnet-4-6/output": 10,
		"claude-haiku-4-5/input": 1, "claude-haiku-4-5/cache_read": 0, "claude-haiku-4-5/cache_creation": 0, "claude-haiku-4-5/output": 0,
	}, got)
	usage := map[string]float64{}
	for _, mm := range fams["gen_ai_client_token_usage"].GetMetric() {
		l := labels(mm)
		usage[l["gen_ai_response_model"]+"/"+l["gen_ai_token_type"]] += mm.GetHistogram().GetSampleSum()
		assert.Equal(t, "chat", l["gen_ai_operation_name"])
	}
	assert.Equal(t, float64(30+400+145), usage["claude-sonnet-4-6/input"], "semconv input counts every input token")
	assert.Equal(t, float64(10), usage["claude-sonnet-4-6/output"])
	cf := fams["synaxi_counterfactual_tokens_total"].GetMetric()
	require.Len(t, cf, 1)
	assert.Equal(t, float64(1200), cf[0].GetCounter().GetValue())
	saved := fams["synaxi_saved_tokens"].GetMetric()
	require.Len(t, saved, 1)
	assert.Equal(t, float64(1000-365+200-210), saved[0].GetGauge().GetValue())
}

// Labels stay bounded: past MaxModels models, the rest count as "other";
// no label but the fixed ones exists.
func TestLabelsBounded(t *testing.T) {
	m, err := metrics.New(context.Background(), metrics.Options{Replica: "r"})
	require.NoError(t, err)
	for i := range 500 {
		model := fmt.Sprintf("model-%d", i)
		m.Row(&ledger.Row{Model: model, Status: 200, Usage: ledger.Usage{Input: 1}})
		m.Request(metrics.Passed, model)
	}
	m.Request(metrics.Passed, string(bytes.Repeat([]byte("x"), 200)))
	allowed := map[string]bool{"model": true, "replica": true, "outcome": true, "gen_ai_token_type": true,
		"gen_ai_operation_name": true, "gen_ai_provider_name": true, "gen_ai_response_model": true, "le": true}
	for name, fam := range Scrape(t, m.Handler()) {
		models := map[string]bool{}
		for _, mm := range fam.GetMetric() {
			for k, v := range labels(mm) {
				assert.True(t, allowed[k], "%s has label %s", name, k)
				if k == "model" || k == "gen_ai_response_model" {
					models[v] = true
				}
			}
		}
		assert.LessOrEqual(t, len(models), metrics.MaxModels+1, name)
		if len(models) > 0 {
			assert.True(t, models[metrics.OtherModel], name)
		}
	}
}

func TestNilRecordsNothing(t *testing.T) {
	var m *metrics.Metrics
	m.Request(metrics.Passed, "x")
	m.Row(&ledger.Row{})
	assert.NoError(t, m.Shutdown(context.Background()))
}

// With an OTLP endpoint, the instruments are pushed there (at the latest on
// Shutdown) as OTLP/HTTP protobuf to /v1/metrics.
func TestOTLPPush(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "none")
	m, err := metrics.New(context.Background(), metrics.Options{Replica: "r1", OTLPEndpoint: srv.URL})
	require.NoError(t, err)
	m.Row(&ledger.Row{Model: "claude-sonnet-4-6", Status: 200, Usage: ledger.Usage{Input: 5, Output: 6}})
	require.NoError(t, m.Shutdown(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	assert.Equal(t, "POST /v1/metrics application/x-protobuf", got[0])
	all := bytes.Join(bodies, nil)
	for _, want := range []string{"gen_ai.client.token.usage", "synaxi.tokens", "gen_ai.token.type", "claude-sonnet-4-6", "synaxi-proxyd", "r1"} {
		assert.Contains(t, string(all), want)
	}
	_, err = metrics.New(context.Background(), metrics.Options{OTLPEndpoint: "collector:4318"})
	assert.ErrorContains(t, err, "not a URL with a host")
}
