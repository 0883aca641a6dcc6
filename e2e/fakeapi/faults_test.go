package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func streamBody(t *testing.T) string {
	return body(t, arr{user(text("go"))}, obj{"stream": true, "tools": arr{tool("Read")}})
}

func TestFaultHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		status     int
		retryAfter string
		errType    string
	}{
		{500, "", "api_error"},
		{529, "", "overloaded_error"},
		{429, "7", "rate_limit_error"},
	} {
		t.Run(tc.errType, func(t *testing.T) {
			faults := NewFaults(Fault{Kind: FaultHTTPError, Status: tc.status, RetryAfter: tc.retryAfter, On: []int{1}})
			s := New(Options{Faults: faults})
			defer s.Close()
			resp, raw := post(t, s, "/v1/messages", streamBody(t))
			require.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.retryAfter, resp.Header.Get("retry-after"))
			assert.NotEmpty(t, resp.Header.Get("request-id"))
			m := decodeJSON(t, raw)
			assert.Equal(t, "error", m["type"])
			assert.Equal(t, tc.errType, m["error"].(obj)["type"])

			resp, raw = post(t, s, "/v1/messages", streamBody(t))
			assert.Equal(t, http.StatusOK, resp.StatusCode, "request 2 is not faulted: %s", raw)
			assert.Equal(t, 1, faults.Fired())
			reqs := s.Requests()
			assert.Equal(t, FaultHTTPError, reqs[0].Fault)
			assert.Equal(t, tc.status, reqs[0].Status)
			assert.Zero(t, reqs[1].Fault)
			assert.Equal(t, 1, s.CacheStats().Requests, "a faulted request reports no usage")
		})
	}
}

func TestFaultSlowFirstByte(t *testing.T) {
	delay := 150 * time.Millisecond
	s := New(Options{Faults: NewFaults(Fault{Kind: FaultSlowFirstByte, Delay: delay, Times: 1})})
	defer s.Close()
	start := time.Now()
	resp, raw := post(t, s, "/v1/messages", streamBody(t))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.GreaterOrEqual(t, time.Since(start), delay)
	events, err := readSSE(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, "message_stop", events[len(events)-1].Name)
}

func TestFaultCountTokensTimeoutAndFailure(t *testing.T) {
	faults := NewFaults(
		Fault{Kind: FaultSlowFirstByte, For: "count_tokens", Delay: time.Minute, Times: 1},
		Fault{Kind: FaultHTTPError, For: "count_tokens", Status: 500, Times: 1},
		Fault{Kind: FaultMalformedJSON, For: "count_tokens", Times: 1},
	)
	s := New(Options{Faults: faults})
	defer s.Close()
	ct := body(t, arr{user(text("hello"))}, obj{"max_tokens": nil})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages/count_tokens", strings.NewReader(ct))
	_, err := http.DefaultClient.Do(req)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	resp, _ := post(t, s, "/v1/messages", streamBody(t))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "messages requests are not affected")

	resp, _ = post(t, s, "/v1/messages/count_tokens", ct)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)

	resp, raw := post(t, s, "/v1/messages/count_tokens", ct)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, json.Valid(raw), "malformed JSON: %s", raw)

	resp, raw = post(t, s, "/v1/messages/count_tokens", ct)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, json.Valid(raw))
	assert.Equal(t, 3, faults.Fired())
}

func TestFaultCutStream(t *testing.T) {
	s := New(Options{Faults: NewFaults(Fault{Kind: FaultCutStream, AfterEvents: 3})})
	defer s.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(streamBody(t)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	raw, readErr := io.ReadAll(resp.Body)
	assert.Error(t, readErr, "the connection drops mid-body")
	events, err := readSSE(bytes.NewReader(raw))
	assert.Error(t, err, "the stream ends inside an event")
	assert.Len(t, events, 3)
}

func TestFaultCutNonStreaming(t *testing.T) {
	s := New(Options{Faults: NewFaults(Fault{Kind: FaultCutStream})})
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json",
		strings.NewReader(body(t, arr{user(text("go"))}, obj{"tools": arr{tool("Read")}})))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, readErr := io.ReadAll(resp.Body)
	assert.Error(t, readErr)
	assert.False(t, json.Valid(raw))
}

func TestFaultInStreamError(t *testing.T) {
	s := New(Options{Faults: NewFaults(Fault{Kind: FaultStreamError, AfterEvents: 2})})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", streamBody(t))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the error arrives after a 200")
	events, err := readSSE(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Len(t, events, 3)
	assert.Equal(t, "error", events[2].Name)
	assert.Contains(t, events[2].Data, `"overloaded_error"`)
}

func TestFaultMalformedStreamEvent(t *testing.T) {
	s := New(Options{Faults: NewFaults(Fault{Kind: FaultMalformedJSON, AfterEvents: 1})})
	defer s.Close()
	_, raw := post(t, s, "/v1/messages", streamBody(t))
	events, err := readSSE(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.True(t, json.Valid([]byte(events[0].Data)))
	assert.False(t, json.Valid([]byte(events[1].Data)))
}

func TestFaultMatcherAndNumbers(t *testing.T) {
	faults := NewFaults(
		Fault{Kind: FaultHTTPError, Status: 529, Match: func(r *Request) bool {
			return strings.Contains(string(r.Body), "SECOND")
		}},
		Fault{Kind: FaultHTTPError, Status: 500, On: []int{3}},
	)
	s := New(Options{Faults: faults})
	defer s.Close()
	var got []int
	for _, prompt := range []string{"first", "SECOND", "third", "fourth"} {
		resp, _ := post(t, s, "/v1/messages", body(t, arr{user(text(prompt))}, nil))
		got = append(got, resp.StatusCode)
	}
	assert.Equal(t, []int{200, 529, 500, 200}, got)
}
