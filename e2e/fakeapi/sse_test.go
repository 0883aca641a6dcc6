package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamedBlock is a content block rebuilt from deltas.
type streamedBlock struct {
	Type, Text, Thinking, Signature, ID, Name, JSON string
	Deltas                                          int
	Stopped                                         bool
}

// rebuild assembles a streamed message from its events, checking the real
// API's framing rules on the way.
func rebuild(t *testing.T, events []sseEvent) (start obj, blocks []*streamedBlock, delta obj) {
	t.Helper()
	require.NotEmpty(t, events)
	require.Equal(t, "message_start", events[0].Name)
	require.Equal(t, "message_stop", events[len(events)-1].Name)
	for i, ev := range events {
		var data obj
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &data), "event %d %s", i, ev.Name)
		require.Equal(t, ev.Name, data["type"], "data.type matches the event name")
		switch ev.Name {
		case "message_start":
			start = data["message"].(obj)
		case "content_block_start":
			idx := int(data["index"].(float64))
			require.Equal(t, len(blocks), idx, "blocks start in index order")
			cb := data["content_block"].(obj)
			b := &streamedBlock{Type: cb["type"].(string)}
			if b.Type == "tool_use" {
				b.ID, b.Name = cb["id"].(string), cb["name"].(string)
			}
			blocks = append(blocks, b)
		case "content_block_delta":
			idx := int(data["index"].(float64))
			require.Less(t, idx, len(blocks))
			b := blocks[idx]
			require.False(t, b.Stopped, "delta after stop")
			d := data["delta"].(obj)
			b.Deltas++
			switch d["type"] {
			case "text_delta":
				b.Text += d["text"].(string)
			case "thinking_delta":
				b.Thinking += d["thinking"].(string)
			case "signature_delta":
				b.Signature += d["signature"].(string)
			case "input_json_delta":
				b.JSON += d["partial_json"].(string)
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			blocks[int(data["index"].(float64))].Stopped = true
		case "message_delta":
			delta = data
		}
	}
	for _, b := range blocks {
		assert.True(t, b.Stopped, "block %s stopped", b.Type)
	}
	return start, blocks, delta
}

func TestStreamFramingAndBlocks(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 20)
	s := New(Options{ChunkSize: 7, Agent: AgentFunc(func(v *View) Reply {
		return Reply{Thinking: "plan: read then run", Text: long, ToolUses: []ToolUse{
			{Name: "Read", Input: map[string]any{"file_path": "/x/y.go"}},
			{Name: "Bash", Input: map[string]any{"command": "go test ./... | tail -40"}},
		}}
	})})
	defer s.Close()
	reqBody := body(t, arr{user(text("go"))}, obj{"stream": true, "tools": arr{tool("Read"), tool("Bash")},
		"thinking": obj{"type": "adaptive"}})
	resp, raw := post(t, s, "/v1/messages?beta=true", reqBody)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")
	assert.True(t, strings.HasPrefix(resp.Header.Get("request-id"), "req_"))

	events, err := readSSE(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, "ping", events[1].Name, "a ping follows message_start")
	start, blocks, delta := rebuild(t, events)

	assert.True(t, strings.HasPrefix(start["id"].(string), "msg_"))
	assert.Equal(t, "claude-test-1", start["model"])
	assert.Empty(t, start["content"])
	assert.Nil(t, start["stop_reason"])
	u := start["usage"].(obj)
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "cache_creation"} {
		assert.Contains(t, u, k)
	}

	require.Len(t, blocks, 4)
	assert.Equal(t, "thinking", blocks[0].Type)
	assert.Equal(t, "plan: read then run", blocks[0].Thinking)
	assert.Equal(t, signThinking("plan: read then run"), blocks[0].Signature)
	assert.Equal(t, long, blocks[1].Text)
	assert.Greater(t, blocks[1].Deltas, 10, "text arrives in chunks")
	assert.Equal(t, "Read", blocks[2].Name)
	assert.True(t, strings.HasPrefix(blocks[2].ID, "toolu_"))
	assert.NotEqual(t, blocks[2].ID, blocks[3].ID)
	assert.Greater(t, blocks[3].Deltas, 2, "tool input arrives as partial JSON chunks")
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(blocks[3].JSON), &in))
	assert.Equal(t, "go test ./... | tail -40", in["command"])

	assert.Equal(t, "tool_use", delta["delta"].(obj)["stop_reason"])
	du := delta["usage"].(obj)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, float64(reqs[0].Usage.OutputTokens), du["output_tokens"], "message_delta usage is cumulative and final")
	assert.Equal(t, float64(reqs[0].Usage.InputTokens), du["input_tokens"])
	assert.Equal(t, "messages", reqs[0].Kind)
	assert.Equal(t, "beta=true", reqs[0].RawQuery)
	assert.Empty(t, reqs[0].Invalid)
}

