package fakeapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Agent is the scripted model: it decides the next assistant turn from the
// parsed request alone.
type Agent interface{ Respond(v *View) Reply }

// AgentFunc adapts a function to Agent.
type AgentFunc func(v *View) Reply

// Respond calls f(v).
func (f AgentFunc) Respond(v *View) Reply { return f(v) }

// Reply is one assistant turn. Blocks are emitted in the order Thinking,
// Text, ToolUses. StopReason defaults to "tool_use" when there are tool uses
// and "end_turn" otherwise.
type Reply struct {
	Text       string
	ToolUses   []ToolUse
	StopReason string
	// Thinking, when set, is emitted first as a thinking block carrying a
	// signature the fake verifies when the block comes back.
	Thinking string
}

// ToolUse is one tool call. ID is generated ("toolu_…") when empty.
type ToolUse struct {
	Name  string
	Input map[string]any
	ID    string
}

// Block is one content block of a message as the agent sees it.
type Block struct {
	Type      string         // text, tool_use, tool_result, thinking, image, …
	Text      string         // text blocks; the joined text of a tool_result
	ID        string         // tool_use id
	Name      string         // tool_use name
	Input     map[string]any // tool_use input
	ToolUseID string         // tool_result
	IsError   bool           // tool_result
	Thinking  string         // thinking
}

// Message is one entry of the request's messages, in order.
type Message struct {
	Role   string // user, assistant or system
	Blocks []Block
}

// Call is a tool_use paired with its tool_result when one is present.
type Call struct {
	ID       string
	Name     string
	Input    map[string]any
	Result   string
	IsError  bool
	Answered bool
}

// View is the parsed request the agent decides from.
type View struct {
	Model     string
	System    string // system text blocks joined with "\n"
	ToolNames []string
	Messages  []Message
	Stream    bool
	MaxTokens int64
	Header    http.Header
	Body      []byte

	side  bool
	calls []Call
	files map[string]*fileView
	// deferred are the declared tools with defer_loading: the API shows
	// one to the model only while a tool_reference block (a tool search
	// result) in the request names it; referenced are the names those
	// blocks give.
	deferred, referenced map[string]bool
}

// newView builds the agent's view of a validated request.
func newView(p *parsedRequest, header http.Header, body []byte) *View {
	v := &View{Model: p.Model, Stream: p.Stream, Header: header.Clone(), Body: body}
	if p.MaxTokens != nil {
		v.MaxTokens = *p.MaxTokens
	}
	var sys []string
	for _, b := range p.System {
		if b.Text != nil {
			sys = append(sys, *b.Text)
		}
	}
	v.System = strings.Join(sys, "\n")
	v.deferred, v.referenced = map[string]bool{}, map[string]bool{}
	for _, t := range p.Tools {
		var def struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		}
		_ = json.Unmarshal(t.canon, &def)
		v.ToolNames = append(v.ToolNames, def.Name)
		if def.DeferLoading {
			v.deferred[def.Name] = true
		}
	}
	byID := map[string]int{}
	for _, m := range p.Messages {
		msg := Message{Role: m.Role}
		for _, b := range m.Blocks {
			vb := Block{Type: b.Type, ID: b.ID, Name: b.Name, ToolUseID: b.ToolUseID, IsError: b.IsError}
			switch b.Type {
			case "text":
				if b.Text != nil {
					vb.Text = *b.Text
				}
			case "thinking":
				if b.Thinking != nil {
					vb.Thinking = *b.Thinking
				}
			case "tool_use":
				_ = json.Unmarshal(b.Input, &vb.Input)
				byID[b.ID] = len(v.calls)
				v.calls = append(v.calls, Call{ID: b.ID, Name: b.Name, Input: vb.Input})
			case "tool_result":
				vb.Text = textOf(b.Content)
				for _, name := range toolReferences(b.Content) {
					v.referenced[name] = true
				}
				if i, ok := byID[b.ToolUseID]; ok {
					c := &v.calls[i]
					c.Result, c.IsError, c.Answered = vb.Text, b.IsError, true
				}
			}
			msg.Blocks = append(msg.Blocks, vb)
		}
		v.Messages = append(v.Messages, msg)
	}
	v.side = isSideRequest(p)
	v.files = buildFiles(v.calls)
	return v
}

// isSideRequest implements the documented rule (see the package doc).
func isSideRequest(p *parsedRequest) bool {
	if len(p.Tools) == 0 {
		return true
	}
	if p.MaxTokens != nil && *p.MaxTokens <= 1 {
		return true
	}
	if oc, ok := p.fields["output_config"]; ok {
		var cfg struct {
			Format json.RawMessage `json:"format"`
		}
		if json.Unmarshal(oc, &cfg) == nil && !isNull(cfg.Format) {
			return true
		}
	}
	return false
}

