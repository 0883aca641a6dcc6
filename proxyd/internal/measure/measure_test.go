package measure

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

func collect(t *testing.T, ct, ce string, body []byte, chunk int, complete bool) Result {
	t.Helper()
	c := NewCollector(ct, ce)
	for len(body) > 0 {
		n := min(chunk, len(body))
		w, err := c.Write(body[:n])
		require.NoError(t, err)
		require.Equal(t, n, w)
		body = body[n:]
	}
	return c.Result(complete)
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

const cachedStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"model":"claude-opus-4-8","usage":{"input_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":9000,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":1}}}` + "\n\n" +
	"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","usage":{"output_tokens":10}}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","usage":{"input_tokens":8,"output_tokens":42}}` + "\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func TestCollector(t *testing.T) {
	haiku, err := os.ReadFile("testdata/haiku.sse")
	require.NoError(t, err)
	tool, err := os.ReadFile("testdata/tooluse.sse")
	require.NoError(t, err)
	cachedUsage := ledger.Usage{Input: 8, CacheWrite5m: 100, CacheWrite1h: 200, CacheRead: 9000, Output: 42}
	jsonBody := []byte(`{"id":"m","model":"claude-sonnet-4-6","usage":{"input_tokens":5,"cache_creation_input_tokens":50,"cache_read_input_tokens":0,"output_tokens":9}}`)
	jsonUsage := ledger.Usage{Input: 5, CacheWrite5m: 50, Output: 9}
	tests := []struct {
		name, ct, ce string
		body         []byte
		complete     bool
		want         ledger.Usage
		known        bool
		model        string
		problem      string
	}{
		{"real haiku stream", "text/event-stream; charset=utf-8", "", haiku, true,
			ledger.Usage{Input: 96, Output: 15}, true, "claude-3-5-haiku-20241022", ""},
		{"real tool stream", "text/event-stream; charset=utf-8", "", tool, true,
			ledger.Usage{Input: 4, CacheWrite5m: 280, CacheRead: 15671, Output: 2425}, true, "", ""},
		{"cumulative deltas, ttl split", "text/event-stream", "", []byte(cachedStream), true, cachedUsage, true, "claude-opus-4-8", ""},
		{"gzip stream", "text/event-stream", "gzip", gz(t, []byte(cachedStream)), true, cachedUsage, true, "claude-opus-4-8", ""},
		{"json", "application/json", "", jsonBody, true, jsonUsage, true, "claude-sonnet-4-6", ""},
		{"gzip json", "application/json", "gzip", gz(t, jsonBody), true, jsonUsage, true, "claude-sonnet-4-6", ""},
		{"error json", "application/json", "", []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`), true,
			ledger.Usage{}, false, "", "error response: rate_limit_error"},
		{"stream error event", "text/event-stream", "", []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"), true,
			ledger.Usage{}, false, "", "stream error: overloaded_error"},
		{"cut stream", "text/event-stream", "", []byte(cachedStream[:strings.Index(cachedStream, "event: message_delta")+10]), false,
			ledger.Usage{Input: 7, CacheWrite5m: 100, CacheWrite1h: 200, CacheRead: 9000, Output: 1}, true, "claude-opus-4-8", "response cut before its end"},
		{"not json", "application/json", "", []byte("\xff\xfe nope"), true, ledger.Usage{}, false, "", "response body is not JSON"},
		{"brotli", "application/json", "br", []byte("xx"), true, ledger.Usage{}, false, "", "content-encoding br: usage not read"},
		{"bad gzip", "application/json", "gzip", []byte("xx"), true, ledger.Usage{}, false, "", "gzip response: unexpected EOF"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 1 << 20} {
			t.Run(tt.name, func(t *testing.T) {
				r := collect(t, tt.ct, tt.ce, tt.body, chunk, tt.complete)
				assert.Equal(t, tt.want, r.Usage)
				assert.Equal(t, tt.known, r.Known)
				if tt.model != "" {
					assert.Equal(t, tt.model, r.Model)
				}
				assert.Equal(t, tt.problem, r.Problem)
			})
		}
	}
}

func TestCollectorTooBig(t *testing.T) {
	c := NewCollector("application/json", "")
	big := make([]byte, MaxCopy/4+1)
	for range 5 {
		_, _ = c.Write(big)
	}
	r := c.Result(true)
	assert.False(t, r.Known)
	assert.Contains(t, r.Problem, "larger than")
}

func TestCountBody(t *testing.T) {
	in := []byte(`{"model":"claude-opus-4-8","max_tokens":32000,"stream":true,"metadata":{"user_id":"u"},` +
		`"system":[{"type":"text","text":"a\u00e9 \"q\""}],"messages":[{"role":"user","content":"hi"}],` +
		`"tools":[],"tool_choice":{"type":"auto"},"thinking":{"type":"adaptive"},"temperature":1,` +
		`"output_config":{"effort":"high"},"context_management":{"edits":[]},"cache_control":{"type":"ephemeral"}}`)
	out, err := CountBody(gate.Parse(in))
	require.NoError(t, err)
	assert.Equal(t, `{"model":"claude-opus-4-8","system":[{"type":"text","text":"a\u00e9 \"q\""}],"messages":[{"role":"user","content":"hi"}],`+
		`"tools":[],"tool_choice":{"type":"auto"},"thinking":{"type":"adaptive"},"output_config":{"effort":"high"},"context_management":{"edits":[]},"cache_control":{"type":"ephemeral"}}`, string(out))

	for _, bad := range []string{`[1]`, `1`, `null`, `"s"`} {
		_, err := CountBody(gate.Parse([]byte(bad)))
		assert.ErrorIs(t, err, ErrNotObject, bad)
	}
}

func TestPreviousCountBody(t *testing.T) {
	body := func(msgs string) *gate.Body {
		return gate.Parse([]byte(`{"model":"m","max_tokens":9,"system":"s","messages":` + msgs + `,"tools":[]}`))
	}
	for _, first := range []string{`[{"role":"user","content":"hi"}]`, `[]`, `"x"`,
		`[{"role":"user","content":"a"},{"role":"user","content":"b"}]`,
		`[{"role":"assistant","content":"pre"},{"role":"user","content":"b"}]`} {
		out, isFirst, err := PreviousCountBody(body(first))
		require.NoError(t, err, first)
		assert.True(t, isFirst, first)
		assert.Nil(t, out, first)
	}
	// The previous request ended at the user message the last assistant
	// message answered; the tool round-trip before it stays.
	out, isFirst, err := PreviousCountBody(body(`[{"role":"user","content":"fix"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},{"role":"assistant","content":"done"},{"role":"user","content":"more"}]`))
	require.NoError(t, err)
	assert.False(t, isFirst)
	assert.Equal(t, `{"model":"m","system":"s","messages":[{"role":"user","content":"fix"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}],"tools":[]}`, string(out))
	// Which is the count body of that previous request.
	prev, err := CountBody(gate.Parse([]byte(`{"model":"m","max_tokens":9,"system":"s","messages":[{"role":"user","content":"fix"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}],"tools":[]}`)))
	require.NoError(t, err)
	assert.Equal(t, string(prev), string(out))

	_, _, err = PreviousCountBody(gate.Parse([]byte(`[1]`)))
	assert.ErrorIs(t, err, ErrNotObject)
}

func TestProber(t *testing.T) {
	var got *http.Request
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		gotBody, _ = io.ReadAll(r.Body)
		switch r.Header.Get("X-Api-Key") {
		case "limited":
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error"}}`)
		case "weird":
			_, _ = io.WriteString(w, `{"tokens":3}`)
		default:
			_, _ = io.WriteString(w, `{"input_tokens":1234}`)
		}
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL + "/base/")
	p := &Prober{Client: srv.Client(), Upstream: base}
	h := http.Header{}
	h.Set("X-Api-Key", "k")
	h.Set("Anthropic-Beta", "oauth-2025-04-20,x")
	h.Set("Anthropic-Version", "2023-06-01")
	h.Set("X-Claude-Code-Session-Id", "s")
	h.Set("X-Gateway-Team", "team-blue") // a gateway's custom header
	h.Set("Content-Length", "9999")
	n, err := p.Count(context.Background(), "beta=true", h, []byte(`{"model":"m"}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1234), n)
	assert.Equal(t, "/base/v1/messages/count_tokens", got.URL.Path)
	assert.Equal(t, "beta=true", got.URL.RawQuery)
	assert.Equal(t, "oauth-2025-04-20,x", got.Header.Get("Anthropic-Beta"))
	assert.Equal(t, "2023-06-01", got.Header.Get("Anthropic-Version"))
	assert.Empty(t, got.Header.Get("X-Claude-Code-Session-Id"))
	assert.Equal(t, "team-blue", got.Header.Get("X-Gateway-Team"), "a gateway's header goes with the probe")
	assert.Equal(t, `{"model":"m"}`, string(gotBody))

	h.Set("X-Api-Key", "limited")
	_, err = p.Count(context.Background(), "", h, nil)
	var pe *ProbeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 429, pe.Status)
	assert.Equal(t, "rate_limit_error", pe.Type)

	h.Set("X-Api-Key", "weird")
	_, err = p.Count(context.Background(), "", h, nil)
	require.Error(t, err)

	dead := &Prober{Client: srv.Client(), Upstream: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
	_, err = dead.Count(context.Background(), "", h, nil)
	require.Error(t, err)
}

func FuzzCollector(f *testing.F) {
	f.Add([]byte(cachedStream), true, 5)
	f.Add([]byte(`{"usage":{"input_tokens":1}}`), false, 1)
	f.Add([]byte("event: message_delta\ndata: {\"usage\":{\"output_tokens\":-3}}\n\n"), true, 2)
	f.Fuzz(func(t *testing.T, body []byte, stream bool, chunk int) {
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		if chunk <= 0 {
			chunk = 1
		}
		c := NewCollector(ct, "")
		for b := body; len(b) > 0; {
			n := min(chunk, len(b))
			_, _ = c.Write(b[:n])
			b = b[n:]
		}
		r := c.Result(true)
		if !r.Known {
			require.Equal(t, ledger.Usage{}, r.Usage)
		}
		whole := NewCollector(ct, "")
		_, _ = whole.Write(body)
		require.Equal(t, whole.Result(true), r, "chunking never changes the result")
	})
}

func FuzzCountBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[]}`))
	f.Add([]byte(`{"a":{"model":1},"messages":"\u00e9"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return // the proxy validates before it builds a count body
		}
		out, err := CountBody(gate.Parse(body))
		if err != nil {
			return
		}
		require.True(t, gjson.ValidBytes(out), "%q → %q", body, out)
		gjson.ParseBytes(out).ForEach(func(k, v gjson.Result) bool {
			require.True(t, countFields[k.String()], k.String())
			return true
		})
		prev, first, err := PreviousCountBody(gate.Parse(body))
		require.NoError(t, err)
		if first {
			return
		}
		require.True(t, gjson.ValidBytes(prev), "%q → %q", body, prev)
		n := gjson.GetBytes(body, "messages.#").Int()
		require.Less(t, gjson.GetBytes(prev, "messages.#").Int(), n, "the previous request is shorter")
	})
}
