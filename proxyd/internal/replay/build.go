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
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// clientJSON holds the system prompt, tool schemas and environment message
// of a real Claude Code 2.1.332 interactive main-session request;
// transcripts do not record them, so both sides of the replay use these,
// for main sessions and subagents alike (neither carries the worker's
// sentinel, so the gate's scope decides whether they are projected, as in
// the proxy).
//
//go:embed main.json
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

// built is what requests rebuilt from one transcript.
type built struct {
	reqs []request
	// repaired counts the tool calls whose result the transcript lacks
	// (its record is missing or did not parse), each answered with
	// an error result (lostResultText) in every request after it.
	repaired int
	// dropped counts tool results that answer no tool call of the
	// message before them (the call's record is missing), or answer one
	// twice; they are left out of every request.
	dropped int
	// summaries holds the text of the compaction summaries (records
	// marked isCompactSummary): user-role, but written by Claude Code,
	// not typed by the user (see userTyped).
	summaries map[string]bool
	// orphans counts the answers with no user turn before them in the
	// file (a continued session's first ones), each sent after a
	// placeholder user message (orphanText) on both sides.
	orphans int
	// sidechain counts the inline subagent records (isSidechain, Claude
	// Code 1.x) left out of a main session's requests.
	sidechain int
}

// lostResultText is the error result sent for a tool call whose result the
// transcript lacks. Both sides of the replay send it, so the comparison
// stays fair; it only keeps the rebuilt requests valid.
const lostResultText = "The result of this tool call was not recorded in the transcript " +
	"(its record is missing or did not parse); the replay sends this error in its place."

// orphanText is the user message sent before an answer whose user turn
// the file does not hold (a continued session begins with one). Both sides
// send it; it only keeps the rebuilt requests valid.
var orphanText = json.RawMessage(`{"type":"text","text":"The user turn of this answer is in an earlier transcript file; the replay sends this in its place."}`)

// onlyResults reports whether blocks are all tool results (or none).
func onlyResults(blocks []json.RawMessage) bool {
	for _, b := range blocks {
		if gjson.GetBytes(b, "type").String() != "tool_result" {
			return false
		}
	}
	return true
}

// requests rebuilds the sequence of Messages requests of a transcript: every
// distinct assistant message is one request whose history is everything
// before it; a compaction boundary starts a new history. Every request it
// returns ends with a user message, and each tool_use in it is answered,
// first thing in the next message, by exactly one tool_result: a result
// the transcript lacks is replaced by an error result (lostResultText), a
// result that answers no call of the message before it is left out.
func requests(r *transcript.Reader) (built, error) {
	b := built{summaries: map[string]bool{}}
	var hist []msg
	reset := false
	lastA := -1
	main := false // a record outside a sidechain was seen
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return built{}, err
		}
		if rec.Type == transcript.TypeSystem && rec.Subtype == "compact_boundary" {
			hist, reset, lastA = nil, true, -1
			continue
		}
		if rec.Message == nil || (rec.Type != transcript.TypeUser && rec.Type != transcript.TypeAssistant) {
			continue
		}
		if rec.IsSidechain && main {
			// Claude Code 1.x logged a Task subagent's turns inline in
			// the main session's file; they were never part of its
			// requests. (A subagent's own file is all sidechain.)
			b.sidechain++
			continue
		}
		main = main || !rec.IsSidechain
		m := rec.Message
		if m.Model == "<synthetic>" {
			continue // written by Claude Code itself, never sent or received
		}
		blocks := contentBlocks(m.Content)
		if len(blocks) == 0 {
			continue
		}
		if rec.IsCompactSummary {
			for _, blk := range blocks {
				if t := gjson.GetBytes(blk, "text"); t.Type == gjson.String {
					b.summaries[t.Str] = true
				}
			}
			if len(hist) > 0 {
				// Claude Code 1.x marks a compaction by its summary alone,
				// with no boundary record before it.
				hist, reset, lastA = nil, true, -1
			}
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
			if n == 0 || n == 1 && hist[0].Role == "user" && onlyResults(hist[0].Content) {
				// A continued session's file can begin with an answer
				// (or results) whose user turn is in an earlier file:
				// a placeholder stands for it.
				hist = []msg{{Role: "user", Content: []json.RawMessage{orphanText}}}
				n = 1
				b.orphans++
			}
			if lastA >= 0 && lastA < n && m.ID != "" && hist[lastA].id == m.ID {
				// One response is stored as one record per block; tool
				// results may be written between them.
				hist[lastA].Content = append(hist[lastA].Content, blocks...)
				continue
			}
			if n > 0 && hist[n-1].Role == "assistant" {
				if calls := toolUseIDs(hist[n-1].Content); len(calls) > 0 {
					// A new response after unanswered calls: the client
					// sent their results, whose records are lost.
					hist = append(hist, msg{Role: "user"})
					n++
				} else {
					hist[n-1].Content = append(hist[n-1].Content, blocks...)
					continue
				}
			}
			if n > 0 && hist[n-1].Role == "user" {
				b.pair(hist)
				if len(hist[n-1].Content) > 0 {
					ttl := ""
					if m.Usage != nil && m.Usage.CacheCreation.Ephemeral1h > 0 {
						ttl = "1h"
					}
					b.reqs = append(b.reqs, request{at: rec.Timestamp, model: m.Model, messages: clone(hist), reset: reset, ttl: ttl})
					reset = false
				} else {
					// Only stray results, all left out: the message goes,
					// and the response joins the one before it, as above
					// (that one has no calls, or they would be answered).
					hist = hist[:n-1]
					if n--; n > 0 {
						hist[n-1].Content = append(hist[n-1].Content, blocks...)
						continue
					}
				}
			}
			hist = append(hist, msg{Role: "assistant", Content: blocks, id: m.ID})
			lastA = len(hist) - 1
		}
	}
	return b, nil
}

