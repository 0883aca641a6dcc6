package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/convlog"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/measure"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

func TestPassThroughBytesAndHeaders(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	c := rawClient()

	big := make([]byte, 30<<20)
	_, _ = rand.Read(big)
	var gzBody bytes.Buffer
	zw := gzip.NewWriter(&gzBody)
	_, _ = zw.Write([]byte(`{"model":"m","messages":[]}`))
	_ = zw.Close()

	tests := []struct {
		name, method, path string
		header             http.Header
		body               []byte
	}{
		{"chat request", "POST", "/v1/messages?beta=true", nil, []byte(`{"model":"claude-opus-4-8","system":[{"type":"text","text":"You are Claude Code"}],"messages":[{"role":"user","content":"héllo"}]}`)},
		{"no system", "POST", "/v1/messages", nil, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)},
		{"unknown block types", "POST", "/v1/messages?beta=true", nil, []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"hologram","data":"∆"},{"type":"text","text":"x"}]}]}`)},
		{"malformed JSON", "POST", "/v1/messages", nil, []byte(`{"model":"m","messages":[{"role":`)},
		{"non-UTF-8", "POST", "/v1/messages", nil, []byte("{\"system\":\"\xff\xfe\xc3\x28 SYNAXI\",\"messages\":[]}")},
		{"30 MB random", "POST", "/v1/messages?beta=true", nil, big},
		{"gzip request body", "POST", "/v1/messages", http.Header{"Content-Encoding": {"gzip"}}, gzBody.Bytes()},
		{"count_tokens", "POST", "/v1/messages/count_tokens?beta=true", nil, []byte(`{"model":"m","messages":[]}`)},
		{"startup probe", "HEAD", "/api/hello", nil, nil},
		{"models", "GET", "/v1/models?limit=1000", nil, nil},
		{"other method", "DELETE", "/v1/files/abc", nil, nil},
		{"put", "PUT", "/some/unknown/path?a=1&b=%20", nil, []byte("raw \x00 bytes")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := claudeHeaders()
			h.Set("X-Claude-Code-Agent-Id", "agent-7")
			h.Set("X-Claude-Code-Parent-Agent-Id", "agent-1")
			h.Set("Accept-Encoding", "br, gzip, deflate")
			for k, v := range tt.header {
				h[k] = v
			}
			before := len(up.requests(""))
			resp, _ := do(t, c, tt.method, p.URL+tt.path, h, tt.body)
			require.Equal(t, 200, resp.StatusCode)
			reqs := up.requests("")
			require.Len(t, reqs, before+1)
			got := reqs[before]
			path, query, _ := strings.Cut(tt.path, "?")
			assert.Equal(t, tt.method, got.Method)
			assert.Equal(t, path, got.Path)
			assert.Equal(t, query, got.RawQuery)
			assert.True(t, bytes.Equal(tt.body, got.Body) || len(tt.body) == 0 && len(got.Body) == 0, "body changed")
			for k, v := range h {
				assert.Equal(t, v, got.Header[k], k)
			}
			assert.Equal(t, strings.TrimPrefix(up.URL, "http://"), got.Host)
		})
	}
	// Nothing was gated: no ledger rows, no probes.
	assert.Empty(t, p.rows(t))
	assert.Len(t, up.requests("/v1/messages/count_tokens"), 1, "count_tokens is only probed for gated requests")
	h := p.Health()
	assert.Equal(t, int64(len(tests)), h.Requests)
	assert.Equal(t, int64(7), h.Messages)
	assert.Equal(t, int64(0), h.Gated)
}

func TestHopByHopHeaders(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	h := claudeHeaders()
	h.Set("Connection", "X-Drop-Me")
	h.Set("X-Drop-Me", "1")
	h.Set("Proxy-Authorization", "Basic eA==")
	h.Set("X-Forwarded-For", "10.1.2.3")
	h.Set("Forwarded", "for=10.1.2.3")
	resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, []byte(`{}`))
	require.Equal(t, 200, resp.StatusCode)
	got := up.requests("/v1/messages")[0]
	assert.Empty(t, got.Header.Get("X-Drop-Me"))
	assert.Empty(t, got.Header.Get("Proxy-Authorization"))
	assert.Equal(t, "sk-ant-api03-SECRETAPIKEY", got.Header.Get("X-Api-Key"))
	assert.Equal(t, []string{"10.1.2.3"}, got.Header.Values("X-Forwarded-For"), "the client's own, nothing added")
	assert.Equal(t, "for=10.1.2.3", got.Header.Get("Forwarded"))
	assert.Empty(t, got.Header.Get("X-Forwarded-Host"))
}

func TestResponsePassThrough(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"type":"message","model":"claude-haiku-4-5","usage":{"input_tokens":3,"output_tokens":4}}`))
	_ = zw.Close()

	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    []byte
		usage   ledger.Usage
		problem bool
	}{
		{"gzip body stays compressed", 200, map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"}, gz.Bytes(), ledger.Usage{Input: 3, Output: 4}, false},
		{"non-UTF-8 body", 200, map[string]string{"Content-Type": "application/octet-stream"}, []byte("\xff\xfe\x00raw"), ledger.Usage{}, true},
		{"400", 400, map[string]string{"Content-Type": "application/json"}, []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: tool_use ids were found without tool_result blocks immediately after"}}`), ledger.Usage{}, true},
		{"429 retry-after", 429, map[string]string{"Content-Type": "application/json", "Retry-After": "17", "Anthropic-Ratelimit-Unified-Reset": "1748570400"}, []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`), ledger.Usage{}, true},
		{"500", 500, map[string]string{"Content-Type": "application/json"}, []byte(`{"type":"error","error":{"type":"api_error","message":"boom"}}`), ledger.Usage{}, true},
		{"529", 529, map[string]string{"Content-Type": "application/json", "X-Should-Retry": "true"}, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ledger.Usage{}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Request-Id", fmt.Sprintf("req_%d", i))
				w.WriteHeader(tt.status)
				_, _ = w.Write(tt.body)
			})
			h := claudeHeaders()
			h.Set("Accept-Encoding", "gzip")
			resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", h, workerBody(`[{"role":"user","content":"x"}]`))
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.body, got)
			for k, v := range tt.header {
				assert.Equal(t, v, resp.Header.Get(k), k)
			}
			rows := p.rows(t)
			row := rows[len(rows)-1]
			assert.Equal(t, tt.status, row.Status)
			assert.Equal(t, fmt.Sprintf("req_%d", i), row.Upstrm)
			assert.Equal(t, tt.usage, row.Usage)
		})
	}
}

const sseStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-6","usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":1}}}` + "\n\n" +
	"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}` + "\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func TestStreamingFirstEventBeforeUpstreamFinishes(t *testing.T) {
	up := newUpstream(t)
	release := make(chan struct{})
	first := strings.Index(sseStream, "event: ping")
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream[:first])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, sseStream[first:])
	})
	p := startProxy(t, up.URL, nil)
	req, _ := http.NewRequest("POST", p.URL+"/v1/messages?beta=true", bytes.NewReader(workerBody(`[{"role":"user","content":"x"}]`)))
	req.Header = claudeHeaders()
	resp, err := rawClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	buf := make([]byte, first)
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err, "the first event must arrive while the upstream is still streaming")
	assert.Equal(t, sseStream[:first], string(buf))
	close(release)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, sseStream, string(buf)+string(rest))
	rows := p.rows(t)
	require.Len(t, rows, 1)
	assert.Equal(t, ledger.Usage{Input: 5, CacheWrite5m: 100, CacheRead: 2000, Output: 9}, rows[0].Usage)
	assert.Equal(t, "claude-sonnet-4-6", rows[0].Model)
}

