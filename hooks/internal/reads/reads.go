// Package reads is the no-reread hook's memory and judgement: per
// conversation context (session id + agent id), which files the agent has
// read (line ranges, with the size and mtime they had), which denials hold
// an escape grant, and how often each shell command ran since the last edit.
//
// A re-read is denied only when all of these hold (SPEC.md §2): the path was
// read in this context; it is unchanged on disk (size and mtime); the
// requested lines lie within what was read; the proxy's visibility export
// does not say the content was evicted; the re-read is worth at least
// noreread.min_tokens; and no escape grant is pending. A denial grants one
// escape: the same read re-issued passes and the booked saving is refunded,
// so the agent can never deadlock.
package reads

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// Version is the context file's schema version.
const Version = 1

// ReadDefaultLimit is how many lines Claude Code's Read tool returns when no
// limit is given.
const ReadDefaultLimit = 2000

// BashOutputLimit is the size above which Claude Code truncates a Bash
// tool's output; a shell read that produced this much is not recorded, as
// the model did not see all of it.
const BashOutputLimit = 30000

// FileRec is what one context has read of one file.
type FileRec struct {
	Size    int64     `json:"size"`
	MtimeNs int64     `json:"mtime_ns"`
	Spans   []span    `json:"spans"` // merged; an end of 0 means "to the end of the file"
	ViaTool bool      `json:"via_tool,omitempty"`
	At      time.Time `json:"at"`
}

// Context is one conversation context's record.
type Context struct {
	V       int                 `json:"v"`
	Session string              `json:"session"`
	Agent   string              `json:"agent,omitempty"`
	Updated time.Time           `json:"updated"`
	Files   map[string]*FileRec `json:"files"`
	// Grants are pending escapes: path → tokens booked by the denial.
	Grants map[string]int64 `json:"grants,omitempty"`
	// Cmds counts runs of each normalised command since the last edit;
	// LoopTries counts attempts the loop breaker judged.
	Cmds      map[string]int `json:"cmds,omitempty"`
	LoopTries map[string]int `json:"loop_tries,omitempty"`
}

func (c *Context) init(session, agent string) {
	c.V, c.Session, c.Agent = Version, session, agent
	if c.Files == nil {
		c.Files = map[string]*FileRec{}
	}
	if c.Grants == nil {
		c.Grants = map[string]int64{}
	}
	if c.Cmds == nil {
		c.Cmds = map[string]int{}
	}
	if c.LoopTries == nil {
		c.LoopTries = map[string]int{}
	}
}

// forget drops a file's record and grant.
func (c *Context) forget(path string) {
	delete(c.Files, path)
	delete(c.Grants, path)
}

// edited resets the loop breaker: a repeat after an edit is verification.
func (c *Context) edited() {
	clear(c.Cmds)
	clear(c.LoopTries)
}

// Path is a context's record file.
func Path(d xdg.Dirs, session, agent string) string {
	return d.StatePath("noreread", visibility.ContextKey(session, agent)+".json")
}

// Store judges and records reads.
type Store struct {
	Dirs xdg.Dirs
	Cfg  config.NoReread
	Now  func() time.Time
	// Tokens estimates the tokens of file content.
	Tokens func([]byte) int64
}

// New returns a Store with the real clock and estimator.
func New(d xdg.Dirs, cfg config.NoReread) *Store {
	return &Store{Dirs: d, Cfg: cfg, Now: time.Now, Tokens: EstimateTokens}
}

// EstimateTokens is the token estimate used for the floor and the savings
// counters: bytes/4, the usual rule for English and code with Claude's
// tokenizer.
func EstimateTokens(b []byte) int64 { return int64(len(b)+3) / 4 }

// Decision is the outcome of a PreToolUse judgement.
type Decision struct {
	Deny   bool
	Reason string
}

// fileState is a file as it is on disk now.
type fileState struct {
	size    int64
	mtimeNs int64
}

func statFile(path string) (fileState, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileState{}, false
	}
	return fileState{fi.Size(), fi.ModTime().UnixNano()}, true
}

// request is one file read being judged.
type request struct {
	path    string
	view    shellread.View
	viaTool bool
}

// verdict is the judgement of one request against a context.
type verdict struct {
	deniable bool
	stale    bool // the record no longer matches the disk: forget it
	tokens   int64
	desc     string // what was read, for the reason
}

// skipExt are files whose Read is not plain text (images, PDFs, notebooks);
// bytes/4 says nothing about their tokens, so they are never denied.
var skipExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true,
	".pdf": true, ".ipynb": true, ".bmp": true, ".svgz": true}

