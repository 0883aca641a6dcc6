package fakeapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
)

// TestRealClientReadsThroughFake runs the pinned Claude Code CLI against the
// fake with a scripted agent that reads a file, then answers with a secret it
// can only know from the Read result.
func TestRealClientReadsThroughFake(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	const secret = "violet-otter-42"
	var sawContent atomic.Bool
	var target atomic.Value
	agent := fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		path := target.Load().(string)
		if content, ok := v.FileContent(path); ok {
			sawContent.Store(strings.Contains(content, secret))
			line := strings.SplitN(content, "\n", 2)[0]
			return fakeapi.Reply{Text: "The notes say: " + line}
		}
		if len(v.CallsTo("Read")) > 0 {
			return fakeapi.Reply{Text: "I could not see the file."}
		}
		return fakeapi.Reply{Text: "Reading the notes.", ToolUses: []fakeapi.ToolUse{
			{Name: "Read", Input: map[string]any{"file_path": path}},
		}}
	})
	s := fakeapi.New(fakeapi.Options{Agent: agent})
	defer s.Close()

	env := claudecli.NewEnv(t, s.URL())
	path := filepath.Join(env.Work, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("secret: "+secret+"\nsecond line\n"), 0o600))
	target.Store(path)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := env.Run(ctx, "-p", "What do my notes say?", "--permission-mode", "bypassPermissions")
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stdout, "The notes say: secret: "+secret)
	assert.True(t, sawContent.Load(), "the agent saw the file through the Read result")

	msgs := s.MessagesRequests()
	require.GreaterOrEqual(t, len(msgs), 2)
	for i, r := range msgs {
		assert.Empty(t, r.Invalid, "request %d", i)
		assert.Equal(t, "beta=true", r.RawQuery)
		assert.NotEmpty(t, r.Header.Get("X-Claude-Code-Session-Id"))
	}
	last := msgs[len(msgs)-1]
	assert.Positive(t, last.Usage.CacheReadInputTokens, "the second turn reads the cached prefix")
	assert.Positive(t, s.CacheStats().HitRatio())
}

// TestRealClientRecoversFromFaults checks that the faults the fake injects
// look real to the client: it retries each and finishes the run.
func TestRealClientRecoversFromFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	for name, f := range map[string]fakeapi.Fault{
		"overloaded 529":        {Kind: fakeapi.FaultHTTPError, Status: 529},
		"stream cut mid-event":  {Kind: fakeapi.FaultCutStream, AfterEvents: 3},
		"error event after 200": {Kind: fakeapi.FaultStreamError, AfterEvents: 2},
		"malformed event data":  {Kind: fakeapi.FaultMalformedJSON, AfterEvents: 2},
	} {
		t.Run(name, func(t *testing.T) {
			f.On = []int{1}
			faults := fakeapi.NewFaults(f)
			s := fakeapi.New(fakeapi.Options{Faults: faults})
			defer s.Close()
			env := claudecli.NewEnv(t, s.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := env.Run(ctx, "-p", "hello", "--permission-mode", "bypassPermissions")
			require.NoError(t, err)
			assert.Equal(t, 0, res.ExitCode, "stderr:\n%s", res.Stderr)
			assert.Equal(t, "OK.", strings.TrimSpace(res.Stdout))
			assert.Equal(t, 1, faults.Fired())
			reqs := s.MessagesRequests()
			require.Len(t, reqs, 2, "one faulted attempt, one retry")
			assert.Equal(t, messagesOf(t, reqs[0].Body), messagesOf(t, reqs[1].Body), "the retry resends the same conversation")
		})
	}
}

// messagesOf returns the messages of a request body as JSON text. (After a
// malformed stream the client retries with a lower max_tokens, so whole
// bodies differ.)
func messagesOf(t *testing.T, body []byte) string {
	var m struct {
		Messages json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &m))
	return string(m.Messages)
}
