// Package read is the first stage of synaxi's learning loop (read →
// extract → screen → store → review → publish): it reads a finished Claude
// Code session's transcript into a Doc of the user's own typed turns
// (secrets scrubbed) and, before each turn, a coarse description of what
// the assistant did.
//
// Invariants:
//   - Only human-typed turns (transcript.HumanText) are kept. Claude Code's
//     injected messages, tool results, hook output, compaction summaries
//     and the assistant's own words never become turns; the assistant's
//     tool calls only describe what came before a turn (Turn.Before).
//   - Another agent's message is never the person's: a user-role record
//     that carries a teammate, cross-session or agent message, a task
//     notification or hook text in any of Claude Code's wrappers
//     (FromAgent) is skipped and counted (Doc.FromAgents).
//   - Only typed spans are evidence. Split divides each turn into what the
//     person typed, what they pasted (logs, traces, diffs, code, documents,
//     the assistant's own earlier words) and what the harness added (IDE
//     blocks, paste placeholders); Turn.Typed and Doc.Grounded see only the
//     typed spans. A turn with nothing but harness text is not a turn.
//   - Text is scrubbed (package redact) before anything downstream sees it,
//     so quotes are checked against the scrubbed turns.
//   - A tool call is described by its command words only, never by an
//     argument that could carry a host, path or secret.
//   - A bad transcript (missing, binary, truncated, oversized, or without
//     records) is an error naming the file and the problem.
package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/learning/redact"
)

// DefaultMaxBytes is the largest transcript read unless configured.
const DefaultMaxBytes = 128 << 20

// Errors a transcript can fail with; each is wrapped with the file name.
var (
	ErrMissing   = errors.New("transcript does not exist")
	ErrTooLarge  = errors.New("transcript is too large")
	ErrBinary    = errors.New("not a transcript: binary data")
	ErrTruncated = errors.New("transcript ends mid-record (truncated)")
	ErrEmpty     = errors.New("not a transcript: no JSON records")
)

// Turn is one human-typed user message.
type Turn struct {
	UUID      string
	Timestamp time.Time
	Line      int
	Text      string // the turn's text, scrubbed: typed, pasted and harness spans
	Spans     []Span // who wrote which part of Text (Split)
	Before    Action // what the assistant did since the previous human turn
}

// Typed returns the parts of the turn the person typed (see Split).
func (t *Turn) Typed() []string { return TypedParts(t.Text, t.Spans) }

// typedAt reports whether quote occurs inside one typed span.
func (t *Turn) typedAt(quote string) bool {
	for _, p := range t.Typed() {
		if strings.Contains(p, quote) {
			return true
		}
	}
	return false
}

// Action summarises the assistant's work between two human turns, from its
// tool calls and their results.
type Action struct {
	Tools       []string // coarse descriptions in order: "ran git push", "edited files"
	Failures    int      // consecutive failing tool results just before the turn
	FailingTool string   // the tool of those failures
	Interrupted bool     // the user interrupted the assistant
	Words       int      // words of assistant text
	// Said is the assistant's last text before the turn, scrubbed and
	// clipped to MaxSaid bytes: the message the user's turn answered,
	// shown beside a candidate in review. It is never evidence.
	Said string
}

// MaxSaid bounds Action.Said.
const MaxSaid = 600

// Describe is a short phrase for Evidence.Context ("" when nothing
// happened).
func (a Action) Describe() string {
	if len(a.Tools) == 0 {
		return ""
	}
	last := a.Tools[len(a.Tools)-1]
	s := "after the assistant " + last
	if a.Interrupted {
		s += " (interrupted)"
	}
	return s
}

// Doc is a transcript reduced to what may be learned from.
type Doc struct {
	Path    string
	Session string
	Cwd     string
	Bytes   int64
	End     time.Time // last timestamp
	Turns   []Turn
	Stats   transcript.Stats
	// FromAgents counts user-role records that carried another agent's
	// or the harness's message (FromAgent): never read as the person's.
	FromAgents int
}

// onlyHarness reports whether nothing but harness text and white space
// is in t.
func onlyHarness(t *Turn) bool {
	for _, s := range t.Spans {
		if s.Kind != Harness && strings.TrimSpace(t.Text[s.Start:s.End]) != "" {
			return false
		}
	}
	return true
}

// Turn returns the turn with uuid, or nil.
func (d *Doc) Turn(uuid string) *Turn {
	for i := range d.Turns {
		if d.Turns[i].UUID == uuid {
			return &d.Turns[i]
		}
	}
	return nil
}

// Grounded reports whether quote occurs verbatim in a typed span of the
// human turn uuid: words the person pasted are never evidence.
func (d *Doc) Grounded(uuid, quote string) bool {
	t := d.Turn(uuid)
	q := strings.TrimSpace(quote)
	return t != nil && len(q) >= 2 && t.typedAt(q)
}