func TestStreamCutMidEvent(t *testing.T) {
	up := newUpstream(t)
	cut := strings.Index(sseStream, "event: message_delta") + 20
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream[:cut])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	p := startProxy(t, up.URL, nil)
	req, _ := http.NewRequest("POST", p.URL+"/v1/messages", bytes.NewReader(workerBody(`[{"role":"user","content":"x"}]`)))
	resp, err := rawClient().Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "the client must see the cut, not a clean end")
	assert.Equal(t, sseStream[:cut], string(got))
	rows := p.rows(t)
	require.Len(t, rows, 1)
	assert.Equal(t, int64(2000), rows[0].Usage.CacheRead)
	// The proxy survives and serves the next request.
	up.set(nil)
	resp2, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", nil, []byte(`{}`))
	assert.Equal(t, 200, resp2.StatusCode)
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	up := newUpstream(t)
	cancelled := make(chan struct{})
	started := make(chan struct{})
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream[:40])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(cancelled)
	})
	p := startProxy(t, up.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/messages", bytes.NewReader(workerBody(`[{"role":"user","content":"x"}]`)))
	resp, err := rawClient().Do(req)
	require.NoError(t, err)
	<-started
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request not cancelled after the client went away")
	}
	require.Len(t, p.rows(t), 1)
}

