package fakeapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOtherPaths(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{http.MethodHead, "/api/hello", 200, ""},
		{http.MethodGet, "/v1/models?limit=1000", 200, `"has_more":false`},
		{http.MethodGet, "/v1/nothing", 404, `"not_found_error"`},
		{http.MethodGet, "/v1/messages", 404, `"not_found_error"`},
	} {
		req, err := http.NewRequest(tc.method, s.URL()+tc.path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, tc.path)
		assert.Contains(t, string(raw), tc.contains, tc.path)
		assert.NotEmpty(t, resp.Header.Get("request-id"))
	}
	reqs := s.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []string{"other", "other", "other", "messages"},
		[]string{reqs[0].Kind, reqs[1].Kind, reqs[2].Kind, reqs[3].Kind})
	assert.Equal(t, "limit=1000", reqs[1].RawQuery)
	assert.Equal(t, 404, reqs[2].Status)
}

func TestGzipBodies(t *testing.T) {
	s := New(Options{Gzip: true})
	defer s.Close()
	var zbody bytes.Buffer
	zw := gzip.NewWriter(&zbody)
	_, _ = io.WriteString(zw, body(t, arr{user(text("hi"))}, nil))
	require.NoError(t, zw.Close())

	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", &zbody)
	require.NoError(t, err)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(resp.Body)
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, "message", decodeJSON(t, raw)["type"])
	assert.True(t, strings.HasPrefix(string(s.Requests()[0].Body), "{"), "the recorded body is decoded")
}

func TestObserveSeesAnsweredRequests(t *testing.T) {
	seen := make(chan *Request, 4)
	s := New(Options{Observe: func(r *Request) { seen <- r }})
	defer s.Close()
	post(t, s, "/v1/messages", body(t, arr{user(text(""))}, nil))
	r := <-seen
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Invalid, "non-empty")
}
