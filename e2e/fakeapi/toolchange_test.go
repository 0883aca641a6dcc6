package fakeapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolChangesOnlyUnderTheirBeta: a role:"system" message of
// tool_addition or tool_removal blocks is accepted when the request's
// anthropic-beta header carries the mid-conversation tool changes beta
// (among others), and rejected as an unknown tag without it, in another
// role, or with a malformed tool.
func TestToolChangesOnlyUnderTheirBeta(t *testing.T) {
	def := obj{"name": "mcp__late__find", "description": "Find things.", "input_schema": obj{"type": "object"}}
	add := obj{"type": "tool_addition", "tool": obj{"type": "tool_definition", "definition": def}}
	remove := obj{"type": "tool_removal", "tool": obj{"type": "tool_reference", "name": "mcp__late__find"}}
	system := func(blocks ...obj) obj { return obj{"role": "system", "content": blocks} }
	const both = "claude-code-20250219, " + toolChangesBeta + ",interleaved-thinking-2025-05-14"
	cases := []struct {
		name, beta string
		msgs       arr
		wantErr    string
	}{
		{"addition under the beta", both, arr{user(text("a")), system(add)}, ""},
		{"removal under the beta", toolChangesBeta, arr{user(text("a")), system(add), system(remove)}, ""},
		{"addition without the beta", "claude-code-20250219", arr{user(text("a")), system(add)},
			"Input tag 'tool_addition' found using 'type' does not match any of the expected tags"},
		{"addition in a user message", both, arr{user(add)}, "Input tag 'tool_addition'"},
		{"addition without a tool", both, arr{user(text("a")), system(obj{"type": "tool_addition"})}, "tool: Field required"},
		{"addition by name", both, arr{user(text("a")), system(obj{"type": "tool_addition", "tool": remove["tool"]}, add)}, ""},
		{"addition of a tool of another type", both, arr{user(text("a")), system(obj{"type": "tool_addition", "tool": obj{"type": "custom", "name": "x"}})},
			"tool.type: Input tag 'custom'"},
		{"removal of a definition", both, arr{user(text("a")), system(obj{"type": "tool_removal", "tool": add["tool"]})},
			"tool.type: Input tag 'tool_definition'"},
		{"addition without a schema", both, arr{user(text("a")), system(obj{"type": "tool_addition",
			"tool": obj{"type": "tool_definition", "definition": obj{"name": "x"}}})}, "input_schema: Field required"},
		{"removal of a bad name", both, arr{user(text("a")), system(obj{"type": "tool_removal",
			"tool": obj{"type": "tool_reference", "name": "a b"}})}, "tool.name: String should match"},
	}
	s := New(Options{})
	defer s.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body(t, tc.msgs, nil)))
			require.NoError(t, err)
			req.Header.Set("x-api-key", "test")
			req.Header.Set("anthropic-beta", tc.beta)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			last := s.Requests()[len(s.Requests())-1]
			if tc.wantErr == "" {
				assert.Equal(t, http.StatusOK, resp.StatusCode, last.Invalid)
				return
			}
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, last.Invalid, tc.wantErr)
		})
	}
}
