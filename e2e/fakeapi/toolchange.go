package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Mid-conversation tool changes. Claude Code 2.1.332 sends the tools of an
// MCP server that connects late in a conversation as a role:"system"
// message of tool_addition blocks, each adding a tool by value
// ({"type":"tool_addition","tool":{"type":"tool_definition",
// "definition":{…}}}) or by name ({"tool":{"type":"tool_reference",
// "name":…}}, seen in TestPersonInTheLoopInteractive with the plugin's
// server, its tools declared with defer_loading); a tool_removal names a
// tool by reference. It sends them only on requests whose anthropic-beta
// header carries toolChangesBeta: its bundle adds the beta to a request's
// betas when late additions may go on the wire (with the plugin, every
// request of the sessions we ran), and falls back to announcing the tools
// through ToolSearch when the API rejects the header, the block type or
// the model. The fake
// accepts the blocks under that beta, and rejects them as an unknown tag
// otherwise, as it did before. It does not model what the real API does
// with them beyond their shape: an added tool is not in View.ToolNames.

// toolChangesBeta is the beta under which the blocks are accepted.
const toolChangesBeta = "mid-conversation-tool-changes-2026-07-01"

// betas are the values of a request's anthropic-beta headers.
func betas(h http.Header) map[string]bool {
	out := map[string]bool{}
	for _, v := range h.Values("anthropic-beta") {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out[b] = true
			}
		}
	}
	return out
}

func isToolChange(b *block) bool { return b.Type == "tool_addition" || b.Type == "tool_removal" }

// validateToolChange checks a tool_addition or tool_removal block's tool.
func validateToolChange(b *block) error {
	var tool struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Definition json.RawMessage `json:"definition"`
	}
	if isNull(b.Tool) {
		return invalidf("%s.tool: Field required", b.where)
	}
	if err := json.Unmarshal(b.Tool, &tool); err != nil {
		return invalidf("%s.tool: Input should be a valid dictionary", b.where)
	}
	if tool.Type == "tool_reference" || b.Type == "tool_removal" {
		if tool.Type != "tool_reference" {
			return invalidf("%s.tool.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'tool_reference'", b.where, tool.Type)
		}
		if !toolNamePattern.MatchString(tool.Name) {
			return invalidf("%s.tool.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", b.where)
		}
		return nil
	}
	if tool.Type != "tool_definition" {
		return invalidf("%s.tool.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'tool_definition', 'tool_reference'", b.where, tool.Type)
	}
	var def struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(tool.Definition, &def); err != nil || isNull(tool.Definition) {
		return invalidf("%s.tool.definition: Input should be a valid dictionary", b.where)
	}
	if !toolNamePattern.MatchString(def.Name) {
		return invalidf("%s.tool.definition.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", b.where)
	}
	if isNull(def.InputSchema) {
		return invalidf("%s.tool.definition.input_schema: Field required", b.where)
	}
	return nil
}
