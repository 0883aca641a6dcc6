package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// outBlock is one content block of the fake's answer.
type outBlock struct {
	Type      string         `json:"type"`
	Text      *string        `json:"text,omitempty"`
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Input     map[string]any `json:"input,omitempty"`
	Thinking  *string        `json:"thinking,omitempty"`
	Signature *string        `json:"signature,omitempty"`
}

func (s *Server) serveMessages(w http.ResponseWriter, hr *http.Request, rec *Request, fault *Fault) {
	p, ok := s.parseValid(w, hr, rec, false)
	if !ok {
		return
	}
	view := newView(p, hr.Header, rec.Body)
	reply := s.decide(p, view)
	blocks, stop := s.render(p, reply)
	usage := s.cache.account(p, rec.Time)
	for _, b := range blocks {
		enc, _ := json.Marshal(b)
		usage.OutputTokens += Tokens(enc)
	}
	if usage.OutputTokens == 0 {
		usage.OutputTokens = 1
	}
	s.cache.record(usage)
	s.update(rec, func(r *Request) {
		r.Usage, r.Side, r.Status = usage, view.IsSideRequest(), http.StatusOK
	})
	msgID := s.nextID("msg_fake")
	if !p.Stream {
		answer := map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": p.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": usageJSON(usage, true),
		}
		if fault != nil && (fault.Kind == FaultMalformedJSON || fault.Kind == FaultCutStream) {
			enc, _ := json.Marshal(answer)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(enc[:len(enc)/2])
			if fault.Kind == FaultCutStream {
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				panic(http.ErrAbortHandler)
			}
			return
		}
		s.writeJSON(w, hr, answer)
		return
	}
	st := &sseStream{w: w, fault: fault}
	if f, ok := w.(http.Flusher); ok {
		st.flush = f.Flush
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	err := s.stream(st, p, msgID, blocks, stop, usage)
	if errors.Is(err, errCut) {
		panic(http.ErrAbortHandler)
	}
}

// decide returns the reply: side requests and max_tokens 0 are answered
// without the Agent.
func (s *Server) decide(p *parsedRequest, v *View) Reply {
	switch {
	case *p.MaxTokens == 0:
		return Reply{StopReason: "max_tokens"}
	case v.IsSideRequest():
		return sideReply(p)
	case s.opts.Agent == nil:
		return Reply{Text: "OK."}
	}
	return s.opts.Agent.Respond(v)
}

func sideReply(p *parsedRequest) Reply {
	if oc, ok := p.fields["output_config"]; ok && strings.Contains(string(oc), `"title"`) {
		return Reply{Text: `{"title":"Scripted session"}`}
	}
	return Reply{Text: "OK."}
}

// thinkingType returns the request's thinking type ("" when absent).
func thinkingType(p *parsedRequest) string {
	raw, ok := p.fields["thinking"]
	if !ok || isNull(raw) {
		return ""
	}
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &t)
	return t.Type
}

// defaultThinking is emitted when thinking is "enabled" (the model always
// thinks then) and the agent gave no thinking text.
const defaultThinking = "Deciding the next step from what the request shows."

// render turns a Reply into content blocks and the stop reason.
func (s *Server) render(p *parsedRequest, r Reply) ([]outBlock, string) {
	var blocks []outBlock
	th := r.Thinking
	switch thinkingType(p) {
	case "enabled":
		if th == "" {
			th = defaultThinking
		}
	case "adaptive":
	default:
		th = ""
	}
	if th != "" && *p.MaxTokens > 0 {
		sig := signThinking(th)
		blocks = append(blocks, outBlock{Type: "thinking", Thinking: &th, Signature: &sig})
	}
	if r.Text != "" {
		text := r.Text
		blocks = append(blocks, outBlock{Type: "text", Text: &text})
	}
	for _, tu := range r.ToolUses {
		id := tu.ID
		if id == "" {
			id = s.nextID("toolu_fake")
		}
		in := tu.Input
		if in == nil {
			in = map[string]any{}
		}
		blocks = append(blocks, outBlock{Type: "tool_use", ID: id, Name: tu.Name, Input: in})
	}
	stop := r.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolUses) > 0 {
			stop = "tool_use"
		}
	}
	return blocks, stop
}

