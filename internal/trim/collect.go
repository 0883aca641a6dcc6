// Package trim builds the context `synaxi trim` carries from a Claude Code
// session into the fresh one the user starts with /clear, and keeps it
// staged until then.
//
// The needed set is read from the session's transcript, deterministically
// (no model): the files edited and read most recently, by path and line
// range; the open error (the last failing shell command not followed by a
// success of the same command, with its key output lines); the commands
// run most recently; what the user typed (the first turn and the latest
// ones); the unfinished todo items (TodoWrite, TaskCreate/TaskUpdate); and
// the decisions the user made (AskUserQuestion answers, and a typed reply
// to an assistant question). Render turns the set into one block, within a
// character budget, followed by a short fixed block of directives.
//
// Invariants: only the main chain counts (sidechain and subagent records
// are skipped); only human-typed text (transcript.HumanText, narrowed to
// the typed spans by the caller's TypedFunc) is carried as the user's
// words; the same transcript prefix gives the same block. The block is
// staged per project (the session's cwd) with an expiry, and taken
// (read and removed) at most once, by the SessionStart hook after /clear.
package trim

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/transcript"
)

// Range is a span of lines, 1-based and inclusive; End 0 means to the end
// of the file.
type Range struct{ Start, End int }

// File is a file the session touched.
type File struct {
	Path   string
	Edited bool    // written or edited (else only read)
	Ranges []Range // most recent last; empty: the whole file
	seq    int     // order of the last touch
}

// Failure is a failing shell command and the output lines that matter.
type Failure struct {
	Command string
	Lines   []string
}

// Todo is an unfinished todo item.
type Todo struct {
	Text   string
	Status string // pending, in_progress
	id     string
}

// Decision is a question the assistant asked and the user's answer.
type Decision struct{ Question, Answer string }

// Set is the needed set of one transcript prefix.
type Set struct {
	Session      string
	Cwd          string
	Files        []File // most recently touched first
	Error        *Failure
	Commands     []string // most recent last, distinct
	Instructions []string // the user's typed turns, in order
	Todos        []Todo
	Decisions    []Decision
	ToolCalls    int   // main-chain tool calls seen
	ContextNow   int64 // prompt tokens of the last main-chain response
}

// Empty reports whether the set carries nothing.
func (s *Set) Empty() bool {
	return len(s.Files) == 0 && s.Error == nil && len(s.Commands) == 0 &&
		len(s.Instructions) == 0 && len(s.Todos) == 0 && len(s.Decisions) == 0
}

type call struct {
	name  string
	input gjson.Result
}

// TypedFunc returns the words the person typed in a human turn: rec is
// the record and text what transcript.HumanText found in it. ok false
// leaves the turn out. The installer passes the learning loop's reader
// (typed spans only, secrets scrubbed); nil keeps text as it is.
type TypedFunc func(rec *transcript.Record, text string) (typed string, ok bool)

// Collector reads transcript records in file order and keeps the needed
// set of what it has seen.
type Collector struct {
	typed     TypedFunc
	set       Set
	calls     map[string]call
	files     map[string]*File
	seq       int
	taskSeq   int
	lastAsked string // the assistant's last text, while no user turn followed
}

// NewCollector returns an empty Collector; typed may be nil.
func NewCollector(typed TypedFunc) *Collector {
	return &Collector{typed: typed, calls: map[string]call{}, files: map[string]*File{}}
}

// Add takes the next record of the transcript.
func (c *Collector) Add(rec *transcript.Record) {
	if rec == nil || rec.IsSidechain || rec.AgentID != "" || rec.Message == nil {
		return
	}
	if rec.Cwd != "" {
		c.set.Cwd = rec.Cwd
	}
	if rec.SessionID != "" {
		c.set.Session = rec.SessionID
	}
	switch rec.Type {
	case transcript.TypeAssistant:
		c.assistant(rec)
	case transcript.TypeUser:
		c.user(rec)
	}
}