// judge decides whether one request may be denied (all conditions but the
// escape grant).
func (s *Store) judge(c *Context, rq request, vis *visibility.Export) verdict {
	rec := c.Files[rq.path]
	if rec == nil {
		return verdict{}
	}
	st, ok := statFile(rq.path)
	if !ok || st.size != rec.Size || st.mtimeNs != rec.MtimeNs {
		return verdict{stale: true}
	}
	if rq.viaTool && !rec.ViaTool {
		// Claude Code's Edit needs a Read-tool read of the file; a shell
		// read does not count, so this Read must pass.
		return verdict{}
	}
	if skipExt[strings.ToLower(filepath.Ext(rq.path))] {
		return verdict{}
	}
	data, err := os.ReadFile(rq.path)
	if err != nil || int64(len(data)) != rec.Size {
		return verdict{}
	}
	if i := min(len(data), 8192); strings.IndexByte(string(data[:i]), 0) >= 0 {
		return verdict{} // binary
	}
	ix := indexLines(data)
	want := resolve(rq.view, ix.count())
	have := clampSpans(rec.Spans, ix.count())
	if len(want) == 0 || !covered(want, have) {
		return verdict{}
	}
	if evicted(vis, rq.path, want, rec.At) {
		return verdict{}
	}
	tokens := s.Tokens(pick(ix, want))
	if tokens < int64(s.Cfg.MinTokens) {
		return verdict{}
	}
	return verdict{deniable: true, tokens: tokens, desc: describe(have, ix.count())}
}

// pick returns the bytes of the spans.
func pick(ix lineIndex, spans []span) []byte {
	if len(spans) == 1 {
		s := spans[0]
		end := len(ix.data)
		if s[1] < len(ix.starts) {
			end = ix.starts[s[1]]
		}
		return ix.data[ix.starts[s[0]-1]:end]
	}
	out := make([]byte, 0, ix.bytesOf(spans))
	for _, s := range spans {
		out = append(out, pick(ix, []span{s})...)
	}
	return out
}

// evicted reports whether the proxy's export says the model cannot see the
// requested lines: the file is marked evicted, its visible ranges do not
// cover them, or a projection served after the read does not list it.
func evicted(vis *visibility.Export, path string, want []span, readAt time.Time) bool {
	if vis == nil {
		return false
	}
	f, ok := vis.Files[path]
	if !ok {
		return vis.Updated.After(readAt)
	}
	if f.Evicted {
		return true
	}
	if len(f.Visible) == 0 {
		return false
	}
	var have []span
	for _, r := range f.Visible {
		have = append(have, span{r.Start, r.End})
	}
	n := 0
	for _, w := range want {
		n = max(n, w[1])
	}
	return !covered(want, clampSpans(have, n))
}

// describe names what was read: "the whole file" or "lines 1-40, 90-120".
func describe(have []span, n int) string {
	if len(have) == 1 && have[0][0] == 1 && have[0][1] >= n {
		return "the whole file"
	}
	parts := make([]string, 0, len(have))
	for _, h := range have {
		if h[0] == h[1] {
			parts = append(parts, fmt.Sprint(h[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", h[0], h[1]))
		}
	}
	if len(parts) > 4 {
		parts = append(parts[:4], "…")
	}
	return "lines " + strings.Join(parts, ", ")
}

// loadRaw reads a context's file without the lock (files are replaced
// atomically), for a quick look with gjson before any locked update.
func (s *Store) loadRaw(session, agent string) ([]byte, error) {
	return os.ReadFile(Path(s.Dirs, session, agent))
}

// Load decodes a context's record.
func (s *Store) Load(session, agent string) (*Context, error) {
	data, err := s.loadRaw(session, agent)
	if err != nil {
		return nil, err
	}
	var c Context
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decode context: %w", err)
	}
	return &c, nil
}

var errSkip = statefile.ErrSkip

// visibilityFor loads the proxy's export for a context, nil when there is
// none (the context is not projected) or it cannot be read.
func (s *Store) visibilityFor(session, agent string) *visibility.Export {
	e, err := visibility.Read(s.Dirs, session, agent)
	if err != nil {
		return nil
	}
	return e
}

// update is a locked read-modify-write of a context.
func (s *Store) update(session, agent string, fn func(c *Context) error) error {
	return statefile.Update(Path(s.Dirs, session, agent), func(c *Context) error {
		c.init(session, agent)
		if err := fn(c); err != nil {
			return err
		}
		c.Updated = s.Now()
		return nil
	})
}

// count adds to the session's counters.
func (s *Store) count(session string, fn func(*hookio.Counters)) error {
	return hookio.UpdateCounters(s.Dirs, session, s.Now(), fn)
}

// ResetSession forgets every context of a session (compaction, /clear): the
// model no longer has what was read. Counters are kept.
func (s *Store) ResetSession(session string) error {
	pattern := filepath.Join(s.Dirs.StatePath("noreread"), statefile.SafeName(session)+"__*.json")
	names, err := filepath.Glob(pattern)
	if err != nil {
		return fmt.Errorf("list contexts: %w", err)
	}
	var errs []error
	for _, n := range names {
		err := statefile.Update(n, func(c *Context) error {
			clear(c.Files)
			clear(c.Grants)
			c.edited()
			c.Updated = s.Now()
			return nil
		})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Prune removes context files not updated for longer than age.
func (s *Store) Prune(age time.Duration) {
	dir := s.Dirs.StatePath("noreread")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := s.Now().Add(-age)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.ModTime().After(cutoff) {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
