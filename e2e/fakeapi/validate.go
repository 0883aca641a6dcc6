package fakeapi

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// maxBreakpoints is the real API's limit on cache_control blocks per request.
const maxBreakpoints = 4

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// messagesFields are the top-level fields the Messages API accepts.
// "safeguards" (a list of classifier contexts) is what Claude Code 2.1.332
// sends once the person approves a plan in plan mode
// (TestPlanModeProjectedRealClient).
var messagesFields = fieldSet("model", "messages", "max_tokens", "system", "tools",
	"tool_choice", "thinking", "stream", "stop_sequences", "temperature", "top_p",
	"top_k", "metadata", "service_tier", "inference_geo", "output_config",
	"cache_control", "container", "context_management", "mcp_servers", "speed",
	"safeguards")

// countTokensFields are the only fields count_tokens accepts.
var countTokensFields = fieldSet("model", "messages", "system", "tools", "tool_choice",
	"thinking", "output_config", "context_management", "cache_control", "mcp_servers")

// contentTypes are the content block types the fake knows. Anything else is
// rejected the way the real API rejects an unknown tag.
var contentTypes = fieldSet("text", "image", "document", "search_result", "tool_use",
	"tool_result", "thinking", "redacted_thinking", "server_tool_use",
	"web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
	"bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
	"mcp_tool_use", "mcp_tool_result", "container_upload", "tool_reference")

func fieldSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// validate checks a parsed request the way the real API does. countTokens
// selects count_tokens rules (no max_tokens, fewer fields). rejectEmptyTools
// also rejects "tools": [] in a request without tool blocks.
func validate(p *parsedRequest, countTokens, rejectEmptyTools bool) error {
	allowed := messagesFields
	if countTokens {
		allowed = countTokensFields
	}
	for _, name := range sortedKeys(p.fields) {
		if !allowed[name] {
			return invalidf("%s: Extra inputs are not permitted", name)
		}
	}
	if p.Model == "" {
		return invalidf("model: Field required")
	}
	if !countTokens {
		if p.MaxTokens == nil {
			return invalidf("max_tokens: Field required")
		}
		if *p.MaxTokens < 0 {
			return invalidf("max_tokens: Input should be greater than or equal to 0")
		}
	}
	if _, ok := p.fields["messages"]; !ok || isNull(p.fields["messages"]) {
		return invalidf("messages: Field required")
	}
	if len(p.Messages) == 0 {
		return invalidf("messages: at least one message is required")
	}
	for _, check := range []func(*parsedRequest) error{
		validateSystem, validateMessages, validatePairing,
	} {
		if err := check(p); err != nil {
			return err
		}
	}
	if err := validateTools(p, rejectEmptyTools); err != nil {
		return err
	}
	if err := validateThinking(p, countTokens); err != nil {
		return err
	}
	if err := validateThinkingInToolLoop(p); err != nil {
		return err
	}
	return validateBreakpoints(p)
}

// validateThinking checks the thinking parameter: an enabled budget is at
// least 1024 tokens and below max_tokens.
func validateThinking(p *parsedRequest, countTokens bool) error {
	raw, ok := p.fields["thinking"]
	if !ok || isNull(raw) {
		return nil
	}
	var th struct {
		Type   string `json:"type"`
		Budget *int64 `json:"budget_tokens"`
	}
	if err := json.Unmarshal(raw, &th); err != nil {
		return invalidf("thinking: Input should be a valid dictionary")
	}
	switch th.Type {
	case "adaptive", "disabled":
		return nil
	case "enabled":
	default:
		return invalidf("thinking.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'", th.Type)
	}
	if th.Budget == nil {
		return invalidf("thinking.enabled.budget_tokens: Field required")
	}
	if *th.Budget < 1024 {
		return invalidf("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
	}
	if !countTokens && *p.MaxTokens <= *th.Budget {
		return invalidf("`max_tokens` must be greater than `thinking.budget_tokens`.")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func validateTools(p *parsedRequest, rejectEmpty bool) error {
	if p.toolsNull {
		return invalidf("tools: Input should be a valid list")
	}
	if p.toolsSet && len(p.Tools) == 0 && (rejectEmpty || p.hasToolBlocks()) {
		return invalidf("tools: List should have at least 1 item after validation, not 0")
	}
	seen := map[string]bool{}
	for _, t := range p.Tools {
		var def struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			InputSchema any    `json:"input_schema"`
		}
		if err := json.Unmarshal(t.canon, &def); err != nil {
			return invalidf("%s: Input should be a valid dictionary", t.where)
		}
		if !toolNamePattern.MatchString(def.Name) {
			return invalidf("%s.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", t.where)
		}
		if (def.Type == "" || def.Type == "custom") && def.InputSchema == nil {
			return invalidf("%s.input_schema: Field required", t.where)
		}
		if seen[def.Name] {
			return invalidf("tools: Tool names must be unique.")
		}
		seen[def.Name] = true
	}
	return nil
}

func (p *parsedRequest) hasToolBlocks() bool {
	for _, m := range p.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_use" || b.Type == "tool_result" {
				return true
			}
		}
	}
	return false
}

