package governor

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/synaxi/synaxi/internal/transcript"
)

// Event is one tool call of a replayed context, with what a person needs to
// judge a fire around it.
type Event struct {
	N       int    // 1-based position of the call in its context
	Tool    string // the tool's name
	Summary string // the command, the file, or the tool's name
	Failed  bool
	Fire    *Fire // the fire this call completed, if any
}

// Context is the replay of one conversation context of a transcript file.
type Context struct {
	Name   string // "main", or "sidechain" for the inline subagent turns of Claude Code 1.x
	Events []Event
	Fires  int
	Resets int // compactions, after which the state starts afresh as the hook's does
}

type pending struct {
	name   string
	input  []byte
	tokens int64
	cwd    string
	side   bool
}

// pairs matches tool results to the tool calls that asked for them, so a
// call is fed to the detector when its result arrives, as the hook sees it.
type pairs map[string]pending

// result classifies the call a tool result answers; ok is false for a
// result without its call.
func (p pairs) result(id string, failed bool, output string, shell Shell) (c Call, u pending, ok bool) {
	u, ok = p[id]
	if !ok {
		return Call{}, u, false
	}
	delete(p, id)
	c = FromTool(u.name, u.input, u.cwd, failed, output, shell)
	c.Tokens = u.tokens
	return c, u, true
}

// Replay runs the detector over a transcript, once per context (the main
// chain and the inline sidechain), feeding each tool call when its result
// arrives, with the prompt tokens of the request that issued it. State starts
// afresh at a compaction boundary, as the hook's records do.
func Replay(r io.Reader, shell Shell, th Thresholds) ([]*Context, error) {
	rd := transcript.NewReader(r)
	ctxs := map[bool]*Context{false: {Name: "main"}, true: {Name: "sidechain"}}
	states := map[bool]*State{false: {}, true: {}}
	uses := pairs{}
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read transcript: %w", err)
		}
		side := rec.IsSidechain && rec.AgentID == ""
		switch {
		case rec.Type == transcript.TypeSystem && rec.Subtype == "compact_boundary":
			states[side] = &State{}
			ctxs[side].Resets++
		case rec.Type == transcript.TypeAssistant && rec.Message != nil:
			tokens := int64(0)
			if rec.Message.Usage != nil {
				tokens = rec.Message.Usage.PromptTokens()
			}
			for _, b := range rec.Message.Blocks() {
				if b.Type == "tool_use" && b.ID != "" {
					uses[b.ID] = pending{name: b.Name, input: b.Input, tokens: tokens, cwd: rec.Cwd, side: side}
				}
			}
		case rec.Type == transcript.TypeUser && rec.Message != nil:
			for _, b := range rec.Message.Blocks() {
				if b.Type != "tool_result" {
					continue
				}
				c, u, ok := uses.result(b.ToolUseID, b.IsError, b.ResultText(), shell)
				if !ok {
					continue
				}
				cx := ctxs[u.side]
				ev := Event{N: len(cx.Events) + 1, Tool: u.name, Summary: summary(u.name, c), Failed: c.Failed}
				if f, ok := states[u.side].Observe(c, th); ok {
					ev.Fire = &f
					cx.Fires++
				}
				cx.Events = append(cx.Events, ev)
			}
		}
	}
	var out []*Context
	for _, side := range []bool{false, true} {
		if len(ctxs[side].Events) > 0 {
			out = append(out, ctxs[side])
		}
	}
	return out, nil
}

func summary(tool string, c Call) string {
	switch {
	case c.Kind == Command:
		return short(Normalize(c.Command))
	case c.Kind == Edit && len(c.Pairs) == 1 && !c.Whole:
		return fmt.Sprintf("%s: %s → %s", filepath.Base(c.Path), clip(c.Pairs[0].Old), clip(c.Pairs[0].New))
	case c.Path != "" && c.Lines != "":
		return c.Path + " @" + c.Lines
	case c.Path != "":
		return c.Path
	}
	return tool
}

// clip is an edit text on one line, shortened for a listing.
func clip(s string) string {
	s = Normalize(s)
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