func TestUpstreamUnreachableAndTimeout(t *testing.T) {
	// Nothing listens on a port we bound and closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	ln.Close()
	p := startProxy(t, dead, nil)
	resp, body := do(t, rawClient(), "POST", p.URL+"/v1/messages", nil, []byte(`{}`))
	assert.Equal(t, 502, resp.StatusCode)
	assert.Contains(t, string(body), `"type":"api_error"`)

	up := newUpstream(t)
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	slow := startProxy(t, up.URL, func(o *server.Options) {
		tr := server.NewTransport()
		tr.ResponseHeaderTimeout = 200 * time.Millisecond
		o.Transport = tr
	})
	resp, body = do(t, rawClient(), "POST", slow.URL+"/v1/messages", nil, workerBody(`[{"role":"user","content":"x"}]`))
	assert.Equal(t, 504, resp.StatusCode)
	assert.Contains(t, string(body), `"type":"timeout_error"`)
	rows := slow.rows(t)
	require.Len(t, rows, 1)
	assert.Equal(t, 504, rows[0].Status)
}

func TestGatedRequestMeasured(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	h := claudeHeaders()
	h.Set("X-Claude-Code-Agent-Id", "w1")
	first := workerBody(`[{"role":"user","content":"fix the bug"}]`)
	second := workerBody(`[{"role":"user","content":"fix the bug"},{"role":"assistant","content":"ok"},{"role":"user","content":"go on"}]`)
	for _, b := range [][]byte{first, second} {
		resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", h, b)
		require.Equal(t, 200, resp.StatusCode)
	}
	rows := p.rows(t)
	require.Len(t, rows, 2)
	for i, r := range rows {
		assert.True(t, r.Projected, "identity projection counts as projected")
		assert.False(t, r.FailOpen)
		assert.Equal(t, "sess-1", r.Session)
		assert.Equal(t, "w1", r.Agent)
		assert.Equal(t, ledger.Usage{Input: 11, CacheWrite5m: 22, CacheRead: 33, Output: 44}, r.Usage)
		require.NotNil(t, r.Counterfactual, i)
		require.NotNil(t, r.Projection)
		assert.Equal(t, "identity", r.Projection.Note)
	}
	probes := up.requests("/v1/messages/count_tokens")
	require.Len(t, probes, 3, "the first request's, and the second's with the conversation as the first sent it")
	// Each probe runs beside its request; they may reach the upstream in
	// any order.
	sort.SliceStable(probes, func(i, j int) bool { return len(probes[i].Body) < len(probes[j].Body) })
	assert.Equal(t, probes[0].Body, probes[1].Body, "the second request's cut back to the first is the first's count body")
	assert.Equal(t, "beta=true", probes[0].RawQuery)
	assert.Equal(t, "oauth-2025-04-20,context-management-2025-06-27", probes[0].Header.Get("Anthropic-Beta"))
	assert.Equal(t, "Bearer sk-ant-oat01-SECRETOAUTHTOKEN", probes[0].Header.Get("Authorization"))
	assert.NotContains(t, string(probes[0].Body), "max_tokens")
	assert.NotContains(t, string(probes[0].Body), "metadata")
	assert.Contains(t, string(probes[0].Body), "SYNAXI-PROJECTION-WORKER")
	cf0 := int64(len(probes[0].Body) / 4)
	assert.Equal(t, cf0, *rows[0].Counterfactual)
	require.NotNil(t, rows[0].CounterfactualCached)
	assert.Equal(t, int64(0), *rows[0].CounterfactualCached, "a conversation's first request has nothing cached")
	require.NotNil(t, rows[1].CounterfactualCached)
	assert.Equal(t, cf0, *rows[1].CounterfactualCached)
	// The served request is the original (identity projection).
	assert.Equal(t, first, up.requests("/v1/messages")[0].Body)

	h2 := p.Health()
	assert.Equal(t, int64(2), h2.Gated)
	assert.Equal(t, int64(2), h2.Projected)
	sum, err := ledger.ReadSummary(p.Dirs, "sess-1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), sum.Measured)
}

func TestProbeFailures(t *testing.T) {
	up := newUpstream(t)
	up.setCount(func(w http.ResponseWriter, body []byte) {
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`)
	})
	p := startProxy(t, up.URL, nil)
	resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), workerBody(`[{"role":"user","content":"x"}]`))
	require.Equal(t, 200, resp.StatusCode)
	off := startProxy(t, up.URL, func(o *server.Options) { o.CountTokens = false })
	resp, _ = do(t, rawClient(), "POST", off.URL+"/v1/messages", claudeHeaders(), workerBody(`[{"role":"user","content":"x"}]`))
	require.Equal(t, 200, resp.StatusCode)

	for _, c := range []struct {
		p      *proxy
		reason string
	}{{p, "count_tokens answered 404 not_found_error"}, {off, "count_tokens disabled (proxy.count_tokens = false)"}} {
		rows := c.p.rows(t)
		require.Len(t, rows, 1)
		assert.Nil(t, rows[0].Counterfactual)
		assert.Equal(t, c.reason, rows[0].CounterfactualNull)
		assert.Equal(t, int64(11), rows[0].Usage.Input, "billed usage is still recorded")
		assert.Equal(t, int64(1), c.p.Health().ProbeFailures)
		sum, err := ledger.ReadSummary(c.p.Dirs, "sess-1")
		require.NoError(t, err)
		assert.Equal(t, int64(1), sum.ProbeFailures)
		assert.Equal(t, int64(0), sum.Measured)
	}
	assert.Len(t, up.requests("/v1/messages/count_tokens"), 1, "no probe when count_tokens is off")
}

type projectorFunc func(context.Context, *gate.Input) (*gate.Output, error)

func (f projectorFunc) Project(ctx context.Context, in *gate.Input) (*gate.Output, error) {
	return f(ctx, in)
}

func TestFailOpen(t *testing.T) {
	worker := workerBody(`[{"role":"user","content":"x"}]`)
	tests := []struct {
		name   string
		proj   projectorFunc
		body   []byte
		all    bool
		reason string
	}{
		{"panic", func(context.Context, *gate.Input) (*gate.Output, error) { panic("index out of range") }, worker, false, "projection panic: index out of range"},
		{"error", func(context.Context, *gate.Input) (*gate.Output, error) { return nil, errors.New("no world") }, worker, false, "project: no world"},
		{"empty output", func(context.Context, *gate.Input) (*gate.Output, error) { return &gate.Output{}, nil }, worker, false, "project: empty output"},
		{"malformed gated body", func(context.Context, *gate.Input) (*gate.Output, error) { panic("must not be called") }, []byte(`{"tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}],"x":tru}`), true, "gated request body is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, up.URL, func(o *server.Options) {
				o.Projector = tt.proj
				if tt.all {
					o.Rule.Scope = config.ScopeAll
				}
			})
			resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", claudeHeaders(), tt.body)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, tt.body, up.requests("/v1/messages")[0].Body, "the original bytes are forwarded")
			assert.Equal(t, int64(1), p.Health().FailOpens)
			rows := p.rows(t)
			require.Len(t, rows, 1)
			assert.True(t, rows[0].FailOpen)
			assert.False(t, rows[0].Projected)
			assert.Equal(t, tt.reason, rows[0].FailOpenReason)
		})
	}
}

