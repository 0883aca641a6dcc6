// Package hookio reads the JSON Claude Code writes to a hook's (or the status
// line's) stdin and writes the JSON a hook answers with.
//
// Input is untrusted and its shape changes between Claude Code versions, so
// parsing is tolerant: unknown fields are ignored, missing ones are empty,
// and only the fields synaxi uses are pulled out (with tidwall/gjson, which
// does not build a tree for the rest). Reading takes exactly one JSON value
// within a size limit and a deadline: some Claude Code versions never close
// the status line's stdin, and a reader that waits for EOF hangs.
package hookio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tidwall/gjson"
)

// MaxInput bounds how much of stdin is read. Hook input carries whole tool
// responses (a large file's content in PostToolUse), so the bound is
// generous; anything larger is refused and the hook fails open.
const MaxInput = 32 << 20

// DefaultDeadline bounds how long reading stdin may take.
const DefaultDeadline = 2 * time.Second

// ErrTooLarge reports input over the size limit.
var ErrTooLarge = errors.New("hookio: input over the size limit")

// ErrDeadline reports that no complete JSON value arrived in time.
var ErrDeadline = errors.New("hookio: no complete input before the deadline")

// ErrNotObject reports input that is valid JSON but not an object.
var ErrNotObject = errors.New("hookio: input is not a JSON object")

var errInvalid = errors.New("hookio: input is not valid JSON")

// ReadValue reads one JSON value from r, at most max bytes, within deadline.
// It never waits for EOF after the value. The reading goroutine is abandoned
// on timeout (the process exits soon after; r is stdin).
func ReadValue(r io.Reader, max int64, deadline time.Duration) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		lr := &io.LimitedReader{R: r, N: max + 1}
		dec := json.NewDecoder(lr)
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if lr.N <= 0 {
			ch <- result{nil, ErrTooLarge}
			return
		}
		if err != nil {
			ch <- result{nil, fmt.Errorf("decode hook input: %w", err)}
			return
		}
		ch <- result{raw, nil}
	}()
	t := time.NewTimer(deadline)
	defer t.Stop()
	select {
	case res := <-ch:
		return res.raw, res.err
	case <-t.C:
		return nil, ErrDeadline
	}
}

// Common holds the fields every hook event carries.
type Common struct {
	SessionID      string
	TranscriptPath string
	Cwd            string
	HookEventName  string
	PermissionMode string
	// AgentID and AgentType are set inside subagents (and with --agent,
	// AgentType only). An empty AgentID is the main conversation.
	AgentID   string
	AgentType string
}

// Input is a parsed hook input. Event-specific fields are empty when the
// event does not carry them.
type Input struct {
	Common

	// SessionStart.
	Source string // startup, resume, clear, compact, fork
	Model  string

	// PreToolUse and PostToolUse.
	ToolName     string
	ToolUseID    string
	ToolInput    gjson.Result
	ToolResponse gjson.Result
	// ToolError is PostToolUseFailure's error text.
	ToolError string

	// PreCompact.
	Trigger            string // manual, auto
	CustomInstructions string

	// SessionEnd.
	Reason string

	// Raw is the whole input value.
	Raw []byte
}

// Parse extracts an Input from one JSON object.
func Parse(raw []byte) (*Input, error) {
	raw = bytes.TrimSpace(raw)
	if !gjson.ValidBytes(raw) {
		return nil, errInvalid
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return nil, ErrNotObject
	}
	get := func(path string) string { return strAt(root, path) }
	in := &Input{
		Common: Common{
			SessionID:      get("session_id"),
			TranscriptPath: get("transcript_path"),
			Cwd:            get("cwd"),
			HookEventName:  get("hook_event_name"),
			PermissionMode: get("permission_mode"),
			AgentID:        get("agent_id"),
			AgentType:      get("agent_type"),
		},
		Source:             get("source"),
		ToolName:           get("tool_name"),
		ToolUseID:          get("tool_use_id"),
		ToolInput:          root.Get("tool_input"),
		ToolResponse:       root.Get("tool_response"),
		ToolError:          get("error"),
		Trigger:            get("trigger"),
		CustomInstructions: get("custom_instructions"),
		Reason:             get("reason"),
		Raw:                raw,
	}
	// SessionStart's model is a string in some versions and an object in
	// others.
	if m := root.Get("model"); m.Type == gjson.String {
		in.Model = m.Str
	} else if m.IsObject() {
		in.Model = m.Get("id").String()
	}
	return in, nil
}

// strAt is the string at path under v, "" when absent or not a string.
func strAt(v gjson.Result, path string) string {
	r := v.Get(path)
	if r.Type != gjson.String {
		return ""
	}
	return r.Str
}

// Read reads and parses one hook input from r.
func Read(r io.Reader) (*Input, error) {
	raw, err := ReadValue(r, MaxInput, DefaultDeadline)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// Str returns the string at path in the tool input ("" if absent or not a
// string).
func (in *Input) Str(path string) string { return strAt(in.ToolInput, path) }

// Int returns the non-negative integer at path in the tool input and whether
// it was present as a number (or a numeric string, which some models send).
func (in *Input) Int(path string) (int, bool) {
	v := in.ToolInput.Get(path)
	switch v.Type {
	case gjson.Number:
	case gjson.String:
		if !gjson.Valid(v.Str) {
			return 0, false
		}
		v = gjson.Parse(v.Str)
		if v.Type != gjson.Number {
			return 0, false
		}
	default:
		return 0, false
	}
	f := v.Float()
	if f < 0 || f > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// ReadArgs is the Read tool's input.
type ReadArgs struct {
	FilePath string
	Offset   int // 0 when absent
	Limit    int // 0 when absent
}

// ReadArgs returns the Read tool's arguments.
func (in *Input) ReadArgs() ReadArgs {
	a := ReadArgs{FilePath: in.Str("file_path")}
	a.Offset, _ = in.Int("offset")
	a.Limit, _ = in.Int("limit")
	return a
}

// Command returns the Bash tool's command.
func (in *Input) Command() string { return in.Str("command") }

// EditedPath returns the file an Edit, Write, MultiEdit or NotebookEdit call
// changes ("" for other tools).
func (in *Input) EditedPath() string {
	switch in.ToolName {
	case "Edit", "Write", "MultiEdit":
		return in.Str("file_path")
	case "NotebookEdit":
		if p := in.Str("notebook_path"); p != "" {
			return p
		}
		return in.Str("file_path")
	}
	return ""
}
