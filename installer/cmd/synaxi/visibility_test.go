package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/visibility/remote"
)

func TestVisibilityAsksTheProxy(t *testing.T) {
	want := visibility.Export{Session: "s1", Agent: "a1", Updated: time.Now().UTC().Truncate(time.Second),
		Files: map[string]visibility.File{"/r/a.go": {Evicted: true}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != remote.Path || r.URL.Query().Get("session") != "s1" || r.URL.Query().Get("agent") != "a1" ||
			r.Header.Get("X-Synaxi-Token") != "tok" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(want)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Synaxi-Token: tok\nX-Other: 1")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"visibility", srv.URL, "s1", "a1"}, nil, &stdout, &stderr), stderr.String())
	var got visibility.Export
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got))
	assert.Equal(t, want.Files, got.Files)

	stdout.Reset()
	assert.Equal(t, 1, run(context.Background(), []string{"visibility", srv.URL, "s2"}, nil, &stdout, &stderr), "not found")
	assert.Empty(t, stdout.String())
	assert.Equal(t, 2, run(context.Background(), []string{"visibility", srv.URL}, nil, &stdout, &stderr))
}
