package hookio

import (
	"encoding/json"
	"fmt"
	"io"
)

// MaxText is Claude Code's cap on a hook's output strings; longer text is
// moved to a file and replaced by a preview, so synaxi stays below it.
const MaxText = 10000

type specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

type output struct {
	// Continue false stops Claude entirely; StopReason is shown to the
	// user, not to Claude.
	Continue           *bool     `json:"continue,omitempty"`
	StopReason         string    `json:"stopReason,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
}

// WriteDeny writes a PreToolUse decision denying the tool call; reason is the
// only text the model sees.
func WriteDeny(w io.Writer, reason string) error {
	return write(w, output{HookSpecificOutput: &specific{
		HookEventName:            "PreToolUse",
		PermissionDecision:       "deny",
		PermissionDecisionReason: clip(reason),
	}})
}

// WriteSessionContext writes SessionStart additional context for the model
// and, if message is not empty, a message shown to the user.
func WriteSessionContext(w io.Writer, context, message string) error {
	o := output{SystemMessage: clip(message)}
	if context != "" {
		o.HookSpecificOutput = &specific{HookEventName: "SessionStart", AdditionalContext: clip(context)}
	}
	return write(w, o)
}

// WriteSubagentContext writes SubagentStart additional context for the
// subagent's model.
func WriteSubagentContext(w io.Writer, context string) error {
	return write(w, output{HookSpecificOutput: &specific{HookEventName: "SubagentStart", AdditionalContext: clip(context)}})
}

// WriteToolContext writes additional context for the model after a tool
// call (event is PostToolUse or PostToolUseFailure).
func WriteToolContext(w io.Writer, event, context string) error {
	return write(w, output{HookSpecificOutput: &specific{HookEventName: event, AdditionalContext: clip(context)}})
}

// WriteStop writes a PreToolUse decision that denies the call, telling the
// model reason, and stops Claude (continue false), showing stop to the user.
func WriteStop(w io.Writer, reason, stop string) error {
	no := false
	return write(w, output{Continue: &no, StopReason: clip(stop), HookSpecificOutput: &specific{
		HookEventName:            "PreToolUse",
		PermissionDecision:       "deny",
		PermissionDecisionReason: clip(reason),
	}})
}

func write(w io.Writer, o output) error {
	data, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode hook output: %w", err)
	}
	data = append(data, '\n')
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("write hook output: %w", err)
	}
	return nil
}

// clip keeps s under MaxText bytes without splitting a UTF-8 sequence.
func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
