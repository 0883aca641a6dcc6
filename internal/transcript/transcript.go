// Package transcript reads Claude Code session transcripts: the JSONL files
// under ~/.claude/projects/<project>/<session-id>.jsonl and their subagent
// files <session-id>/subagents/agent-*.jsonl.
//
// Claude Code documents the format as internal and changing between versions,
// so the reader is tolerant by construction:
//
//   - Every line is decoded on its own. A line that is not a JSON object is
//     skipped and counted in Stats.Malformed; a final line without its newline
//     that does not decode (a file caught mid-append) is skipped and counted
//     in Stats.Torn. Neither stops the reader.
//   - Records of a type the reader does not know are returned with only their
//     common fields (no Message, no ToolUseResult) and counted per type in
//     Stats.Unknown.
//   - A field of an unexpected JSON type is left empty and the record is still
//     returned; Stats.Mistyped counts such records.
//   - Lines may be of any length (a tool result of many megabytes is one line):
//     there is no bufio.Scanner token limit.
//
// Records come back in file order; Record.Raw holds the line's bytes, so a
// caller can read any field the typed view does not expose (with gjson, for
// example).
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"
)

// Record types Claude Code writes. Types not listed here are unknown: their
// records carry only the common fields.
const (
	TypeUser                = "user"
	TypeAssistant           = "assistant"
	TypeSystem              = "system"
	TypeSummary             = "summary"
	TypeProgress            = "progress"
	TypeAttachment          = "attachment"
	TypeFileHistorySnapshot = "file-history-snapshot"
	TypeQueueOperation      = "queue-operation"
)

// known lists the record types of Claude Code 2.1.x (platform-facts §7.2).
var known = map[string]bool{
	TypeUser: true, TypeAssistant: true, TypeSystem: true, TypeSummary: true,
	TypeProgress: true, TypeAttachment: true, TypeFileHistorySnapshot: true,
	TypeQueueOperation: true, "custom-title": true, "ai-title": true,
	"last-prompt": true, "pr-link": true, "agent-name": true,
	"permission-mode": true, "worktree-state": true,
}

// Record is one transcript line.
type Record struct {
	Type              string
	UUID              string
	ParentUUID        string // "" for the first record of a chain
	LogicalParentUUID string // pre-compaction parent of a compact_boundary
	SessionID         string
	AgentID           string // set in subagent transcripts
	IsSidechain       bool
	IsMeta            bool
	IsCompactSummary  bool
	Subtype           string // system records: compact_boundary, turn_duration, …
	Timestamp         time.Time
	RequestID         string // assistant records: the API request id
	Cwd               string
	Version           string // Claude Code version that wrote the record

	// Message is the API message of a user or assistant record; nil for
	// other types and for records whose message did not decode.
	Message *Message
	// ToolUseResult is the structured, tool-specific result Claude Code
	// stores beside a tool_result (raw JSON; nil when absent).
	ToolUseResult json.RawMessage

	Line int    // 1-based line number in the file
	Raw  []byte // the line, without its newline
}

// Message is an Anthropic Messages API message as Claude Code stores it.
type Message struct {
	Role       string          `json:"role"`
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	StopReason string          `json:"stop_reason"`
	Usage      *Usage          `json:"usage"`
	Content    json.RawMessage `json:"content"` // a string or an array of blocks
}

