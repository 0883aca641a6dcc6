package gate

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
)

// Rule is the gate's configuration: the projection scope, one of
// config.ScopeAll, config.ScopeWorker or config.ScopeOff.
type Rule struct{ Scope string }

// Decision is the gate's answer for one request.
type Decision struct {
	// Gated: the request is handed to the projection engine and measured.
	Gated bool
	// Passed says why a Messages request in scope was not gated (a side
	// request); its ledger row records it. Empty when the request is
	// gated or the scope never takes it (not Messages, another agent's
	// request with scope "worker", scope "off").
	Passed string
}

// SideMaxTokens is the largest max_tokens of a side request: Claude
// Code's agent loops ask for tens of thousands of output tokens, its quota
// probes for 1 and its small helper calls for a few hundred.
const SideMaxTokens = 1024

// compactPrompt is in the final user message of Claude Code's compaction
// summary request (the /compact command and auto-compact): Claude Code
// 2.1.39 opens the message with it, 2.1.332 puts a "respond with text
// only" paragraph before it.
const compactPrompt = "Your task is to create a detailed summary of"

// PassedCompaction opens the pass reason of a compaction summary request.
const PassedCompaction = "compaction"

// compactAgent prefixes the agent id Claude Code gives its compaction agent.
const compactAgent = "acompact"

// Decide gates one request. body is read for its top-level fields only,
// and, when it mentions the compaction prompt, its final message.
func (r Rule) Decide(method, path string, h http.Header, body *Body) Decision {
	r = r.For(h) // a launch's own scope, if it asks for one
	if r.Scope == config.ScopeOff || !IsMessages(method, path) {
		return Decision{}
	}
	if IsWorker(body) {
		return Decision{Gated: true}
	}
	if r.Scope == config.ScopeWorker {
		return Decision{}
	}
	if why := Side(h, body); why != "" {
		return Decision{Passed: why}
	}
	return Decision{Gated: true}
}

// Side says why a Messages request is not a conversation to project, or
// "" when it is one. It never reads message text except the final
// message's, and that only when the body holds the compaction prompt at
// all.
func Side(h http.Header, body *Body) string {
	msgs := body.Field("messages")
	if !msgs.IsArray() {
		return "no conversation: the body has no messages list"
	}
	if tools := body.Field("tools"); !tools.IsArray() || isEmptyArray(tools.Raw) {
		return "side request: no tools (title or topic generation, a helper call)"
	}
	if body.Field("output_config").Get("format").Exists() {
		return "side request: structured output (output_config.format)"
	}
	if mt := body.Field("max_tokens"); mt.Type == gjson.Number && mt.Num <= SideMaxTokens {
		return fmt.Sprintf("side request: max_tokens %s (a quota probe or a helper call)", mt.Raw)
	}
	if strings.HasPrefix(h.Get(AgentHeader), compactAgent) || isCompaction(body, msgs) {
		return PassedCompaction + ": Claude Code's summary request passes as sent"
	}
	return ""
}

func isEmptyArray(raw string) bool {
	return strings.TrimSpace(strings.TrimSpace(raw)[1:]) == "]"
}

// isCompaction reports whether the final message holds the compaction
// summary prompt.
func isCompaction(body *Body, msgs gjson.Result) bool {
	if !bytes.Contains(body.Bytes(), []byte(compactPrompt)) {
		return false // fast path: almost every request
	}
	var last gjson.Result
	msgs.ForEach(func(_, m gjson.Result) bool {
		last = m
		return true
	})
	if last.Get("role").Str != "user" {
		return false
	}
	found := false
	c := last.Get("content")
	if c.Type == gjson.String {
		return strings.Contains(c.Str, compactPrompt)
	}
	c.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "text" {
			found = strings.Contains(b.Get("text").Str, compactPrompt)
			return !found
		}
		return true
	})
	return found
}