func validateSystem(p *parsedRequest) error {
	if p.sysString {
		return nil
	}
	for _, b := range p.System {
		if b.Type != "text" {
			return invalidf("%s.type: Input should be 'text'", b.where)
		}
		if b.Text == nil {
			return invalidf("%s.text: Field required", b.where)
		}
		if *b.Text == "" {
			return invalidf("system: text content blocks must be non-empty")
		}
	}
	return nil
}

// validateThinkingInToolLoop enforces, for thinking type "enabled", that the
// assistant turn whose tool calls the final user turn answers starts with a
// thinking block: the real API needs the thinking of the current tool loop
// back. (With "adaptive" thinking a turn may have none, so nothing is
// required.)
func validateThinkingInToolLoop(p *parsedRequest) error {
	if thinkingType(p) != "enabled" {
		return nil
	}
	turns := mergeTurns(p.Messages)
	n := len(turns)
	if n < 2 || turns[n-1].role != "user" || turns[n-2].role != "assistant" {
		return nil
	}
	answersTools := false
	for _, b := range turns[n-1].blocks {
		if b.Type == "tool_result" {
			answersTools = true
		}
	}
	asst := turns[n-2].blocks
	if !answersTools || len(asst) == 0 {
		return nil
	}
	if first := asst[0]; first.Type != "thinking" && first.Type != "redacted_thinking" {
		return invalidf("%s.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.",
			first.where, first.Type)
	}
	return nil
}