// pair makes the last message of hist, a user message, answer the tool
// calls of the assistant message before it (if any) exactly once, results
// first: a missing result becomes an error result (counted in repaired),
// after the results present; a result for no pending call, or a second one
// for the same call, is left out (counted in dropped). Only the last two
// messages can change between two requests (user records merge into the
// last message, an assistant's further records into the last assistant
// message), so the earlier ones were paired for an earlier request.
func (b *built) pair(hist []msg) {
	n := len(hist)
	var calls []string
	if n >= 2 && hist[n-2].Role == "assistant" {
		calls = toolUseIDs(hist[n-2].Content)
	}
	pending := make(map[string]bool, len(calls))
	for _, id := range calls {
		pending[id] = true
	}
	var results, rest []json.RawMessage
	for _, blk := range hist[n-1].Content {
		if gjson.GetBytes(blk, "type").String() != "tool_result" {
			rest = append(rest, blk)
			continue
		}
		id := gjson.GetBytes(blk, "tool_use_id").String()
		if !pending[id] {
			b.dropped++
			continue
		}
		delete(pending, id)
		results = append(results, blk)
	}
	for _, id := range calls {
		if pending[id] {
			delete(pending, id)
			blk, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": id,
				"content": lostResultText, "is_error": true})
			results = append(results, blk)
			b.repaired++
		}
	}
	hist[n-1].Content = append(results, rest...)
}

// toolUseIDs lists the ids of the tool_use blocks among blocks, in order,
// each once.
func toolUseIDs(blocks []json.RawMessage) []string {
	var ids []string
	seen := map[string]bool{}
	for _, blk := range blocks {
		if gjson.GetBytes(blk, "type").String() == "tool_use" {
			if id := gjson.GetBytes(blk, "id").String(); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
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

// prefixTokens is what the cache simulator counts for the tools and
// system prompt every baseline request starts with (each block's
// canonical form, at least one token).
func (c *client) prefixTokens(tok func([]byte) int) int64 {
	var n int64
	for _, b := range append(append([]json.RawMessage(nil), c.Tools...), c.System...) {
		n += int64(max(1, tok(cachesim.Canonical(b))))
	}
	return n
}

// identifiers are the code identifiers of the client's tool schemas and
// system prompt (see identifiers).
func (c *client) identifiers() map[string]bool {
	out := map[string]bool{}
	for _, b := range append(append([]json.RawMessage(nil), c.Tools...), c.System...) {
		for _, id := range identifiers(string(b)) {
			out[id] = true
		}
	}
	return out
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