// A panic in the gate itself (not in the projector) forwards the original
// request, counts a fail-open, and still leaves a ledger row, unmeasured.
func TestGatePanicFailsOpen(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	server.SetTestHook(p.Server, func(stage string) {
		if stage == "gate" {
			panic("gate fault")
		}
	})
	for _, body := range [][]byte{workerBody(`[{"role":"user","content":"x"}]`), []byte(`{"model":"m","messages":[]}`)} {
		resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), body)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Contains(t, string(got), `"id":"msg_1"`, "the upstream's answer reaches the client")
	}
	sent := up.requests("/v1/messages")
	require.Len(t, sent, 2)
	assert.Equal(t, workerBody(`[{"role":"user","content":"x"}]`), sent[0].Body, "the original bytes are forwarded")
	assert.Equal(t, `{"model":"m","messages":[]}`, string(sent[1].Body))
	assert.Empty(t, up.requests("/v1/messages/count_tokens"), "nothing is measured after a gate fault")
	rows := p.rows(t)
	require.Len(t, rows, 2, "whether or not it was a worker request, the fault leaves a row")
	for _, r := range rows {
		assert.True(t, r.FailOpen)
		assert.False(t, r.Projected)
		assert.Equal(t, "panic in gate: gate fault", r.FailOpenReason)
		assert.Nil(t, r.Counterfactual)
		assert.Equal(t, "not measured: panic in gate: gate fault", r.CounterfactualNull)
		assert.Equal(t, int64(11), r.Usage.Input, "billed usage is still recorded")
	}
	h := p.Health()
	assert.Equal(t, int64(2), h.FailOpens)
	assert.Equal(t, int64(2), h.Gated)
}

