// Package metrics is synaxi-proxyd's telemetry: one set of OpenTelemetry
// instruments, read by Prometheus at /metrics and, when an OTLP endpoint is
// configured, pushed to it over OTLP/HTTP.
//
// Invariants:
//   - Every label is bounded: the replica's name, the model (at most
//     MaxModels distinct values per process, later ones counted as "other"),
//     and fixed enumerations (outcome, token type). Never a session, agent
//     or request id.
//   - The token metrics move only in Row, which the proxy calls right after
//     a ledger row is written, with that row: summed over replicas each token
//     metric equals the sum of the same field over their ledgers.
//   - A nil *Metrics records nothing.
//
// Names (OpenTelemetry → Prometheus) are listed in docs/deploy.md.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/synaxi/synaxi/internal/ledger"
)

// Outcome is what the proxy did with a forwarded request.
type Outcome string

const (
	Passed       Outcome = "passed"       // forwarded as the client sent it
	Projected    Outcome = "projected"    // the projection was served
	FailOpen     Outcome = "fail_open"    // a fault: the original was forwarded
	Unauthorized Outcome = "unauthorized" // no or a wrong team token: answered 401, not forwarded
)

// MaxModels bounds the model label's distinct values; a process's later
// models are counted as OtherModel.
const MaxModels = 32

// OtherModel is the model label beyond MaxModels, or of a model name longer
// than 100 bytes.
const OtherModel = "other"

// Options configure Metrics.
type Options struct {
	Replica string // the replica label
	Version string // service.version of the OTLP resource
	// OTLPEndpoint, if set, is the base URL of an OTLP/HTTP receiver
	// (http://collector:4318); /v1/metrics is appended when the URL has no
	// path. OTEL_EXPORTER_OTLP_* variables configure headers, TLS and the
	// rest; OTEL_METRIC_EXPORT_INTERVAL the push interval.
	OTLPEndpoint string
}

// Metrics is the proxy's instruments. Create it with New.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler
	replica  attribute.KeyValue

	requests       metric.Int64Counter
	tokenUsage     metric.Int64Histogram
	tokens         metric.Int64Counter
	counterfactual metric.Int64Counter
	saved          metric.Int64UpDownCounter
	added          metric.Float64Histogram

	modelsMu sync.Mutex
	models   map[string]bool
}

// New builds the instruments and their Prometheus handler, and the OTLP
// push when o.OTLPEndpoint is set.
func New(ctx context.Context, o Options) (*Metrics, error) {
	reg := prometheus.NewRegistry()
	prom, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithoutTargetInfo(),
		otelprom.WithoutScopeInfo(),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, fmt.Errorf("metrics: prometheus exporter: %w", err)
	}
	opts := []sdkmetric.Option{
		sdkmetric.WithReader(prom),
		sdkmetric.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "synaxi-proxyd"),
			attribute.String("service.version", o.Version),
			attribute.String("service.instance.id", o.Replica),
		)),
	}
	if o.OTLPEndpoint != "" {
		u, err := url.Parse(o.OTLPEndpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("metrics: OTLP endpoint %q is not a URL with a host", o.OTLPEndpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/metrics"
		}
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(u.String()))
		if err != nil {
			return nil, fmt.Errorf("metrics: OTLP exporter: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	m := &Metrics{
		provider: sdkmetric.NewMeterProvider(opts...),
		handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		replica:  attribute.String("replica", o.Replica),
		models:   map[string]bool{},
	}
	meter := m.provider.Meter("github.com/synaxi/synaxi/proxyd")
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	m.requests, err = meter.Int64Counter("synaxi.proxy.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests the proxy answered, by outcome: passed, projected, fail_open, unauthorized."))
	add(err)
	m.tokenUsage, err = meter.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens billed per measured request, by gen_ai.token.type: input (every input token, cached or not) and output."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	add(err)
	m.tokens, err = meter.Int64Counter("synaxi.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens billed to measured requests, one series per ledger field: input (uncached), cache_read, cache_creation, output."))
	add(err)
	m.counterfactual, err = meter.Int64Counter("synaxi.counterfactual.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("count_tokens' input tokens of the original requests the proxy measured."))
	add(err)
	m.saved, err = meter.Int64UpDownCounter("synaxi.saved.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Counterfactual minus billed input over measured requests (negative when the projection cost more)."))
	add(err)
	m.added, err = meter.Float64Histogram("synaxi.proxy.added_latency", metric.WithUnit("s"),
		metric.WithDescription("Time from a request's arrival to its sending upstream: what the proxy adds before the upstream sees it."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// Handler serves the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Shutdown pushes what the OTLP exporter has not pushed yet and stops it.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m == nil {
		return nil
	}
	return m.provider.Shutdown(ctx)
}

// Request counts one answered request.
func (m *Metrics) Request(o Outcome, model string) {
	if m == nil {
		return
	}
	m.requests.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("outcome", string(o)), m.model(model), m.replica))
}

// AddedLatency records what the proxy added before sending a request.
func (m *Metrics) AddedLatency(o Outcome, d time.Duration) {
	if m == nil {
		return
	}
	m.added.Record(context.Background(), d.Seconds(), metric.WithAttributes(
		attribute.String("outcome", string(o)), m.replica))
}

// Row adds a written ledger row's tokens: the billed usage, the
// counterfactual when measured, and the saving when the row counts as
// measured (ledger.Row.Saved).
func (m *Metrics) Row(r *ledger.Row) {
	if m == nil {
		return
	}
	ctx := context.Background()
	model := m.model(r.Model)
	u := r.Usage
	typ := func(t string) metric.MeasurementOption {
		return metric.WithAttributes(attribute.String("gen_ai.token.type", t), model, m.replica)
	}
	for _, f := range []struct {
		typ string
		n   int64
	}{{"input", u.Input}, {"cache_read", u.CacheRead}, {"cache_creation", u.CacheWrite5m + u.CacheWrite1h}, {"output", u.Output}} {
		m.tokens.Add(ctx, f.n, typ(f.typ))
	}
	semconv := func(t string) metric.MeasurementOption {
		return metric.WithAttributes(attribute.String("gen_ai.token.type", t),
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "anthropic"),
			attribute.String("gen_ai.response.model", model.Value.AsString()), m.replica)
	}
	m.tokenUsage.Record(ctx, u.BilledInput(), semconv("input"))
	m.tokenUsage.Record(ctx, u.Output, semconv("output"))
	if r.Counterfactual != nil {
		m.counterfactual.Add(ctx, *r.Counterfactual, metric.WithAttributes(model, m.replica))
	}
	if saved, ok := r.Saved(); ok {
		m.saved.Add(ctx, saved, metric.WithAttributes(model, m.replica))
	}
}

// model is the bounded model label of name.
func (m *Metrics) model(name string) attribute.KeyValue {
	m.modelsMu.Lock()
	defer m.modelsMu.Unlock()
	switch {
	case m.models[name]:
	case len(name) > 100 || len(m.models) >= MaxModels:
		name = OtherModel
	default:
		m.models[name] = true
	}
	return attribute.String("model", name)
}