// IsSideRequest reports whether the request is not the agent loop (title
// generation, quota probe, structured-output helpers).
func (v *View) IsSideRequest() bool { return v.side }

// HasTool reports whether a tool of that name is declared and shown to the
// model: a tool declared with defer_loading only while a tool_reference in
// the request names it, as the API expands such references into the
// tool's definition.
func (v *View) HasTool(name string) bool {
	for _, n := range v.ToolNames {
		if n == name {
			return !v.deferred[name] || v.referenced[name]
		}
	}
	return false
}

// Calls returns every tool_use in order, paired with its result.
func (v *View) Calls() []Call { return append([]Call(nil), v.calls...) }

// ToolResults returns the answered calls in order.
func (v *View) ToolResults() []Call {
	var out []Call
	for _, c := range v.calls {
		if c.Answered {
			out = append(out, c)
		}
	}
	return out
}

// LastToolResult returns the last answered call, as it appears in the
// request's final tool_result block.
func (v *View) LastToolResult() (Call, bool) {
	for i := len(v.Messages) - 1; i >= 0; i-- {
		blocks := v.Messages[i].Blocks
		for j := len(blocks) - 1; j >= 0; j-- {
			if blocks[j].Type != "tool_result" {
				continue
			}
			for _, c := range v.calls {
				if c.ID == blocks[j].ToolUseID {
					return c, true
				}
			}
			return Call{ID: blocks[j].ToolUseID, Result: blocks[j].Text, IsError: blocks[j].IsError, Answered: true}, true
		}
	}
	return Call{}, false
}