func TestProjectedServeWritesVisibility(t *testing.T) {
	up := newUpstream(t)
	served := []byte(`{"model":"claude-sonnet-4-6","max_tokens":100,"messages":[{"role":"user","content":"short"}]}`)
	p := startProxy(t, up.URL, func(o *server.Options) {
		o.Projector = projectorFunc(func(_ context.Context, in *gate.Input) (*gate.Output, error) {
			return &gate.Output{
				Body:       served,
				Stats:      ledger.ProjectionStats{OriginalBytes: len(in.Body.Bytes()), ServedBytes: len(served), Evicted: 3},
				Visibility: &visibility.Export{Files: map[string]visibility.File{"/w/a.go": {Evicted: true}}},
			}, nil
		})
	})
	h := claudeHeaders()
	h.Set("X-Claude-Code-Agent-Id", "w9")
	orig := workerBody(`[{"role":"user","content":"x"}]`)
	resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, orig)
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, served, up.requests("/v1/messages")[0].Body)
	rows := p.rows(t)
	require.Len(t, rows, 1)
	assert.True(t, rows[0].Projected)
	assert.Equal(t, 3, rows[0].Projection.Evicted)
	// The counterfactual is measured on the original, not the served body.
	probe := up.requests("/v1/messages/count_tokens")[0]
	assert.Contains(t, string(probe.Body), "SYNAXI-PROJECTION-WORKER")
	e, err := visibility.Read(p.Dirs, "sess-1", "w9")
	require.NoError(t, err)
	assert.True(t, e.Files["/w/a.go"].Evicted)
	assert.Equal(t, "w9", e.Agent)
}

