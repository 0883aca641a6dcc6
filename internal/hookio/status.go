package hookio

import (
	"time"

	"github.com/tidwall/gjson"
)

// StatusDeadline bounds reading the status line's stdin. Claude Code cancels
// a slow status line, so waiting long gains nothing.
const StatusDeadline = 500 * time.Millisecond

// MaxStatusInput bounds the status line's stdin.
const MaxStatusInput = 1 << 20

// Status is the status line's input (fields synaxi shows or keys on).
type Status struct {
	SessionID      string
	TranscriptPath string
	Cwd            string
	Version        string
	ModelID        string
	ModelName      string // model.display_name
	CurrentDir     string // workspace.current_dir
	ProjectDir     string // workspace.project_dir
	// ContextInput is context_window.total_input_tokens (0 when absent).
	ContextInput int64
	// CostUSD is Claude Code's own client-side estimate (cost.total_cost_usd).
	CostUSD float64
	// Raw is the whole input value, passed on to a composed status line.
	Raw []byte
}

// ParseStatus extracts a Status from one JSON object.
func ParseStatus(raw []byte) (*Status, error) {
	if !gjson.ValidBytes(raw) {
		return nil, errInvalid
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return nil, ErrNotObject
	}
	str := func(path string) string { return strAt(root, path) }
	s := &Status{
		SessionID:      str("session_id"),
		TranscriptPath: str("transcript_path"),
		Cwd:            str("cwd"),
		Version:        str("version"),
		ModelID:        str("model.id"),
		ModelName:      str("model.display_name"),
		CurrentDir:     str("workspace.current_dir"),
		ProjectDir:     str("workspace.project_dir"),
		Raw:            raw,
	}
	if v := root.Get("model"); v.Type == gjson.String {
		s.ModelID = v.Str
	}
	if v := root.Get("context_window.total_input_tokens"); v.Type == gjson.Number {
		s.ContextInput = v.Int()
	}
	if v := root.Get("cost.total_cost_usd"); v.Type == gjson.Number {
		s.CostUSD = v.Float()
	}
	return s, nil
}

// Dir is the directory the status line should show: the workspace's current
// directory, else cwd.
func (s *Status) Dir() string {
	if s.CurrentDir != "" {
		return s.CurrentDir
	}
	return s.Cwd
}

// Model is the model's display name, else its id.
func (s *Status) Model() string {
	if s.ModelName != "" {
		return s.ModelName
	}
	return s.ModelID
}
