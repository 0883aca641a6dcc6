package replay

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/synaxi/synaxi/internal/transcript"
)

// clientJSON holds the system prompt, tool schemas and environment message
// of a real Claude Code 2.1.332 worker request; transcripts do not record
// them, so both sides of the replay use these.
//
//go:embed client.json
var clientJSON []byte

// request is one API request a transcript implies.
type request struct {
	at       time.Time
	model    string
	messages []msg // the history sent (ends with the user turn)
	reset    bool  // the client rewrote its history (compaction) before it
	ttl      string
}

type msg struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
	id      string            // assistant message id
}

// requests rebuilds the sequence of Messages requests of a transcript: every
// distinct assistant message is one request whose history is everything
// before it; a compaction boundary starts a new history.
func requests(r *transcript.Reader) ([]request, error) {
	var out []request
	var hist []msg
	reset := false
	lastA := -1
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Type == transcript.TypeSystem && rec.Subtype == "compact_boundary" {
			hist, reset, lastA = nil, true, -1
			continue
		}
		if rec.Message == nil || (rec.Type != transcript.TypeUser && rec.Type != transcript.TypeAssistant) {
			continue
		}
		m := rec.Message
		if m.Model == "<synthetic>" {
			continue // written by Claude Code itself, never sent or received
		}
		blocks := contentBlocks(m.Content)
		if len(blocks) == 0 {
			continue
		}
		switch rec.Type {
		case transcript.TypeUser:
			if n := len(hist); n > 0 && hist[n-1].Role == "user" {
				hist[n-1].Content = mergeUser(hist[n-1].Content, blocks)
			} else {
				hist = append(hist, msg{Role: "user", Content: mergeUser(nil, blocks)})
			}
		case transcript.TypeAssistant:
			n := len(hist)
			if lastA >= 0 && lastA < n && m.ID != "" && hist[lastA].id == m.ID {
				// One response is stored as one record per block; tool
				// results may be written between them.
				hist[lastA].Content = append(hist[lastA].Content, blocks...)
				continue
			}
			if n > 0 && hist[n-1].Role == "assistant" {
				hist[n-1].Content = append(hist[n-1].Content, blocks...)
				continue
			}
			if n > 0 && hist[n-1].Role == "user" {
				ttl := ""
				if m.Usage != nil && m.Usage.CacheCreation.Ephemeral1h > 0 {
					ttl = "1h"
				}
				out = append(out, request{at: rec.Timestamp, model: m.Model, messages: clone(hist), reset: reset, ttl: ttl})
				reset = false
			}
			hist = append(hist, msg{Role: "assistant", Content: blocks, id: m.ID})
			lastA = len(hist) - 1
		}
	}
	return out, nil
}

func clone(h []msg) []msg {
	out := make([]msg, len(h))
	for i, m := range h {
		out[i] = msg{Role: m.Role, Content: append([]json.RawMessage(nil), m.Content...), id: m.id}
	}
	return out
}

// contentBlocks turns a transcript message's content into API blocks,
// dropping empty text blocks (the client never sends them) and transcript
// only fields.
func contentBlocks(c json.RawMessage) []json.RawMessage {
	r := gjson.ParseBytes(c)
	if r.Type == gjson.String {
		if r.Str == "" {
			return nil
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": r.Str})
		return []json.RawMessage{b}
	}
	var out []json.RawMessage
	r.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			if b.Get("text").String() == "" {
				return true
			}
		case "tool_use":
			// The transcript adds a "caller"; the API request carries
			// id, name and input only.
			nb, _ := json.Marshal(map[string]any{"type": "tool_use", "id": b.Get("id").String(),
				"name": b.Get("name").String(), "input": json.RawMessage(b.Get("input").Raw)})
			out = append(out, nb)
			return true
		}
		out = append(out, json.RawMessage(b.Raw))
		return true
	})
	return out
}

// mergeUser appends blocks to a user message keeping tool_results first.
func mergeUser(have, add []json.RawMessage) []json.RawMessage {
	var results, rest []json.RawMessage
	for _, b := range append(append([]json.RawMessage(nil), have...), add...) {
		if gjson.GetBytes(b, "type").String() == "tool_result" {
			results = append(results, b)
		} else {
			rest = append(rest, b)
		}
	}
	return append(results, rest...)
}

// client is the recorded client request shape.
type client struct {
	Model       string            `json:"model"`
	System      []json.RawMessage `json:"system"`
	Tools       []json.RawMessage `json:"tools"`
	Environment json.RawMessage   `json:"environment"`
}

func loadClient() (*client, error) {
	var c client
	if err := json.Unmarshal(clientJSON, &c); err != nil {
		return nil, fmt.Errorf("decode embedded client capture: %w", err)
	}
	return &c, nil
}

// baselineBody is the request as Claude Code 2.1.332 sends it: the recorded
// system and tools, the environment message after the first user message,
// and Claude Code's own breakpoints (the two last system blocks and the
// last message's last block).
func (c *client) baselineBody(r request) []byte {
	cc := map[string]string{"type": "ephemeral"}
	if r.ttl != "" {
		cc["ttl"] = r.ttl
	}
	sys := make([]json.RawMessage, len(c.System))
	for i, s := range c.System {
		var m map[string]any
		_ = json.Unmarshal(s, &m)
		delete(m, "cache_control")
		if i >= len(c.System)-2 && i > 0 {
			m["cache_control"] = cc
		}
		sys[i], _ = json.Marshal(m)
	}
	var msgs []json.RawMessage
	for i, m := range r.messages {
		content := append([]json.RawMessage(nil), m.Content...)
		mb, _ := json.Marshal(map[string]any{"role": m.Role, "content": content})
		msgs = append(msgs, mb)
		if i == 0 && len(c.Environment) > 0 {
			msgs = append(msgs, c.Environment)
		}
	}
	// The client's breakpoint: the last block of the last message.
	ccRaw, _ := json.Marshal(cc)
	last := msgs[len(msgs)-1]
	if c := gjson.GetBytes(last, "content"); c.Type == gjson.String {
		blk, _ := json.Marshal(map[string]any{"type": "text", "text": c.Str, "cache_control": cc})
		last, _ = sjson.SetRawBytes(last, "content", append(append([]byte("["), blk...), ']'))
	} else {
		n := len(c.Array())
		last, _ = sjson.SetRawBytes(last, fmt.Sprintf("content.%d.cache_control", n-1), ccRaw)
	}
	msgs[len(msgs)-1] = last
	body, _ := json.Marshal(map[string]any{
		"model":      r.model,
		"max_tokens": 32000,
		"stream":     true,
		"system":     sys,
		"tools":      c.Tools,
		"messages":   msgs,
	})
	return body
}
