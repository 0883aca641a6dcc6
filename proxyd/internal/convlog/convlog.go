// Package convlog writes synaxi-proxyd's optional conversation log: one JSONL
// entry per Messages request with a summary of the original and the served
// request, the projection's metadata and the billed usage.
//
// The log never holds credentials or headers, and never request or response
// text: only counts, sizes, ids and usage. It is created 0600 and rotated to
// "<name>.1" when it would grow past its size cap.
package convlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"
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
	path string
	max  int64
	mu   sync.Mutex
}

// Path is the conversation log file.
func Path(d xdg.Dirs) string { return d.StatePath("proxyd", "conversations.jsonl") }

// New returns a log at path rotated at maxBytes.
func New(path string, maxBytes int64) *Log { return &Log{path: path, max: maxBytes} }

// Write appends e, rotating first if the log would grow past its cap.
func (l *Log) Write(e *Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode log entry: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	return statefile.WithLock(l.path, func() error {
		if fi, err := os.Stat(l.path); err == nil && fi.Size()+int64(len(line)) > l.max {
			if err := os.Rename(l.path, l.path+".1"); err != nil {
				return fmt.Errorf("rotate %s: %w", l.path, err)
			}
		}
		if err := xdg.Ensure(filepath.Dir(l.path)); err != nil {
			return err
		}
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, statefile.FileMode)
		if err != nil {
			return fmt.Errorf("open %s: %w", l.path, err)
		}
		if _, err := f.Write(line); err != nil {
			f.Close()
			return fmt.Errorf("append %s: %w", l.path, err)
		}
		return f.Close()
	})
}
