package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// oversizedBody is a main-session request whose history is about twice a
// 200K window: the goal, then tool exchanges of about 8 KB each.
func oversizedBody(exchanges int) []byte {
	var msgs []string
	msgs = append(msgs, `{"role":"user","content":[{"type":"text","text":"fix the failing test in pkg/"}]}`)
	out, _ := json.Marshal(strings.Repeat("ok   pkg/mod  0.012s coverage: 81.2% of statements\n", 150))
	for i := range exchanges {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Running step %d."},{"type":"tool_use","id":"toolu_%04d","name":"Bash","input":{"command":"go test ./pkg/... # %d"}}]}`, i, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":%s}]}`, i, out))
	}
	return []byte(`{"model":"claude-sonnet-4-6","max_tokens":32000,"stream":false,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[` +
		strings.Join(msgs, ",") + `]}`)
}

// TestFailOpenOversizedHistory: a projection fault on a history larger than
// the model's window does not forward it as it came (the upstream would
// answer "prompt is too long"): the upstream gets the goal and the latest
// exchanges, under the window, every tool result with its call, and the
// row says why.
func TestFailOpenOversizedHistory(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up.URL, func(o *server.Options) {
		o.Rule = gate.Rule{Scope: config.ScopeAll}
		o.Projector = projectorFunc(func(context.Context, *gate.Input) (*gate.Output, error) { return nil, errors.New("injected fault") })
	})
	body := oversizedBody(220)
	require.Greater(t, tokens.EstimateBytes(body), 300_000, "the history outgrew the window")
	resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages?beta=true", claudeHeaders(), body)
	require.Equal(t, 200, resp.StatusCode)

	sent := up.requests("/v1/messages")
	require.Len(t, sent, 1)
	got := sent[0].Body
	require.True(t, json.Valid(got))
	assert.Less(t, tokens.EstimateBytes(got), 110_000, "about half the window")
	var b struct {
		Model    string
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(got, &b))
	assert.Equal(t, "claude-sonnet-4-6", b.Model)
	require.Greater(t, len(b.Messages), 3)
	assert.Equal(t, "fix the failing test in pkg/", b.Messages[0].Content[0]["text"], "the goal as sent")
	assert.Equal(t, "assistant", b.Messages[1].Role)
	for i, m := range b.Messages {
		for _, c := range m.Content {
			if c["type"] != "tool_result" {
				continue
			}
			prev := b.Messages[i-1]
			found := false
			for _, u := range prev.Content {
				found = found || u["id"] == c["tool_use_id"]
			}
			assert.True(t, found, "message %d: %v answers a call of the message before it", i, c["tool_use_id"])
		}
	}
	last := b.Messages[len(b.Messages)-1].Content[0]
	assert.Equal(t, "toolu_0219", last["tool_use_id"], "the latest exchange is kept")
	assert.True(t, strings.Contains(string(got), "longer than the model's context window"), "the model is told")

	rows := p.rows(t)
	require.Len(t, rows, 1)
	assert.True(t, rows[0].FailOpen)
	assert.Contains(t, rows[0].FailOpenReason, "project: injected fault; the original exceeds the model's window")
	assert.Equal(t, int64(1), p.Health().FailOpens)
}