func (c *Collector) assistant(rec *transcript.Record) {
	if u := rec.Message.Usage; u != nil && u.PromptTokens() > 0 {
		c.set.ContextNow = u.PromptTokens()
	}
	for _, b := range rec.Message.Blocks() {
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				c.lastAsked = t
			}
		case "tool_use":
			if b.ID != "" {
				c.calls[b.ID] = call{name: b.Name, input: gjson.ParseBytes(b.Input)}
				c.set.ToolCalls++
			}
		}
	}
}

func (c *Collector) user(rec *transcript.Record) {
	if text, ok := transcript.HumanText(rec); ok {
		if c.typed != nil && text != "" {
			text, ok = c.typed(rec, text)
		}
		if n := len(c.set.Instructions); ok && text != "" && (n == 0 || c.set.Instructions[n-1] != text) {
			c.set.Instructions = append(c.set.Instructions, text)
			if q := question(c.lastAsked); q != "" {
				c.set.Decisions = append(c.set.Decisions, Decision{Question: q, Answer: text})
			}
		}
		c.lastAsked = ""
		return
	}
	for _, b := range rec.Message.Blocks() {
		if b.Type != "tool_result" {
			continue
		}
		cl, ok := c.calls[b.ToolUseID]
		if !ok {
			continue
		}
		delete(c.calls, b.ToolUseID)
		c.result(cl, &b, gjson.ParseBytes(rec.ToolUseResult))
	}
}

// result folds one tool call with its result into the set.
func (c *Collector) result(cl call, b *transcript.Block, tur gjson.Result) {
	switch cl.name {
	case "Read":
		if b.IsError {
			return
		}
		start := int(cl.input.Get("offset").Int())
		start = max(start, 1)
		end := 0
		if n := cl.input.Get("limit").Int(); n > 0 {
			end = start + int(n) - 1
		} else if n := tur.Get("file.numLines").Int(); n > 0 && start > 1 {
			end = start + int(n) - 1
		}
		c.touch(cl.input.Get("file_path").String(), false, Range{start, end}, start > 1 || end > 0)
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		if b.IsError {
			return
		}
		path := cl.input.Get("file_path").String()
		if path == "" {
			path = cl.input.Get("notebook_path").String()
		}
		hunks := tur.Get("structuredPatch").Array()
		if cl.name == "Write" || len(hunks) == 0 {
			c.touch(path, true, Range{}, false)
			return
		}
		for _, h := range hunks {
			s := int(h.Get("newStart").Int())
			n := int(h.Get("newLines").Int())
			c.touch(path, true, Range{max(s, 1), max(s, 1) + max(n, 1) - 1}, true)
		}
	case "Bash":
		c.bash(cl.input.Get("command").String(), b)
	case "TodoWrite":
		c.set.Todos = c.set.Todos[:0]
		for _, t := range cl.input.Get("todos").Array() {
			if st := t.Get("status").String(); st != "completed" {
				c.set.Todos = append(c.set.Todos, Todo{Text: t.Get("content").String(), Status: st})
			}
		}
	case "TaskCreate":
		c.taskSeq++
		id := tur.Get("task.id").String()
		if id == "" {
			id = strconv.Itoa(c.taskSeq)
		}
		text := cl.input.Get("subject").String()
		if text == "" {
			text = cl.input.Get("description").String()
		}
		c.set.Todos = append(c.set.Todos, Todo{Text: text, Status: "pending", id: id})
	case "TaskUpdate":
		c.taskUpdate(cl.input)
	case "AskUserQuestion":
		c.answers(tur, b)
	}
}

func (c *Collector) taskUpdate(in gjson.Result) {
	id, st := in.Get("taskId").String(), in.Get("status").String()
	for i := range c.set.Todos {
		if c.set.Todos[i].id != id || id == "" {
			continue
		}
		if st == "completed" || st == "deleted" {
			c.set.Todos = append(c.set.Todos[:i], c.set.Todos[i+1:]...)
		} else if st != "" {
			c.set.Todos[i].Status = st
		}
		return
	}
}

