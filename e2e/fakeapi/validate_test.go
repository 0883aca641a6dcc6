package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidation(t *testing.T) {
	tools := arr{tool("Read"), tool("Bash")}
	pair := func(resultMsg obj) arr {
		return arr{user(text("go")), assistant(toolUse("toolu_1", "Read", obj{"file_path": "/a"})), resultMsg}
	}
	cases := []struct {
		name    string
		body    string
		wantErr string // "" → accepted
	}{
		// required fields
		{"minimal request", body(t, arr{user(text("hi"))}, nil), ""},
		{"model missing", body(t, arr{user(text("hi"))}, obj{"model": nil}), "model: Field required"},
		{"max_tokens missing", body(t, arr{user(text("hi"))}, obj{"max_tokens": nil}), "max_tokens: Field required"},
		{"max_tokens negative", body(t, arr{user(text("hi"))}, obj{"max_tokens": -1}), "max_tokens"},
		{"messages missing", body(t, nil, obj{"messages": nil}), "messages: Field required"},
		{"messages empty", body(t, arr{}, nil), "at least one message"},
		{"not JSON", `{"model":`, "not a valid JSON object"},
		{"unknown top-level field", body(t, arr{user(text("hi"))}, obj{"bogus": 1}), "bogus: Extra inputs are not permitted"},
		{"Claude Code's fields", body(t, arr{user(text("hi"))}, obj{"context_management": obj{"edits": arr{}},
			"output_config": obj{"effort": "medium"}, "metadata": obj{"user_id": "u"}, "thinking": obj{"type": "adaptive"}}), ""},

		// roles and content
		{"unknown role", body(t, arr{obj{"role": "tool", "content": "x"}}, nil), "role"},
		{"system message inside messages", body(t, arr{user(text("hi")), obj{"role": "system", "content": "env"}}, nil), ""},
		{"consecutive user messages are merged", body(t, arr{user(text("a")), user(text("b"))}, nil), ""},
		{"empty string content", body(t, arr{obj{"role": "user", "content": ""}}, nil), "non-empty content"},
		{"empty content list", body(t, arr{obj{"role": "user", "content": arr{}}}, nil), "non-empty content"},
		{"empty system message after /compact", body(t, arr{user(text("a")), obj{"role": "system", "content": ""}}, nil), ""},
		{"empty final assistant prefill", body(t, arr{user(text("a")), obj{"role": "assistant", "content": ""}}, nil), ""},
		{"empty text block", body(t, arr{user(text(""))}, nil), "text content blocks must be non-empty"},
		{"empty text block with cache_control", body(t, arr{user(cached(text(""), ""))}, nil), "cache_control cannot be set for empty text blocks"},
		{"empty system text block", body(t, arr{user(text("a"))}, obj{"system": arr{text("")}}), "system: text content blocks must be non-empty"},
		{"unknown block type", body(t, arr{user(obj{"type": "banana"})}, nil), "does not match any of the expected tags"},

		// tool_use / tool_result pairing
		{"paired call", body(t, pair(user(toolResult("toolu_1", "x"))), obj{"tools": tools}), ""},
		{"unanswered tool_use", body(t, pair(user(text("no result"))), obj{"tools": tools}),
			"`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"tool_use at the end", body(t, arr{user(text("go")), assistant(toolUse("toolu_1", "Read", obj{}))}, obj{"tools": tools}),
			"without `tool_result`"},
		{"tool_result after text", body(t, pair(user(text("first"), toolResult("toolu_1", "x"))), obj{"tools": tools}),
			"tool_result blocks must come before"},
		{"text after tool_result", body(t, pair(user(toolResult("toolu_1", "x"), text("then"))), obj{"tools": tools}), ""},
		{"tool_result for an unknown id", body(t, pair(user(toolResult("toolu_1", "x"), toolResult("toolu_9", "y"))), obj{"tools": tools}),
			"unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{"tool_result answering an older turn", body(t, arr{user(text("go")),
			assistant(toolUse("toolu_1", "Read", obj{})), user(toolResult("toolu_1", "x")),
			assistant(text("ok")), user(toolResult("toolu_1", "again"))}, obj{"tools": tools}),
			"unexpected `tool_use_id`"},
		{"duplicate tool_use ids", body(t, arr{user(text("go")),
			assistant(toolUse("toolu_1", "Read", obj{}), toolUse("toolu_1", "Bash", obj{})),
			user(toolResult("toolu_1", "x"))}, obj{"tools": tools}), "ids must be unique"},
		{"tool_result twice", body(t, pair(user(toolResult("toolu_1", "x"), toolResult("toolu_1", "y"))), obj{"tools": tools}),
			"only one `tool_result`"},
		{"results in completion order", body(t, arr{user(text("go")),
			assistant(toolUse("toolu_1", "Read", obj{}), toolUse("toolu_2", "Bash", obj{})),
			user(toolResult("toolu_2", "b"), toolResult("toolu_1", "a"))}, obj{"tools": tools}), ""},
		{"system message between call and result", body(t, arr{user(text("go")),
			assistant(toolUse("toolu_1", "Read", obj{})), obj{"role": "system", "content": "note"},
			user(toolResult("toolu_1", "a"))}, obj{"tools": tools}), ""},
		{"tool_use in a user message", body(t, arr{user(toolUse("toolu_1", "Read", obj{}))}, obj{"tools": tools}),
			"tool_use blocks can only be in assistant messages"},

		// tools
		{"tools absent", body(t, arr{user(text("a"))}, obj{"tools": nil}), ""},
		{"tools JSON null", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"}],"tools":null}`,
			"tools: Input should be a valid list"},
		{"tools empty without tool blocks (title request)", body(t, arr{user(text("a"))}, obj{"tools": arr{}}), ""},
		{"tools empty with tool blocks", body(t, pair(user(toolResult("toolu_1", "x"))), obj{"tools": arr{}}),
			"tools: List should have at least 1 item"},
		{"bad tool name", body(t, arr{user(text("a"))}, obj{"tools": arr{tool("bad name!")}}), "String should match pattern"},
		{"long MCP tool name", body(t, arr{user(text("a"))}, obj{"tools": arr{tool("mcp__plugin_synaxi_synaxi__repo_map")}}), ""},
		{"duplicate tool names", body(t, arr{user(text("a"))}, obj{"tools": arr{tool("Read"), tool("Read")}}), "unique"},
		{"typed server tool", body(t, arr{user(text("a"))}, obj{"tools": arr{obj{"type": "web_search_20250305", "name": "web_search"}}}), ""},
		{"custom tool without schema", body(t, arr{user(text("a"))}, obj{"tools": arr{obj{"name": "X"}}}), "input_schema: Field required"},

		// cache_control
		{"four breakpoints", body(t, arr{user(cached(text("a"), ""), cached(text("b"), ""))},
			obj{"tools": arr{cached(tool("Read"), "")}, "system": arr{cached(text("s"), "")}}), ""},
		{"five breakpoints", body(t, arr{user(cached(text("a"), ""), cached(text("b"), ""), cached(text("c"), ""))},
			obj{"tools": arr{cached(tool("Read"), "")}, "system": arr{cached(text("s"), "")}}),
			"A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"automatic caching takes a slot", body(t, arr{user(cached(text("a"), ""), cached(text("b"), ""), text("c"))},
			obj{"tools": arr{cached(tool("Read"), "")}, "system": arr{cached(text("s"), "")}, "cache_control": obj{"type": "ephemeral"}}),
			"A maximum of 4 blocks"},
		{"1h before 5m", body(t, arr{user(cached(text("a"), "5m"))}, obj{"system": arr{cached(text("s"), "1h")}}), ""},
		{"5m before 1h", body(t, arr{user(cached(text("a"), "1h"))}, obj{"system": arr{cached(text("s"), "5m")}}),
			"must not come after a ttl='5m'"},
		{"breakpoints inside tool_result content count", body(t, arr{user(text("go")),
			assistant(toolUse("toolu_1", "Read", obj{})),
			user(obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": arr{cached(text("a"), ""), cached(text("b"), "")}})},
			obj{"tools": arr{cached(tool("Read"), "")}, "system": arr{cached(text("s"), ""), cached(text("t"), "")}}),
			"Found 5."},
		{"bad ttl", body(t, arr{user(cached(text("a"), "10m"))}, nil), "ttl"},
		{"bad cache_control type", body(t, arr{user(obj{"type": "text", "text": "a", "cache_control": obj{"type": "persistent"}})}, nil),
			"Input should be 'ephemeral'"},

		// thinking
		{"thinking with signature", body(t, arr{user(text("a")),
			assistant(obj{"type": "thinking", "thinking": "t", "signature": "sig"}, text("b")), user(text("c"))}, nil), ""},
		{"thinking without signature", body(t, arr{user(text("a")),
			assistant(obj{"type": "thinking", "thinking": "t"}, text("b")), user(text("c"))}, nil), "signature: Field required"},
		{"thinking with cache_control", body(t, arr{user(text("a")),
			assistant(cached(obj{"type": "thinking", "thinking": "t", "signature": "sig"}, ""), text("b")), user(text("c"))}, nil),
			"cache_control cannot be set on thinking blocks"},
		{"thinking budget", body(t, arr{user(text("a"))}, obj{"max_tokens": 4096, "thinking": obj{"type": "enabled", "budget_tokens": 1024}}), ""},
		{"thinking budget too small", body(t, arr{user(text("a"))}, obj{"thinking": obj{"type": "enabled", "budget_tokens": 100}}),
			"greater than or equal to 1024"},
		{"thinking budget not below max_tokens", body(t, arr{user(text("a"))}, obj{"max_tokens": 2000, "thinking": obj{"type": "enabled", "budget_tokens": 2000}}),
			"`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"unknown thinking type", body(t, arr{user(text("a"))}, obj{"thinking": obj{"type": "maybe"}}), "thinking.type"},
		{"enabled thinking: tool loop keeps its thinking", body(t, arr{user(text("a")),
			assistant(obj{"type": "thinking", "thinking": "t", "signature": "sig"}, toolUse("toolu_1", "Read", obj{})),
			user(toolResult("toolu_1", "x"))}, obj{"tools": tools, "max_tokens": 4096, "thinking": obj{"type": "enabled", "budget_tokens": 1024}}), ""},
		{"enabled thinking: tool loop without thinking", body(t, arr{user(text("a")),
			assistant(toolUse("toolu_1", "Read", obj{})), user(toolResult("toolu_1", "x"))},
			obj{"tools": tools, "max_tokens": 4096, "thinking": obj{"type": "enabled", "budget_tokens": 1024}}),
			"Expected `thinking` or `redacted_thinking`, but found `tool_use`"},
		{"adaptive thinking: tool loop without thinking", body(t, arr{user(text("a")),
			assistant(toolUse("toolu_1", "Read", obj{})), user(toolResult("toolu_1", "x"))},
			obj{"tools": tools, "thinking": obj{"type": "adaptive"}}), ""},
		{"redacted thinking", body(t, arr{user(text("a")),
			assistant(obj{"type": "redacted_thinking", "data": "xyz"}, text("b")), user(text("c"))}, nil), ""},
	}
	s := New(Options{})
	defer s.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw := post(t, s, "/v1/messages", tc.body)
			reqs := s.Requests()
			last := reqs[len(reqs)-1]
			if tc.wantErr == "" {
				assert.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
				assert.Empty(t, last.Invalid)
				return
			}
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(raw))
			m := decodeJSON(t, raw)
			assert.Equal(t, "error", m["type"])
			e := m["error"].(obj)
			assert.Equal(t, "invalid_request_error", e["type"])
			assert.Contains(t, e["message"], tc.wantErr)
			assert.Equal(t, e["message"], last.Invalid)
			assert.Equal(t, resp.Header.Get("request-id"), m["request_id"])
		})
	}
}

