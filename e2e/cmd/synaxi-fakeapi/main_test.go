package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/fakeapi"
)

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8787": true, "localhost:0": true, "[::1]:9000": true,
		"0.0.0.0:8787": false, "10.1.2.3:80": false, "example:80": false, "nonsense": false,
	} {
		err := checkLoopback(addr)
		assert.Equal(t, ok, err == nil, "%s: %v", addr, err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-listen", "0.0.0.0:1"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "not a loopback address")
	assert.Equal(t, 2, run(context.Background(), []string{"-bogus"}, &stdout, &stderr))
	stdout.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"-version"}, &stdout, &stderr))
	assert.NotEmpty(t, strings.TrimSpace(stdout.String()))
}

func TestServeAnswersAndReportsStats(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fake := fakeapi.NewHandler(fakeapi.Options{Agent: fakeapi.DemoAgent()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stdout bytes.Buffer
	go func() { done <- Serve(ctx, ln, fake, &stdout) }()
	base := "http://" + ln.Addr().String()

	reqBody := `{"model":"m","max_tokens":100,"tools":[{"name":"Read","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":"look at /etc/hostname"}]}`
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(reqBody))
	require.NoError(t, err)
	var msg struct {
		Content []struct {
			Type  string         `json:"type"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	resp.Body.Close()
	require.Len(t, msg.Content, 2)
	assert.Equal(t, "/etc/hostname", msg.Content[1].Input["file_path"], "the demo agent reads the named file")

	resp, err = http.Get(base + "/_fakeapi/stats")
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var stats struct {
		Stats fakeapi.CacheStats `json:"stats"`
	}
	require.NoError(t, json.Unmarshal(raw, &stats), string(raw))
	assert.Equal(t, 1, stats.Stats.Requests)

	resp, err = http.Get(base + "/_fakeapi/requests")
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(raw), `"/v1/messages"`)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	assert.Contains(t, stdout.String(), "listening on "+base)
}
