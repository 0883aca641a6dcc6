package server

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/projection"
)

// The window guard. Claude Code decides when to compact from the usage it
// gets back, which for a projected conversation is the projection's: its
// own transcript can grow past the model's window while every projected
// request fits. Forwarding such a transcript as it came, when a projection
// fails, would turn the fault into "prompt is too long". So a fail-open of
// an original larger than the window serves a minimal safe projection
// instead: the request's own fields, its goal (every message before the
// first assistant message), a note, and the longest run of latest
// messages that fits in half the window, cut before an assistant message
// so every tool result keeps its call.

// windowShare is how much of the window an original may fill, by the
// token estimate (within 11–17% of the API's count for 90% of requests,
// internal/tokens), before a fail-open stops forwarding it as it came.
const windowShare = 0.85

// safeOriginal is what a fail-open serves: the original, or, when it is
// too large for the model's window, the minimal projection, with a note
// for the row. It never panics: a fault here serves the original.
func (s *Server) safeOriginal(req *request) (body []byte, note string) {
	defer func() {
		if v := recover(); v != nil {
			body, note = req.body.Bytes(), fmt.Sprintf("; window guard panic: %v", v)
		}
	}()
	window, over := oversized(req.body, req.header)
	if !over {
		return req.body.Bytes(), ""
	}
	min, dropped, ok := minimalProjection(req.body, window)
	if !ok {
		return req.body.Bytes(), "; the original exceeds the model's window and has no smaller safe cut"
	}
	s.log.Warn("fail-open: the original exceeds the model's window; serving a minimal projection", "id", req.id, "dropped_messages", dropped)
	return min, fmt.Sprintf("; the original exceeds the model's window: served its goal and latest messages (%d left out)", dropped)
}

// oversized reports whether an original body is too large for its model's
// window to be forwarded as it came, and that window; h is the client's
// headers (nil: none).
func oversized(body *gate.Body, h http.Header) (window int, over bool) {
	if !body.Valid() {
		return 0, false // the upstream answers a malformed body, as without the proxy
	}
	beta := ""
	if h != nil {
		beta = h.Get("anthropic-beta")
	}
	window = projection.Window(body.Field("model").Str, beta)
	return window, float64(tokens.EstimateBytes(body.Bytes())) > windowShare*float64(window)
}

// minimalProjection is the body served instead of an oversized original:
// its messages cut to the goal, a note, and the latest messages that fit
// in half the window. ok is false when no such cut exists (a single
// message larger than that), and the original goes as it came.
func minimalProjection(body *gate.Body, window int) (out []byte, dropped int, ok bool) {
	var msgs []gjson.Result
	body.Field("messages").ForEach(func(_, m gjson.Result) bool {
		msgs = append(msgs, m)
		return true
	})
	goal := 0
	for goal < len(msgs) && msgs[goal].Get("role").Str != "assistant" {
		goal++
	}
	if goal == 0 || goal == len(msgs) {
		return nil, 0, false
	}
	room := window / 2
	for _, m := range msgs[:goal] {
		room -= tokens.Estimate(m.Raw)
	}
	for _, f := range []string{"system", "tools"} {
		room -= tokens.Estimate(body.Field(f).Raw)
	}
	from := -1 // the first kept message: an assistant message after the goal
	for i := len(msgs) - 1; i >= goal; i-- {
		if room -= tokens.Estimate(msgs[i].Raw); room < 0 {
			break
		}
		if msgs[i].Get("role").Str == "assistant" && (i+1 == len(msgs) || msgs[i+1].Get("role").Str == "user") {
			from = i
		}
	}
	if from < 0 || from+1 >= len(msgs) {
		return nil, 0, false
	}
	dropped = from - goal
	note := fmt.Sprintf(`{"type":"text","text":%q}`, fmt.Sprintf("<system-reminder>\nsynaxi: this conversation is longer than the model's context window and could not be projected this time, so the %d messages between the task and the latest %d were left out of this request. Repeat any call whose result you need.\n</system-reminder>", dropped, len(msgs)-from))
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range msgs[:goal] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Raw)
	}
	for i, m := range msgs[from:] {
		b.WriteByte(',')
		if i == 1 {
			b.WriteString(withBlock(m, note))
			continue
		}
		b.WriteString(m.Raw)
	}
	b.WriteByte(']')
	return replaceMessages(body, b.Bytes()), dropped, true
}

// withBlock is a user message with one more text block at the end of its
// content.
func withBlock(m gjson.Result, block string) string {
	c := m.Get("content")
	at := c.Index - m.Index // gjson's Index counts from the start of the body
	if c.Index <= 0 || m.Index <= 0 || at <= 0 || at+len(c.Raw) > len(m.Raw) || m.Raw[at:at+len(c.Raw)] != c.Raw {
		return m.Raw // not found where expected: no note rather than a guess
	}
	var blocks string
	switch {
	case c.Type == gjson.String:
		blocks = fmt.Sprintf(`{"type":"text","text":%s},%s`, c.Raw, block)
	case c.IsArray() && len(c.Array()) > 0:
		blocks = c.Raw[1:len(c.Raw)-1] + "," + block
	default:
		blocks = block
	}
	return m.Raw[:at] + "[" + blocks + "]" + m.Raw[at+len(c.Raw):]
}

// replaceMessages is body with its messages array replaced, every other
// member as the client sent it, in its order.
func replaceMessages(body *gate.Body, msgs []byte) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range body.Members() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Key.Raw)
		b.WriteByte(':')
		if m.Key.Str == "messages" {
			b.Write(msgs)
			continue
		}
		b.WriteString(m.Value.Raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}
