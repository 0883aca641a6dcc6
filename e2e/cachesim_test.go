package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// TestReplayCacheSimulationMatchesFakeAPI cross-checks the two prompt-cache
// simulators on the same input: `synaxi-proxyd replay --dump` bills every
// request of the fixture transcript (baseline and projected) with the
// replay's simulator; each body is then sent, at its own time, to a fresh
// fakeapi upstream per side, whose usage must be identical.
func TestReplayCacheSimulationMatchesFakeAPI(t *testing.T) {
	// The repository's byte-for-byte copy of the shared fixture, so the test
	// always runs.
	transcript := filepath.Join(claudecli.RepoRoot(), "internal", "transcript", "testdata",
		"claude-code-sessions", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	_, err := os.Stat(transcript)
	require.NoError(t, err, "fixture transcript")
	bin, err := buildProxyOnce()
	require.NoError(t, err)
	dumpPath := filepath.Join(t.TempDir(), "dump.jsonl")
	env := claudecli.Env{Work: t.TempDir()}
	res, err := env.RunProgram(t.Context(), bin, "replay", transcript, "--dump", dumpPath)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr)

	type line struct {
		Side      string          `json:"side"`
		At        time.Time       `json:"at"`
		MinTokens int             `json:"min_tokens"`
		Body      json.RawMessage `json:"body"`
		Usage     struct {
			Input   int64 `json:"input_tokens"`
			Write5m int64 `json:"cache_write_5m_tokens"`
			Write1h int64 `json:"cache_write_1h_tokens"`
			Read    int64 `json:"cache_read_tokens"`
		} `json:"usage"`
	}
	f, err := os.Open(dumpPath)
	require.NoError(t, err)
	defer f.Close()
	servers := map[string]*fakeapi.Server{}
	clock := map[string]*time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		srv := servers[l.Side]
		if srv == nil {
			now := l.At
			clock[l.Side] = &now
			c := clock[l.Side]
			srv = fakeapi.New(fakeapi.Options{CacheMinTokens: l.MinTokens, Now: func() time.Time { return *c }})
			t.Cleanup(srv.Close)
			servers[l.Side] = srv
		}
		*clock[l.Side] = l.At
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", bytes.NewReader(l.Body))
		require.NoError(t, err)
		_, _ = bytes.NewBuffer(nil).ReadFrom(resp.Body)
		resp.Body.Close()
		reqs := srv.MessagesRequests()
		got := reqs[len(reqs)-1]
		require.Empty(t, got.Invalid, "%s request %d", l.Side, n)
		assert.Equal(t, l.Usage.Read, got.Usage.CacheReadInputTokens, "%s request %d: cache read", l.Side, n)
		assert.Equal(t, l.Usage.Write5m, got.Usage.Ephemeral5m, "%s request %d: 5m write", l.Side, n)
		assert.Equal(t, l.Usage.Write1h, got.Usage.Ephemeral1h, "%s request %d: 1h write", l.Side, n)
		assert.Equal(t, l.Usage.Input, got.Usage.InputTokens, "%s request %d: uncached input", l.Side, n)
		n++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 2*152, n)
}
