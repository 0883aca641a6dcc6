// Package convlog writes synaxi-proxyd's optional conversation log: one JSONL
// entry per Messages request with a summary of the original and the served
// request, the projection's metadata and the billed usage.
//
// The log never holds credentials or headers, and never request or response
// text: only counts, sizes, ids and usage. Its directory is 0700 and the file
// 0600. lumberjack appends to it and rotates it on the write that would pass
// its size cap (in whole MiB, lumberjack's unit), keeping one older log
// beside it (conversations-<time>.jsonl). One proxy writes it; during a
// replacement the draining predecessor's last entries, appended with
// O_APPEND, may land in the older log.
package convlog

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// Summary describes a request body without its content.
type Summary struct {
	Bytes     int    `json:"bytes"`
	Messages  int    `json:"messages"`
	SystemLen int    `json:"system_chars"`
	Tools     int    `json:"tools"`
	Stream    bool   `json:"stream"`
	Model     string `json:"model,omitempty"`
	Valid     bool   `json:"valid_json"`
}

// Summarize reads the shape of a Messages request body.
func Summarize(body *gate.Body) Summary {
	s := Summary{Bytes: len(body.Bytes()), Valid: body.Valid()}
	if !s.Valid {
		return s
	}
	r := body.JSON()
	s.Messages = int(r.Get("messages.#").Int())
	s.Tools = int(r.Get("tools.#").Int())
	s.Stream = r.Get("stream").Bool()
	s.Model = r.Get("model").Str
	sys := r.Get("system")
	if sys.Type == gjson.String {
		s.SystemLen = len(sys.Str)
	} else {
		sys.ForEach(func(_, b gjson.Result) bool {
			s.SystemLen += len(b.Get("text").Str)
			return true
		})
	}
	return s
}

// Entry is one logged request.
type Entry struct {
	Time       time.Time               `json:"time"`
	ID         string                  `json:"id"`
	Session    string                  `json:"session"`
	Agent      string                  `json:"agent,omitempty"`
	Path       string                  `json:"path"`
	Status     int                     `json:"status"`
	Gated      bool                    `json:"gated"`
	Projected  bool                    `json:"projected"`
	FailOpen   string                  `json:"fail_open_reason,omitempty"`
	Original   Summary                 `json:"original"`
	Served     *Summary                `json:"served,omitempty"` // only when it differs from the original
	Projection *ledger.ProjectionStats `json:"projection,omitempty"`
	Usage      *ledger.Usage           `json:"usage,omitempty"`
	Problem    string                  `json:"problem,omitempty"`
	Millis     int64                   `json:"ms"`
}

// Log is an open conversation log. Its methods are safe for concurrent use.
type Log struct {
	w     *lumberjack.Logger
	mu    sync.Mutex // guards dirOK
	dirOK bool
}

// Path is the conversation log file.
func Path(d xdg.Dirs) string { return d.StatePath("proxyd", "conversations.jsonl") }

// New returns a log at path rotated past maxBytes, rounded up to whole MiB.
func New(path string, maxBytes int64) *Log {
	mib := max(1, (maxBytes+1<<20-1)>>20)
	return &Log{w: &lumberjack.Logger{Filename: path, MaxSize: int(mib), MaxBackups: 1}}
}

// Write appends e as one line.
func (l *Log) Write(e *Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode log entry: %w", err)
	}
	l.mu.Lock()
	if !l.dirOK { // lumberjack would create it 0755
		if err := xdg.Ensure(filepath.Dir(l.w.Filename)); err != nil {
			l.mu.Unlock()
			return err
		}
		l.dirOK = true
	}
	l.mu.Unlock()
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("append %s: %w", l.w.Filename, err)
	}
	return nil
}

// Close closes the file; a later Write opens it again.
func (l *Log) Close() error { return l.w.Close() }