// Read reads the transcript at path, refusing files over maxBytes (0 means
// DefaultMaxBytes).
func Read(path string, maxBytes int64) (*Doc, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (was it deleted or moved?)", path, ErrMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a transcript file", path)
	}
	if fi.Size() > maxBytes {
		return nil, fmt.Errorf("%s: %w: %d MB, over the %d MB limit (raise ingest.max_transcript_mb to read it)",
			path, ErrTooLarge, fi.Size()>>20, maxBytes>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 8<<10)
	n, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return nil, fmt.Errorf("%s: %w (a NUL byte in the first %d bytes)", path, ErrBinary, n)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := transcript.NewReader(io.LimitReader(f, maxBytes))
	d := &Doc{Path: path, Bytes: fi.Size()}
	if err := d.fill(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.Stats = r.Stats()
	switch {
	case d.Stats.Records == 0:
		return nil, fmt.Errorf("%s: %w (%d lines)", path, ErrEmpty, d.Stats.Lines)
	case d.Stats.Torn > 0:
		return nil, fmt.Errorf("%s: %w at line %d; if the session is still running, it is retried later",
			path, ErrTruncated, d.Stats.Lines)
	case d.Stats.Malformed > d.Stats.Records:
		return nil, fmt.Errorf("%s: %w: %d of %d lines are not JSON records", path, ErrEmpty, d.Stats.Malformed, d.Stats.Lines)
	}
	// Claude Code names a transcript after its session, and a resumed or
	// continued one starts with records that carry the earlier session's
	// id: the file's name is the session (the id SessionEnd reports).
	if stem := strings.TrimSuffix(filepath.Base(path), ".jsonl"); d.Session == "" || sessionName(stem) {
		d.Session = stem
	}
	return d, nil
}

// sessionName reports whether s has the shape of a session id, a UUID
// (8-4-4-4-12 hexadecimal digits).
func sessionName(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", r):
			return false
		}
	}
	return true
}

func (d *Doc) fill(r *transcript.Reader) error {
	var act Action
	toolByID := map[string]string{}
	echo := NewEcho()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Session == "" && rec.SessionID != "" {
			d.Session = rec.SessionID
		}
		if d.Cwd == "" && rec.Cwd != "" {
			d.Cwd = rec.Cwd
		}
		if rec.Timestamp.After(d.End) {
			d.End = rec.Timestamp
		}
		if rec.IsSidechain {
			continue
		}
		switch rec.Type {
		case transcript.TypeAssistant:
			for _, b := range rec.Message.Blocks() {
				switch b.Type {
				case "tool_use":
					toolByID[b.ID] = b.Name
					desc := describeTool(b.Name, b.Input)
					if desc == "" {
						continue
					}
					act.Tools = append(act.Tools, desc)
					if len(act.Tools) > 32 {
						act.Tools = act.Tools[1:]
					}
				case "text":
					act.Words += len(strings.Fields(b.Text))
					echo.Add(b.Text)
					if strings.TrimSpace(b.Text) != "" {
						act.Said = b.Text
					}
				}
			}
		case transcript.TypeUser:
			if text, ok := transcript.HumanText(rec); ok {
				if _, agent := FromAgent(text); agent {
					d.FromAgents++
					continue
				}
				if text != "" {
					text = redact.Redact(text)
					// Cut before redacting (a long answer costs the
					// detector time), then to MaxSaid.
					act.Said = clipSaid(redact.Redact(clipSaid(act.Said, 2*MaxSaid)), MaxSaid)
					t := Turn{UUID: rec.UUID, Timestamp: rec.Timestamp, Line: rec.Line, Text: text, Spans: Split(text, echo), Before: act}
					if onlyHarness(&t) {
						// Only IDE context: the person typed nothing.
						continue
					}
					d.Turns = append(d.Turns, t)
				}
				act = Action{}
				continue
			}
			for _, b := range rec.Message.Blocks() {
				switch {
				case b.Type == "tool_result" && b.IsError:
					tool := toolByID[b.ToolUseID]
					if tool != act.FailingTool {
						act.Failures = 0
					}
					act.Failures++
					act.FailingTool = tool
				case b.Type == "tool_result":
					act.Failures, act.FailingTool = 0, ""
				case b.Type == "text" && strings.HasPrefix(strings.TrimSpace(b.Text), "[Request interrupted by user"):
					act.Interrupted = true
				}
			}
		}
	}
}

// setupCmd are shell commands that only prepare the one that follows.
var setupCmd = map[string]bool{"cd": true, "pushd": true, "export": true, "source": true, ".": true, "set": true, "true": true}

// wordRE is a command word safe to keep: a program or subcommand name, never
// an argument that could carry a host, path or secret.
var wordRE = regexp.MustCompile(`^[a-z][a-z0-9_.:]{0,30}$`)

// describeTool is a coarse, secret-free description of a tool call.
func describeTool(name string, input json.RawMessage) string {
	switch name {
	case "Bash":
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(input, &in)
		// The first command that does something: "cd repo && git
		// commit …" describes as git commit.
		var f []string
		for _, seg := range strings.FieldsFunc(in.Command, func(r rune) bool { return r == '&' || r == ';' || r == '|' || r == '\n' }) {
			f = strings.Fields(seg)
			if len(f) > 0 && !setupCmd[f[0]] {
				break
			}
		}
		var words []string
		for _, w := range f {
			if len(words) == 2 || !wordRE.MatchString(w) {
				break
			}
			words = append(words, w)
		}
		if len(words) == 0 {
			return "ran a shell command"
		}
		return "ran " + strings.Join(words, " ")
	case "Edit", "MultiEdit", "NotebookEdit":
		return "edited files"
	case "Write":
		return "wrote files"
	case "Read", "Glob", "Grep":
		return "read files"
	case "Task", "Agent":
		return "started a subagent"
	}
	if strings.HasPrefix(name, "Todo") || strings.HasPrefix(name, "Task") {
		return "" // bookkeeping, not an action the user reacts to
	}
	return "used " + name
}

// clipSaid cuts s to n bytes at a rune boundary, marking the cut.
func clipSaid(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