// CallsTo returns the calls of one tool, in order.
func (v *View) CallsTo(name string) []Call {
	var out []Call
	for _, c := range v.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Turns returns the number of assistant messages so far.
func (v *View) Turns() int {
	n := 0
	for _, m := range v.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// StripReminders removes <system-reminder>…</system-reminder> sections.
func StripReminders(s string) string {
	return strings.TrimSpace(reminderRE.ReplaceAllString(s, ""))
}

// FirstUserText returns the text of the first user message without
// <system-reminder> sections: the task as the user typed it.
func (v *View) FirstUserText() string {
	for _, m := range v.Messages {
		if m.Role == "user" {
			return userText(m)
		}
	}
	return ""
}

// LastUserText returns the text blocks of the last user message without
// <system-reminder> sections (tool_results excluded).
func (v *View) LastUserText() string {
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if v.Messages[i].Role == "user" {
			return userText(v.Messages[i])
		}
	}
	return ""
}

func userText(m Message) string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == "text" {
			if t := StripReminders(b.Text); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// VisibleText returns everything a model could read in the request: system,
// every text, thinking and tool_result text and every tool_use input.
func (v *View) VisibleText() string {
	var sb strings.Builder
	sb.WriteString(v.System)
	for _, m := range v.Messages {
		for _, b := range m.Blocks {
			sb.WriteByte('\n')
			switch b.Type {
			case "tool_use":
				in, _ := json.Marshal(b.Input)
				sb.WriteString(b.Name + " " + string(in))
			case "thinking":
				sb.WriteString(b.Thinking)
			default:
				sb.WriteString(b.Text)
			}
		}
	}
	return sb.String()
}

// fileView is what the request shows of one file: known lines by number and
// whether lines 1..len(lines) are the whole file.
type fileView struct {
	lines    map[int]string
	complete bool
	n        int // number of lines when complete
}

// readLineRE matches one line of Claude Code's Read output: the line number,
// one separator (a tab in 2.1.x, which also documents ":"; older versions
// padded the number and used "→"), then the line verbatim.
var readLineRE = regexp.MustCompile(`^\s*(\d+)(?:\t|→|:)(.*)$`)

// ParseReadResult parses Claude Code's Read tool_result text into the first
// line number and the line contents. Text before the first numbered line (a
// note) is skipped; parsing stops at the first line that is not the next
// numbered line (a trailing <system-reminder> or truncation note). A result
// with no numbered lines (empty file, offset past the end, an error or an
// "unchanged" stub) has none.
func ParseReadResult(text string) (first int, lines []string) {
	all := strings.Split(text, "\n")
	start := -1
	for i, ln := range all {
		if strings.HasPrefix(ln, "<system-reminder>") || strings.HasPrefix(ln, truncatedNote) {
			continue
		}
		if readLineRE.MatchString(ln) {
			start = i
			break
		}
	}
	if start < 0 {
		return 0, nil
	}
	for i, ln := range all[start:] {
		m := readLineRE.FindStringSubmatch(ln)
		if m == nil {
			break
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || (i > 0 && n != first+i) {
			break
		}
		if i == 0 {
			first = n
		}
		lines = append(lines, m[2])
	}
	return first, lines
}

// Texts Claude Code 2.1.332 puts in Read results instead of, or around, the
// content.
const (
	truncatedNote = "[Truncated: PARTIAL view"
	stubUnchanged = "File unchanged since last read."
	stubWasted    = "Wasted call \u2014 file unchanged since your last Read."
	stubInContext = "<system-reminder>This file is already in your context"
)

// IsReadStub reports whether a Read result is one of Claude Code's "file
// unchanged since last read" stubs, which show no content: the content is
// only in the earlier Read result the stub refers to.
func IsReadStub(result string) bool {
	for _, p := range []string{stubUnchanged, stubWasted, stubInContext} {
		if strings.HasPrefix(result, p) {
			return true
		}
	}
	return false
}

const emptyFileNote = "the file exists but the contents are empty"

// buildFiles replays the calls in order to rebuild file contents: Read
// results (full or partial), Write inputs and successful Edits.
func buildFiles(calls []Call) map[string]*fileView {
	files := map[string]*fileView{}
	for _, c := range calls {
		path, _ := c.Input["file_path"].(string)
		if path == "" || !c.Answered || c.IsError {
			continue
		}
		switch c.Name {
		case "Read":
			applyRead(files, path, c)
		case "Write":
			content, _ := c.Input["content"].(string)
			files[path] = wholeFile(content)
		case "Edit":
			applyEdit(files, path, c.Input)
		}
	}
	return files
}

func wholeFile(content string) *fileView {
	ls := strings.Split(content, "\n")
	fv := &fileView{lines: map[int]string{}, complete: true, n: len(ls)}
	for i, l := range ls {
		fv.lines[i+1] = l
	}
	return fv
}

func applyRead(files map[string]*fileView, path string, c Call) {
	if strings.Contains(c.Result, emptyFileNote) {
		files[path] = wholeFile("")
		return
	}
	if IsReadStub(c.Result) {
		return // shows nothing new; earlier results still count
	}
	first, lines := ParseReadResult(c.Result)
	if len(lines) == 0 {
		return
	}
	fv := files[path]
	_, hasOffset := c.Input["offset"]
	limit, hasLimit := numberArg(c.Input["limit"])
	whole := first == 1 && (!hasLimit || int64(len(lines)) < limit)
	if !hasOffset && !hasLimit {
		whole = first == 1
	}
	if strings.Contains(c.Result, truncatedNote) {
		whole = false
	}
	if fv == nil || whole {
		fv = &fileView{lines: map[int]string{}}
		files[path] = fv
	}
	for i, l := range lines {
		fv.lines[first+i] = l
	}
	if whole {
		fv.complete, fv.n = true, len(lines)
	}
}

func numberArg(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func applyEdit(files map[string]*fileView, path string, in map[string]any) {
	fv := files[path]
	if fv == nil || !fv.complete {
		delete(files, path)
		return
	}
	oldS, _ := in["old_string"].(string)
	newS, _ := in["new_string"].(string)
	all, _ := in["replace_all"].(bool)
	content := fv.text()
	if oldS == "" || !strings.Contains(content, oldS) {
		delete(files, path)
		return
	}
	if all {
		content = strings.ReplaceAll(content, oldS, newS)
	} else {
		content = strings.Replace(content, oldS, newS, 1)
	}
	files[path] = wholeFile(content)
}

func (f *fileView) text() string {
	if f.complete {
		ls := make([]string, f.n)
		for i := range ls {
			ls[i] = f.lines[i+1]
		}
		return strings.Join(ls, "\n")
	}
	nums := make([]int, 0, len(f.lines))
	for n := range f.lines {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	ls := make([]string, len(nums))
	for i, n := range nums {
		ls[i] = f.lines[n]
	}
	return strings.Join(ls, "\n")
}

// FileContent returns the content of a file as the request shows it, from
// Read results (Claude Code's "N\tline" format, partial reads merged),
// Write inputs and successful Edits applied to known content. ok is true only
// when the whole file is visible; otherwise the visible lines are returned
// joined in line order (empty when none).
func (v *View) FileContent(path string) (string, bool) {
	fv := v.files[path]
	if fv == nil {
		return "", false
	}
	return fv.text(), fv.complete
}

// FileLines returns the visible lines of a file by line number (1-based).
func (v *View) FileLines(path string) map[int]string {
	fv := v.files[path]
	if fv == nil {
		return nil
	}
	out := make(map[int]string, len(fv.lines))
	for n, l := range fv.lines {
		out[n] = l
	}
	return out
}

// VisibleFiles returns the paths with any visible content, sorted.
func (v *View) VisibleFiles() []string {
	return sortedKeys(v.files)
}