// A context's rows follow its requests' order even when the first probe
// answers last; the second row's cached count is the first's count body,
// read off the second request.
func TestRowsFollowRequestOrder(t *testing.T) {
	up := newUpstream(t)
	release := make(chan struct{})
	var freed sync.Once
	free := func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free) // before the upstream closes, should the test stop early
	probed := make(chan struct{})
	var once sync.Once
	up.setCount(func(w http.ResponseWriter, body []byte) {
		first := false
		once.Do(func() { first = true; close(probed) })
		if first {
			<-release // the first request's probe answers after the second's row is due
		}
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body))
	})
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		<-probed // so the first probe to arrive is the first request's
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","model":"claude-sonnet-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":1}}`)
	})
	p := startProxy(t, up.URL, nil)
	h := claudeHeaders()
	h.Set("X-Claude-Code-Agent-Id", "w1")
	first := workerBody(`[{"role":"user","content":"fix the bug"}]`)
	second := workerBody(`[{"role":"user","content":"fix the bug"},{"role":"assistant","content":"ok"},{"role":"user","content":"go on"}]`)
	for _, b := range [][]byte{first, second} {
		resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, b)
		require.Equal(t, 200, resp.StatusCode)
	}
	require.Eventually(t, func() bool { return len(up.requests("/v1/messages/count_tokens")) == 3 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // room for a wrongly ordered row to be written
	free()
	rows := p.rows(t)
	require.Len(t, rows, 2)
	cf := func(b []byte) int64 {
		n, err := measure.CountBody(gate.Parse(b))
		require.NoError(t, err)
		return int64(len(n))
	}
	require.NotNil(t, rows[0].Counterfactual)
	assert.Equal(t, cf(first), *rows[0].Counterfactual, "the first request's row comes first")
	require.NotNil(t, rows[0].CounterfactualCached)
	assert.Equal(t, int64(0), *rows[0].CounterfactualCached)
	require.NotNil(t, rows[1].CounterfactualCached)
	assert.Equal(t, cf(first), *rows[1].CounterfactualCached, "the second request could have read the first one's prefix")
}

func TestModelRewrite(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) { o.UpstreamModel = "qwen3-coder:30b" })
	do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), workerBody(`[{"role":"user","content":"x"}]`))
	do(t, rawClient(), "POST", p.URL+"/v1/messages", nil, []byte(`{"model":"claude-opus-4-8","messages":[]}`))
	do(t, rawClient(), "POST", p.URL+"/v1/messages/count_tokens", nil, []byte(`{"model":"claude-opus-4-8","messages":[]}`))
	do(t, rawClient(), "POST", p.URL+"/v1/messages", nil, []byte(`not json "model"`))
	p.Wait() // the worker request's probe runs beside it and may end after it
	msgs := up.requests("/v1/messages")
	require.Len(t, msgs, 3)
	assert.Contains(t, string(msgs[0].Body), `"model":"qwen3-coder:30b"`)
	assert.Equal(t, `{"model":"qwen3-coder:30b","messages":[]}`, string(msgs[1].Body))
	assert.Equal(t, `not json "model"`, string(msgs[2].Body))
	counts := up.requests("/v1/messages/count_tokens")
	require.Len(t, counts, 2)
	for _, c := range counts {
		assert.Contains(t, string(c.Body), `"model":"qwen3-coder:30b"`)
	}
}

func TestConcurrentRequestsEveryRow(t *testing.T) {
	up := newUpstream(t)
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream)
	})
	p := startProxy(t, up.URL, nil)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := claudeHeaders()
			h.Set("X-Claude-Code-Session-Id", fmt.Sprintf("s%d", i%4))
			body := []byte(`{"model":"m","messages":[]}`)
			if i%2 == 0 {
				body = workerBody(`[{"role":"user","content":"x"}]`)
			}
			resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, body)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, sseStream, string(got))
		}()
	}
	wg.Wait()
	rows := p.rows(t)
	require.Len(t, rows, n/2, "one row per gated request")
	for _, r := range rows {
		assert.Equal(t, int64(9), r.Usage.Output)
		assert.NotNil(t, r.Counterfactual)
	}
	var total int64
	sums, err := ledger.Sessions(p.Dirs)
	require.NoError(t, err)
	for _, s := range sums {
		total += s.Requests
	}
	assert.Equal(t, int64(n/2), total)
	assert.Equal(t, int64(0), p.Health().LedgerErrors)
}