func TestEnabledThinkingAlwaysThinks(t *testing.T) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply { return Reply{Text: "hi"} })})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", body(t, arr{user(text("go"))},
		obj{"tools": arr{tool("Read")}, "max_tokens": 4096, "thinking": obj{"type": "enabled", "budget_tokens": 1024}}))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	content := decodeJSON(t, raw)["content"].([]any)
	require.Len(t, content, 2)
	first := content[0].(obj)
	assert.Equal(t, "thinking", first["type"])
	assert.Equal(t, signThinking(first["thinking"].(string)), first["signature"])
}

func TestThinkingOmittedWhenRequestDisablesIt(t *testing.T) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply { return Reply{Thinking: "hidden", Text: "hi"} })})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", body(t, arr{user(text("go"))}, obj{"tools": arr{tool("Read")}}))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := decodeJSON(t, raw)
	require.Len(t, m["content"], 1)
	assert.Equal(t, "text", m["content"].([]any)[0].(obj)["type"])
}

func TestNonStreamingAnswer(t *testing.T) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply {
		return Reply{Text: "reading", ToolUses: []ToolUse{{Name: "Read", Input: map[string]any{"file_path": "/a"}}}}
	})})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", body(t, arr{user(text("go"))}, obj{"tools": arr{tool("Read")}}))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	m := decodeJSON(t, raw)
	assert.Equal(t, "message", m["type"])
	assert.Equal(t, "assistant", m["role"])
	assert.Equal(t, "tool_use", m["stop_reason"])
	content := m["content"].([]any)
	require.Len(t, content, 2)
	assert.Equal(t, "/a", content[1].(obj)["input"].(obj)["file_path"])
	u := m["usage"].(obj)
	assert.Equal(t, float64(s.Requests()[0].Usage.OutputTokens), u["output_tokens"])
	assert.Contains(t, u["cache_creation"], "ephemeral_5m_input_tokens")
}

func TestMaxTokensZeroPrewarms(t *testing.T) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply { t.Error("agent called"); return Reply{} })})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", body(t, arr{user(text("go"))}, obj{"max_tokens": 0, "tools": arr{tool("Read")}}))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	m := decodeJSON(t, raw)
	assert.Equal(t, "max_tokens", m["stop_reason"])
	assert.Empty(t, m["content"])
}

func TestThinkingSignatureRoundTrip(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	th := "I will list the files."
	good := obj{"type": "thinking", "thinking": th, "signature": signThinking(th)}
	forged := obj{"type": "thinking", "thinking": th + " (edited)", "signature": signThinking(th)}
	for name, tc := range map[string]struct {
		block obj
		ok    bool
	}{"issued": {good, true}, "edited text": {forged, false}} {
		t.Run(name, func(t *testing.T) {
			msgs := arr{user(text("go")), assistant(tc.block, toolUse("toolu_1", "Bash", obj{"command": "ls"})),
				user(toolResult("toolu_1", "a.go"))}
			resp, raw := post(t, s, "/v1/messages", body(t, msgs, obj{"tools": arr{tool("Bash")}}))
			if tc.ok {
				assert.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
			} else {
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Contains(t, string(raw), "Invalid `signature`")
			}
		})
	}
}

// flushRecorder records the body length at each Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	at []int
}

func (f *flushRecorder) Flush() { f.at = append(f.at, f.Body.Len()) }

func TestStreamFlushesEveryEvent(t *testing.T) {
	h := NewHandler(Options{ChunkSize: 5, Agent: AgentFunc(func(v *View) Reply { return Reply{Text: "a longer answer"} })})
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	req := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(
		body(t, arr{user(text("go"))}, obj{"stream": true, "tools": arr{tool("Read")}})))
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	events, err := readSSE(bytes.NewReader(rec.Body.Bytes()))
	require.NoError(t, err)
	require.Len(t, rec.at, len(events), "one flush per event")
	b := rec.Body.Bytes()
	for _, n := range rec.at {
		assert.Equal(t, "\n\n", string(b[n-2:n]), "flushes fall on event boundaries")
	}
}

func TestReadSSEHandlesCRLFAndComments(t *testing.T) {
	in := ": comment\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\ndata: one\ndata: two\n\n"
	events, err := readSSE(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, []sseEvent{{"a", `{"x":1}`}, {"message", "one\ntwo"}}, events)

	_, err = readSSE(strings.NewReader("event: a\ndata: {\"x\""))
	assert.Error(t, err, "a stream cut inside an event is an error")
}
