package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string
	Data string
}

// readSSE is an SSE reader per the WHATWG event-stream rules: lines end in
// LF, CRLF or CR; "event:" sets the name, "data:" lines are joined with LF,
// lines starting with ":" are comments, a blank line dispatches. A stream
// that ends inside an event returns io.ErrUnexpectedEOF with the events
// dispatched before it.
func readSSE(r io.Reader) ([]sseEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 8<<20)
	sc.Split(splitSSELines)
	var events []sseEvent
	var name string
	var data []string
	pending := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if pending {
				n := name
				if n == "" {
					n = "message"
				}
				events = append(events, sseEvent{Name: n, Data: strings.Join(data, "\n")})
			}
			name, data, pending = "", nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name, pending = value, true
		case "data":
			data, pending = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		return events, err
	}
	if pending {
		return events, io.ErrUnexpectedEOF
	}
	return events, nil
}

func splitSSELines(data []byte, atEOF bool) (int, []byte, error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		}
	}
	if atEOF && len(data) > 0 {
		// An unterminated last line is not a complete line: the stream was cut.
		return len(data), nil, errors.New("sse: stream ended inside a line")
	}
	return 0, nil, nil
}

// post sends body to the server and returns the response and its body.
func post(t *testing.T, s *Server, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "test")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// js marshals v, failing the test on error.
func js(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// obj is a JSON object literal for building request bodies.
type obj = map[string]any

// arr is a JSON array literal.
type arr = []any

func text(s string) obj { return obj{"type": "text", "text": s} }

func cached(b obj, ttl string) obj {
	c := obj{}
	for k, v := range b {
		c[k] = v
	}
	cc := obj{"type": "ephemeral"}
	if ttl != "" {
		cc["ttl"] = ttl
	}
	c["cache_control"] = cc
	return c
}

func user(blocks ...any) obj      { return obj{"role": "user", "content": arr(blocks)} }
func assistant(blocks ...any) obj { return obj{"role": "assistant", "content": arr(blocks)} }

func toolUse(id, name string, input obj) obj {
	return obj{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id, content string) obj {
	return obj{"type": "tool_result", "tool_use_id": id, "content": content}
}

func tool(name string) obj {
	return obj{"name": name, "description": "the " + name + " tool",
		"input_schema": obj{"type": "object", "properties": obj{}}}
}

// body builds a messages request; extra keys override or add fields.
func body(t testing.TB, messages arr, extra obj) string {
	t.Helper()
	b := obj{"model": "claude-test-1", "max_tokens": 1024, "messages": messages}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return js(t, b)
}

// bigText returns deterministic text of at least n tokens under Tokens.
func bigText(seed string, n int) string {
	var sb strings.Builder
	for i := 0; ; i++ {
		fmt.Fprintf(&sb, "%s line %d of filler text.\n", seed, i)
		if i%50 == 0 && Tokens([]byte(sb.String())) >= int64(n) {
			return sb.String()
		}
	}
}

// decodeJSON decodes b into a generic map, failing the test on error.
func decodeJSON(t testing.TB, b []byte) obj {
	t.Helper()
	var m obj
	require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&m), "body: %s", b)
	return m
}