func TestRejectEmptyToolsOption(t *testing.T) {
	s := New(Options{RejectEmptyTools: true})
	defer s.Close()
	resp, raw := post(t, s, "/v1/messages", body(t, arr{user(text("a"))}, obj{"tools": arr{}}))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(raw), "at least 1 item")
}

func TestCountTokensAcceptsOnlyItsFields(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, tc := range []struct {
		name    string
		extra   obj
		wantErr string
	}{
		{"plain", obj{"max_tokens": nil}, ""},
		{"all allowed fields", obj{"max_tokens": nil, "system": "s", "tools": arr{tool("Read")}, "tool_choice": obj{"type": "auto"},
			"thinking": obj{"type": "adaptive"}, "output_config": obj{"effort": "low"}, "context_management": obj{"edits": arr{}},
			"cache_control": obj{"type": "ephemeral"}}, ""},
		{"max_tokens", nil, "max_tokens: Extra inputs are not permitted"},
		{"stream", obj{"max_tokens": nil, "stream": true}, "stream: Extra inputs are not permitted"},
		{"metadata", obj{"max_tokens": nil, "metadata": obj{}}, "metadata: Extra inputs are not permitted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw := post(t, s, "/v1/messages/count_tokens", body(t, arr{user(text("hello"))}, tc.extra))
			if tc.wantErr == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
				assert.Greater(t, decodeJSON(t, raw)["input_tokens"], float64(0))
				return
			}
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, string(raw), tc.wantErr)
		})
	}
}

func TestRequireAuth(t *testing.T) {
	s := New(Options{RequireAuth: true})
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	ok, raw := post(t, s, "/v1/messages", body(t, arr{user(text("a"))}, nil))
	assert.Equal(t, http.StatusOK, ok.StatusCode, string(raw))
}