func TestConversationLogHasNoCredentials(t *testing.T) {
	up := newUpstream(t)
	logPath := t.TempDir() + "/conv.jsonl"
	p := startProxy(t, up.URL, func(o *server.Options) { o.ConvLog = convlog.New(logPath, 1<<20) })
	h := claudeHeaders()
	body := workerBody(`[{"role":"user","content":"my key is in the header, not here"}]`)
	do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", h, body)
	do(t, rawClient(), "POST", p.URL+"/v1/messages", h, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	p.Wait()
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	fi, err := os.Stat(logPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for _, secret := range []string{"SECRETAPIKEY", "SECRETOAUTHTOKEN", "sk-ant", "Bearer", "my key is in the header"} {
		assert.NotContains(t, string(data), secret)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, string(data), `"gated":true`)
	assert.Contains(t, string(data), `"gated":false`)
	assert.Contains(t, string(data), `"projection":{`)
}

func TestHealth(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, nil)
	do(t, rawClient(), "POST", p.URL+"/v1/messages", nil, []byte(`{}`))
	resp, body := do(t, rawClient(), "GET", p.URL+"/health", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	for _, want := range []string{`"status":"ok"`, `"version":"test"`, `"requests":1`, `"messages":1`, `"fail_opens":0`, `"probe_failures":0`, `"ledger_errors":0`, `"projection":"worker"`, `"upstream":"` + up.URL + `"`} {
		assert.Contains(t, string(body), want)
	}
	assert.Empty(t, up.requests("/health"), "health is answered by the proxy")
}

func TestShutdownDrainsStreams(t *testing.T) {
	up := newUpstream(t)
	release := make(chan struct{})
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream[:100])
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, sseStream[100:])
	})
	p := startProxy(t, up.URL, nil)
	req, _ := http.NewRequest("POST", p.URL+"/v1/messages", bytes.NewReader(workerBody(`[{"role":"user","content":"x"}]`)))
	resp, err := rawClient().Do(req)
	require.NoError(t, err)
	br := bufio.NewReader(resp.Body)
	_, err = br.Peek(10)
	require.NoError(t, err)
	stopped := make(chan struct{})
	go func() { p.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("shutdown returned while a stream was in flight")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, sseStream, string(rest))
	<-stopped
	require.Len(t, p.rows(t), 1)
}

func TestIdleExit(t *testing.T) {
	up := newUpstream(t)
	u := startProxy(t, up.URL, nil) // for its Dirs only
	s, err := server.New(server.Options{Upstream: mustURL(up.URL), Dirs: u.Dirs, IdleExit: 150 * time.Millisecond})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, s.Serve(context.Background(), ln))
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8787": true, "localhost:1": true, "[::1]:9": true, "127.9.9.9:1": true,
		":8787": false, "0.0.0.0:1": false, "192.168.1.2:80": false, "[::]:1": false, "example.com:80": false,
	} {
		assert.Equal(t, want, server.IsLoopback(addr), addr)
	}
}