func usageJSON(u Usage, final bool) map[string]any {
	m := map[string]any{
		"input_tokens":                u.InputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"output_tokens":               u.OutputTokens,
	}
	if !final {
		m["output_tokens"] = 1
	}
	m["cache_creation"] = map[string]int64{
		"ephemeral_5m_input_tokens": u.Ephemeral5m,
		"ephemeral_1h_input_tokens": u.Ephemeral1h,
	}
	m["service_tier"] = "standard"
	return m
}

var (
	errCut  = errors.New("stream cut by fault")
	errStop = errors.New("stream ended by fault")
)

// sseStream writes SSE events, flushing after each, and applies a stream
// fault when its event count is reached.
type sseStream struct {
	w      io.Writer
	flush  func()
	fault  *Fault
	events int
}

func (st *sseStream) event(name string, data any) error {
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	frame := "event: " + name + "\ndata: " + string(payload) + "\n\n"
	if f := st.fault; f != nil && st.events == f.AfterEvents {
		switch f.Kind {
		case FaultCutStream:
			_, _ = io.WriteString(st.w, frame[:len(frame)/2])
			st.doFlush()
			return errCut
		case FaultStreamError:
			typ := f.ErrorType
			if typ == "" {
				typ = "overloaded_error"
			}
			msg := errorMessages[typ]
			if msg == "" {
				msg = typ
			}
			errData, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
			_, _ = io.WriteString(st.w, "event: error\ndata: "+string(errData)+"\n\n")
			st.doFlush()
			return errStop
		case FaultMalformedJSON:
			_, _ = io.WriteString(st.w, "event: "+name+"\ndata: "+string(payload[:len(payload)/2])+"\n\n")
			st.doFlush()
			return errStop
		}
	}
	if _, err := io.WriteString(st.w, frame); err != nil {
		return fmt.Errorf("write %s event: %w", name, err)
	}
	st.events++
	st.doFlush()
	return nil
}

func (st *sseStream) doFlush() {
	if st.flush != nil {
		st.flush()
	}
}

// stream writes the whole answer as SSE in the real API's order.
func (s *Server) stream(st *sseStream, p *parsedRequest, msgID string, blocks []outBlock, stop string, u Usage) error {
	start := map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": p.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usageJSON(u, false),
	}}
	if err := st.event("message_start", start); err != nil {
		return err
	}
	if err := st.event("ping", map[string]string{"type": "ping"}); err != nil {
		return err
	}
	for i, b := range blocks {
		if err := s.streamBlock(st, i, b); err != nil {
			return err
		}
	}
	delta := map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int64{
			"input_tokens":                u.InputTokens,
			"cache_creation_input_tokens": u.CacheCreationInputTokens,
			"cache_read_input_tokens":     u.CacheReadInputTokens,
			"output_tokens":               u.OutputTokens,
		},
	}
	if err := st.event("message_delta", delta); err != nil {
		return err
	}
	return st.event("message_stop", map[string]string{"type": "message_stop"})
}

func (s *Server) streamBlock(st *sseStream, i int, b outBlock) error {
	var startBlock any
	var deltas []map[string]any
	switch b.Type {
	case "text":
		startBlock = map[string]any{"type": "text", "text": ""}
		for _, c := range chunks(*b.Text, s.opts.ChunkSize) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
		}
	case "thinking":
		startBlock = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		for _, c := range chunks(*b.Thinking, s.opts.ChunkSize) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": *b.Signature})
	case "tool_use":
		startBlock = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
		in, _ := json.Marshal(b.Input)
		deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": ""})
		for _, c := range chunks(string(in), s.opts.ChunkSize) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
	}
	if err := st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": startBlock}); err != nil {
		return err
	}
	for _, d := range deltas {
		if err := st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}); err != nil {
			return err
		}
	}
	return st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// chunks splits s into pieces of at most n runes (none for "").
func chunks(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