// Usage is the token accounting of one API response.
type Usage struct {
	InputTokens              int64         `json:"input_tokens"`
	OutputTokens             int64         `json:"output_tokens"`
	CacheCreationInputTokens int64         `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64         `json:"cache_read_input_tokens"`
	CacheCreation            CacheCreation `json:"cache_creation"`
}

// CacheCreation splits cache writes by time to live.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// PromptTokens is the whole prompt the request sent: uncached input plus
// cache reads plus cache writes.
func (u *Usage) PromptTokens() int64 {
	if u == nil {
		return 0
	}
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// Stats counts what a Reader saw.
type Stats struct {
	Lines     int            // lines read, blank and skipped ones included
	Bytes     int64          // bytes read
	Records   int            // records returned
	ByType    map[string]int // records returned, per type (unknown types too)
	Unknown   map[string]int // records of unknown types, per type
	Malformed int            // lines skipped: not a JSON object
	Torn      int            // final line without newline skipped: did not decode
	Mistyped  int            // records returned with a field of an unexpected JSON type left empty
	Blank     int            // empty lines
}

// Skipped is the number of non-blank lines that produced no record.
func (s Stats) Skipped() int { return s.Malformed + s.Torn }

// Reader streams records from a transcript.
type Reader struct {
	br     *bufio.Reader
	closer io.Closer
	name   string
	stats  Stats
	done   bool
}

// Open opens the transcript at path. Close it when done.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	r := NewReader(f)
	r.closer, r.name = f, path
	return r, nil
}

// NewReader reads a transcript from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{
		br:    bufio.NewReaderSize(r, 256<<10),
		name:  "transcript",
		stats: Stats{ByType: map[string]int{}, Unknown: map[string]int{}},
	}
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.ByType = maps.Clone(r.stats.ByType)
	s.Unknown = maps.Clone(r.stats.Unknown)
	return s
}

// Next returns the next record, or io.EOF after the last one. Malformed
// lines are skipped (and counted), never returned as errors; an error other
// than io.EOF is a read error of the underlying file.
func (r *Reader) Next() (*Record, error) {
	for !r.done {
		line, err := r.br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", r.name, err)
		}
		if err != nil {
			r.done = true
			if len(line) == 0 {
				break
			}
		}
		r.stats.Lines++
		r.stats.Bytes += int64(len(line))
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			r.stats.Blank++
			continue
		}
		rec, ok := r.decode(line)
		if !ok {
			if complete {
				r.stats.Malformed++
			} else {
				r.stats.Torn++
			}
			continue
		}
		rec.Line = r.stats.Lines
		r.stats.Records++
		r.stats.ByType[rec.Type]++
		if !known[rec.Type] {
			r.stats.Unknown[rec.Type]++
		}
		return rec, nil
	}
	return nil, io.EOF
}

// envelope is the wire form of a record's common fields.
type envelope struct {
	Type              string          `json:"type"`
	UUID              string          `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID *string         `json:"logicalParentUuid"`
	SessionID         string          `json:"sessionId"`
	AgentID           string          `json:"agentId"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	Subtype           string          `json:"subtype"`
	Timestamp         string          `json:"timestamp"`
	RequestID         string          `json:"requestId"`
	Cwd               string          `json:"cwd"`
	Version           string          `json:"version"`
	Message           json.RawMessage `json:"message"`
	ToolUseResult     json.RawMessage `json:"toolUseResult"`
}

// decode turns one trimmed line into a record; ok is false when the line is
// not a JSON object.
func (r *Reader) decode(line []byte) (*Record, bool) {
	if line[0] != '{' {
		return nil, false
	}
	var env envelope
	mistyped := false
	if err := json.Unmarshal(line, &env); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, false
		}
		mistyped = true
	}
	rec := &Record{
		Type:              env.Type,
		UUID:              env.UUID,
		ParentUUID:        deref(env.ParentUUID),
		LogicalParentUUID: deref(env.LogicalParentUUID),
		SessionID:         env.SessionID,
		AgentID:           env.AgentID,
		IsSidechain:       env.IsSidechain,
		IsMeta:            env.IsMeta,
		IsCompactSummary:  env.IsCompactSummary,
		Subtype:           env.Subtype,
		RequestID:         env.RequestID,
		Cwd:               env.Cwd,
		Version:           env.Version,
		Raw:               line,
	}
	if env.Timestamp != "" {
		if ts, err := time.Parse(time.RFC3339Nano, env.Timestamp); err == nil {
			rec.Timestamp = ts
		} else {
			mistyped = true
		}
	}
	if known[env.Type] {
		if isPresent(env.Message) {
			var m Message
			if err := json.Unmarshal(env.Message, &m); err == nil || isTypeError(err) {
				rec.Message = &m
				mistyped = mistyped || err != nil
			} else {
				mistyped = true
			}
		}
		if isPresent(env.ToolUseResult) {
			rec.ToolUseResult = env.ToolUseResult
		}
	}
	if mistyped {
		r.stats.Mistyped++
	}
	return rec, true
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func isPresent(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// tailWindow is how much of a transcript's end LastPromptTokens reads at
// most; tailFirst is what it reads first, which holds the latest assistant
// record unless that record or the lines after it are large.
const (
	tailWindow = 256 << 10
	tailFirst  = 16 << 10
)

// LastPromptTokens is the prompt size (uncached input, cache reads and
// cache writes) of the last assistant record within the last 256 KiB of a
// transcript: the context the latest request sent. It reads only the file's
// end, so its cost does not grow with the session (the last 16 KiB first,
// as a hook calls it on every tool call); 0 when no assistant record with
// usage is there.
func LastPromptTokens(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat transcript: %w", err)
	}
	for _, w := range []int64{tailFirst, tailWindow} {
		off := max(st.Size()-w, 0)
		buf := make([]byte, st.Size()-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read transcript: %w", err)
		}
		if n, ok := lastPrompt(buf, off > 0); ok || off == 0 {
			return n, nil
		}
	}
	return 0, nil
}

// lastPrompt finds the last assistant record with usage in buf, scanning
// lines from the end; cut says buf's first line is cut by the window, so
// it is not read.
func lastPrompt(buf []byte, cut bool) (int64, bool) {
	for end := len(buf); end > 0; {
		start := bytes.LastIndexByte(buf[:end], '\n') + 1
		if start == 0 && cut {
			return 0, false
		}
		l := buf[start:end]
		end = start - 1
		if !bytes.Contains(l, []byte(`"assistant"`)) || !bytes.Contains(l, []byte(`"usage"`)) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				Usage *Usage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Type == TypeAssistant && rec.Message.Usage != nil {
			return rec.Message.Usage.PromptTokens(), true
		}
	}
	return 0, false
}