func TestProjectedRejectedRetriesOriginal(t *testing.T) {
	up := newUpstream(t)
	bad := []byte(`{"model":"m","messages":[{"role":"assistant","content":"prefill"}]}`)
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Equal(body, bad) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prefill not supported"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream)
	})
	p := startProxy(t, up.URL, func(o *server.Options) {
		o.Projector = projectorFunc(func(context.Context, *gate.Input) (*gate.Output, error) {
			return &gate.Output{Body: bad}, nil
		})
	})
	orig := workerBody(`[{"role":"user","content":"x"}]`)
	resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", claudeHeaders(), orig)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, sseStream, string(got))
	msgs := up.requests("/v1/messages")
	require.Len(t, msgs, 2)
	assert.Equal(t, bad, msgs[0].Body)
	assert.Equal(t, orig, msgs[1].Body)
	assert.Equal(t, "beta=true", msgs[1].RawQuery)
	assert.Equal(t, "sk-ant-api03-SECRETAPIKEY", msgs[1].Header.Get("X-Api-Key"))
	rows := p.rows(t)
	require.Len(t, rows, 1)
	assert.True(t, rows[0].FailOpen)
	assert.False(t, rows[0].Projected)
	assert.Equal(t, "upstream rejected the projected request: prefill not supported", rows[0].FailOpenReason)
	assert.Equal(t, int64(9), rows[0].Usage.Output)
	assert.Equal(t, int64(1), p.Health().FailOpens)

	// An original the upstream rejects too gets the upstream's answer.
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`)
	})
	resp, got = do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), orig)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Contains(t, string(got), `"message":"no"`)
}

// Every request sent upstream passes outbound exactly once: the team token
// never leaves the proxy, proxy.upstream_model is in every JSON body, the
// projection is what is sent, once per gated request. TestRewriteOnce holds
// the call sites.
func TestOutboundOnce(t *testing.T) {
	up := newUpstream(t)
	rejected := []byte(`{"model":"claude-sonnet-4-6","messages":[{"role":"assistant","content":"prefill"}]}`)
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte("prefill")) {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prefill"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseStream)
	})
	var projections atomic.Int64
	var outbound atomic.Int64
	p := startProxy(t, up.URL, func(o *server.Options) {
		o.UpstreamModel = "qwen3-coder:30b"
		o.Projector = projectorFunc(func(_ context.Context, in *gate.Input) (*gate.Output, error) {
			projections.Add(1)
			if bytes.Contains(in.Body.Bytes(), []byte("reject me")) {
				return &gate.Output{Body: rejected}, nil
			}
			return &gate.Output{Body: []byte(`{"model":"claude-sonnet-4-6","messages":[{"role":"user","content":"projected"}]}`)}, nil
		})
	})
	server.SetTestHook(p.Server, func(stage string) {
		if stage == "outbound" {
			outbound.Add(1)
		}
	})
	h := claudeHeaders()
	h.Set(server.TokenHeader, "team-secret")
	c := rawClient()
	do(t, c, "GET", p.URL+"/v1/models", h, nil)                                                      // streamed through
	do(t, c, "POST", p.URL+"/v1/messages", h, []byte(`{"model":"m","messages":[]}`))                 // not gated
	do(t, c, "POST", p.URL+"/v1/messages", h, []byte(`not json`))                                    // not gated, not JSON
	do(t, c, "POST", p.URL+"/v1/messages/count_tokens", h, []byte(`{"model":"m","messages":[]}`))    // the client's count
	do(t, c, "POST", p.URL+"/v1/messages", h, workerBody(`[{"role":"user","content":"x"}]`))         // projected, probed
	do(t, c, "POST", p.URL+"/v1/messages", h, workerBody(`[{"role":"user","content":"reject me"}]`)) // projected, rejected, retried
	p.Wait()

	sent := up.requests("")
	require.Len(t, sent, 9, "5 forwarded, 2 probes, 1 rejected projection and its retry")
	assert.Equal(t, int64(len(sent)), outbound.Load(), "one outbound per request sent upstream")
	assert.Equal(t, int64(2), projections.Load(), "one projection per gated request")
	for _, r := range sent {
		assert.Empty(t, r.Header.Values(server.TokenHeader), "%s %s carried the team token", r.Method, r.Path)
		assert.Equal(t, "sk-ant-api03-SECRETAPIKEY", r.Header.Get("X-Api-Key"), "the client's credentials go up")
		if r.Method == "POST" && json.Valid(r.Body) {
			assert.Equal(t, 1, strings.Count(string(r.Body), `"model":`), string(r.Body))
			assert.Contains(t, string(r.Body), `"model":"qwen3-coder:30b"`)
		}
	}
	msgs := up.requests("/v1/messages")
	require.Len(t, msgs, 5)
	assert.Equal(t, `not json`, string(msgs[1].Body))
	assert.Equal(t, `{"model":"qwen3-coder:30b","messages":[{"role":"user","content":"projected"}]}`, string(msgs[2].Body))
	assert.Contains(t, string(msgs[3].Body), "prefill")
	assert.Contains(t, string(msgs[4].Body), "reject me", "the retry sends the original")
	rows := p.rows(t)
	require.Len(t, rows, 2)
	assert.Equal(t, "claude-sonnet-4-6", rows[0].Model, "the model the upstream answered with")
}