// answers records AskUserQuestion's answers: the structured result's
// question → answer map, in the order the questions were asked.
func (c *Collector) answers(tur gjson.Result, b *transcript.Block) {
	ans := tur.Get("answers")
	if !ans.IsObject() {
		return
	}
	for _, q := range tur.Get("questions").Array() {
		text := q.Get("question").String()
		if a := ans.Get(gjson.Escape(text)); a.Exists() && text != "" {
			c.set.Decisions = append(c.set.Decisions, Decision{Question: text, Answer: a.String()})
		}
	}
}

// touch records a file access; ranged says r is a real span (else the
// whole file).
func (c *Collector) touch(path string, edited bool, r Range, ranged bool) {
	if path == "" {
		return
	}
	c.seq++
	f := c.files[path]
	if f == nil {
		f = &File{Path: path}
		c.files[path] = f
	}
	f.seq = c.seq
	f.Edited = f.Edited || edited
	if !ranged {
		f.Ranges = nil // the whole file: earlier spans say nothing more
		return
	}
	f.Ranges = append(f.Ranges, r)
}

// bash records a shell command: in the recent list, and as the open error
// when it failed (an error result other than the user's refusal); a later
// success of a command of the same program and subcommand closes it.
func (c *Collector) bash(cmd string, b *transcript.Block) {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return
	}
	if i := slices.Index(c.set.Commands, cmd); i >= 0 {
		c.set.Commands = append(c.set.Commands[:i], c.set.Commands[i+1:]...)
	}
	c.set.Commands = append(c.set.Commands, cmd)
	text := b.ResultText()
	switch {
	case b.IsError && strings.Contains(text, "doesn't want to proceed"):
	case b.IsError:
		c.set.Error = &Failure{Command: cmd, Lines: keyLines(text)}
	case c.set.Error != nil && CommandKey(c.set.Error.Command) == CommandKey(cmd):
		c.set.Error = nil
	}
}

// Set returns the needed set so far, its files most recently touched
// first.
func (c *Collector) Set() Set {
	s := c.set
	s.Files = make([]File, 0, len(c.files))
	for _, f := range c.files {
		s.Files = append(s.Files, *f)
	}
	slices.SortFunc(s.Files, func(a, b File) int { return b.seq - a.seq })
	s.Commands = append([]string(nil), s.Commands...)
	s.Instructions = append([]string(nil), s.Instructions...)
	s.Todos = append([]Todo(nil), s.Todos...)
	s.Decisions = append([]Decision(nil), s.Decisions...)
	return s
}

// question is the last sentence of text that asks something, when text's
// last paragraph has a question mark ending a sentence (followed by a
// space, a line end or the end: not one inside a URL); "" otherwise.
func question(text string) string {
	text = strings.TrimSpace(text)
	para := text[strings.LastIndex(text, "\n\n")+1:]
	q := -1
	for i := len(para) - 1; i >= 0 && q < 0; i-- {
		if para[i] == '?' && (i == len(para)-1 || strings.ContainsRune(" \n\t*_)\"'", rune(para[i+1]))) {
			q = i
		}
	}
	if q < 0 {
		return ""
	}
	start := 0
	for _, sep := range []string{". ", "! ", "? ", "\n"} {
		if i := strings.LastIndex(para[:q], sep); i >= 0 {
			start = max(start, i+len(sep))
		}
	}
	return strings.TrimSpace(para[start:q]) + "?"
}

// Read collects the needed set of the whole transcript at path; typed
// may be nil.
func Read(path string, typed TypedFunc) (Set, error) {
	r, err := transcript.Open(path)
	if err != nil {
		return Set{}, err
	}
	defer r.Close()
	return Collect(r, typed)
}

// Collect reads r to its end and returns the needed set of its records;
// typed may be nil.
func Collect(r *transcript.Reader, typed TypedFunc) (Set, error) {
	c := NewCollector(typed)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return c.Set(), nil
		}
		if err != nil {
			return Set{}, err
		}
		c.Add(rec)
	}
}