func validateMessages(p *parsedRequest) error {
	last := len(p.Messages) - 1
	for i, m := range p.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		case "":
			return invalidf("%s.role: Field required", m.where)
		default:
			return invalidf("%s.role: Input should be 'user', 'assistant' or 'system'", m.where)
		}
		finalAssistant := i == last && m.Role == "assistant"
		if len(m.Blocks) == 0 || (m.strContent != nil && *m.strContent == "") {
			// Claude Code 2.1.332 sends an empty role:"system" message after
			// /compact; a client that works against the real API sends
			// nothing it rejects, so the fake accepts it too.
			if finalAssistant || m.Role == "system" {
				continue
			}
			return invalidf("%s: all messages must have non-empty content except for the optional final assistant message", m.where)
		}
		if m.strContent != nil {
			continue
		}
		for _, b := range m.Blocks {
			if isToolChange(b) && m.Role == "system" && p.betas[toolChangesBeta] {
				if err := validateToolChange(b); err != nil {
					return err
				}
				continue
			}
			if err := validateBlock(m.Role, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateBlock(role string, b *block) error {
	if !contentTypes[b.Type] {
		return invalidf("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags", b.where, b.Type)
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return invalidf("%s.text: Field required", b.where)
		}
		if *b.Text == "" {
			if b.cc != nil {
				return invalidf("%s: cache_control cannot be set for empty text blocks", b.where)
			}
			return invalidf("messages: text content blocks must be non-empty")
		}
	case "tool_use":
		if role != "assistant" {
			return invalidf("%s: tool_use blocks can only be in assistant messages", b.where)
		}
		if b.ID == "" {
			return invalidf("%s.id: Field required", b.where)
		}
		if !toolNamePattern.MatchString(b.Name) {
			return invalidf("%s.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", b.where)
		}
		if isNull(b.Input) || b.Input[0] != '{' {
			return invalidf("%s.input: Input should be a valid dictionary", b.where)
		}
	case "tool_result":
		if role != "user" {
			return invalidf("%s: tool_result blocks can only be in user messages", b.where)
		}
		if b.ToolUseID == "" {
			return invalidf("%s.tool_use_id: Field required", b.where)
		}
	case "thinking", "redacted_thinking":
		if role != "assistant" {
			return invalidf("%s: %s blocks can only be in assistant messages", b.where, b.Type)
		}
		if b.cc != nil {
			return invalidf("%s.cache_control: cache_control cannot be set on thinking blocks", b.where)
		}
		if b.Type == "thinking" {
			if b.Thinking == nil {
				return invalidf("%s.thinking: Field required", b.where)
			}
			if b.Signature == nil || *b.Signature == "" {
				return invalidf("%s.signature: Field required", b.where)
			}
			if !signatureValid(*b.Thinking, *b.Signature) {
				return invalidf("%s: Invalid `signature` in `thinking` block", b.where)
			}
		}
	}
	return nil
}

// turn is a run of consecutive messages of one role, merged the way the real
// API merges them. role:"system" messages are transparent: they neither break
// a run nor separate a tool_use from its tool_result.
type turn struct {
	role   string
	where  string
	blocks []*block
}

func mergeTurns(msgs []*message) []turn {
	var turns []turn
	for _, m := range msgs {
		if m.Role == "system" {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].role == m.Role {
			turns[n-1].blocks = append(turns[n-1].blocks, m.Blocks...)
			continue
		}
		turns = append(turns, turn{role: m.Role, where: m.where, blocks: append([]*block(nil), m.Blocks...)})
	}
	return turns
}

func validatePairing(p *parsedRequest) error {
	ids := map[string]bool{}
	for _, m := range p.Messages {
		for _, b := range m.Blocks {
			if b.Type != "tool_use" {
				continue
			}
			if ids[b.ID] {
				return invalidf("%s: `tool_use` ids must be unique", b.where)
			}
			ids[b.ID] = true
		}
	}
	turns := mergeTurns(p.Messages)
	for i, t := range turns {
		var pending []string
		if t.role == "assistant" {
			pending = toolUseIDs(t.blocks)
		}
		var prevIDs map[string]bool
		if t.role == "user" && i > 0 && turns[i-1].role == "assistant" {
			prevIDs = fieldSet(toolUseIDs(turns[i-1].blocks)...)
		}
		if t.role == "user" {
			if err := checkResults(t, prevIDs); err != nil {
				return err
			}
		}
		if len(pending) == 0 {
			continue
		}
		var answered map[string]bool
		if i+1 < len(turns) {
			answered = map[string]bool{}
			for _, b := range turns[i+1].blocks {
				if b.Type == "tool_result" {
					answered[b.ToolUseID] = true
				}
			}
		}
		var missing []string
		for _, id := range pending {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return invalidf("%s: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
				t.where, strings.Join(missing, ", "))
		}
	}
	return nil
}

// checkResults checks a user turn: tool_results first, each answering a
// tool_use of the immediately preceding assistant turn, at most once.
func checkResults(t turn, prevIDs map[string]bool) error {
	seenOther := false
	answered := map[string]bool{}
	for _, b := range t.blocks {
		if b.Type != "tool_result" {
			seenOther = true
			continue
		}
		if seenOther {
			return invalidf("%s: tool_result blocks must come before any other content in a user message", b.where)
		}
		if !prevIDs[b.ToolUseID] {
			return invalidf("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
				b.where, b.ToolUseID)
		}
		if answered[b.ToolUseID] {
			return invalidf("%s: each `tool_use` id may be answered by only one `tool_result`: %s", b.where, b.ToolUseID)
		}
		answered[b.ToolUseID] = true
	}
	return nil
}

func toolUseIDs(blocks []*block) []string {
	var ids []string
	for _, b := range blocks {
		if b.Type == "tool_use" {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

func validateBreakpoints(p *parsedRequest) error {
	var marks []*block
	for _, b := range p.prefix() {
		for range b.nested {
			marks = append(marks, b)
		}
		if b.cc != nil {
			marks = append(marks, b)
		}
	}
	if p.topCC != nil {
		if len(marks) >= maxBreakpoints {
			return invalidf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, len(marks)+1)
		}
		all := p.prefix()
		if last := all[len(all)-1]; last.cc != nil && last.cc.ttlOrDefault() != p.topCC.ttlOrDefault() {
			return invalidf("cache_control: the last block already has a cache_control with a different ttl")
		}
	}
	if len(marks) > maxBreakpoints {
		return invalidf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, len(marks))
	}
	seen5m := false
	for _, b := range marks {
		switch b.cc.ttlOrDefault() {
		case "5m":
			seen5m = true
		case "1h":
			if seen5m {
				return invalidf("%s.cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Blocks with longer TTLs must come first.", b.where)
			}
		}
	}
	return nil
}
