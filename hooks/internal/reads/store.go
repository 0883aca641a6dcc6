// Package reads is the no-reread hook's memory and judgement: per
// conversation context (session id + agent id), which files the agent has
// read (line ranges, with the size and mtime they had), which denials hold
// an escape grant, and the loop governor's state (govern.go).
//
// A re-read is denied only when all of these hold (docs/noreread.md): the path was
// read in this context; it is unchanged on disk (size, mtime and inode); the
// requested lines lie within what was read; the proxy's visibility export
// does not say the content was evicted, and in a context the proxy may
// project (the worker, or every context with proxy.scope all, routed
// through synaxi's proxy) positively says it
// is still visible, so a missing, stale or unreadable export allows the
// read; the re-read is worth at least
// noreread.min_tokens; and no escape grant is pending. A denial grants one
// escape: the same read re-issued passes and the booked saving is refunded,
// so the agent can never deadlock.
//
// Layout: one directory per context under $XDG_STATE_HOME/synaxi/noreread/
// (named by visibility.ContextKey) holding reads.log, an append-only log of
// the context's reads, grants and forgets (log.go), and governor.json for
// the loop governor, updated in place under its own flock (govfile.go).
// Recording a read is one append without a lock; a denial or refund is
// decided under the log's lock; the session's counters are a locked
// read-modify-write with an atomic replace. Record files of
// older versions (f-*.json) are ignored, which only allows their re-reads,
// and removed when the context is reset.
package reads

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/internal/xdg"
)

// ReadDefaultLimit is how many lines Claude Code's Read tool returns when no
// limit is given.
const ReadDefaultLimit = 2000

// BashOutputLimit is the size above which Claude Code truncates a Bash
// tool's output; a shell read that produced this much is not recorded, as
// the model did not see all of it.
const BashOutputLimit = 30000

// FileRec is what one context has read of one file.
type FileRec struct {
	Path    string
	Size    int64
	MtimeNs int64
	Ino     uint64 // 0 when the system gives none
	Spans   []span // merged; an end of 0 means "to the end of the file"
	ViaTool bool
	At      time.Time
	// Grant is a pending escape: the tokens its denial booked.
	Grant *int64
}

// Context is a whole context's record, assembled for inspection and tests.
type Context struct {
	Files    map[string]*FileRec
	Governor governor.State
}

// Store judges and records reads.
type Store struct {
	Dirs xdg.Dirs
	Cfg  config.NoReread
	// Mode is governor.mode: off also turns the loop breaker off.
	Mode governor.Mode
	Now  func() time.Time
	// Tokens estimates the tokens of file content.
	Tokens func([]byte) int64
	// BaseURL is ANTHROPIC_BASE_URL as the hook process sees it, and
	// ProjectAll whether proxy.scope is "all": together with the agent type
	// they say whether a context may be projected (see projected).
	// ProxyPort is proxy.port (0: the port the proxy records).
	BaseURL    string
	ProjectAll bool
	ProxyPort  int
	// CustomHeaders is ANTHROPIC_CUSTOM_HEADERS as the hook process sees
	// it: sent with a remote visibility call (the team token), and the sign
	// that a non-loopback base URL is a synaxi proxy (see remoteURL).
	CustomHeaders string
	// AskRemote asks a remote proxy for visibility within ctx; nil runs
	// `synaxi visibility` beside this executable (see remoteVisibility).
	AskRemote func(ctx context.Context, r RemoteRequest) *visibility.Export
}

// New returns a Store with the real clock and estimator.
func New(d xdg.Dirs, cfg config.NoReread) *Store {
	return &Store{Dirs: d, Cfg: cfg, Mode: governor.Advise, Now: time.Now, Tokens: EstimateTokens}
}

// EstimateTokens is the token estimate used for the floor and the savings
// counters: internal/tokens' calibrated estimate of the text.
func EstimateTokens(b []byte) int64 { return int64(tokens.EstimateBytes(b)) }

// Dir is a context's directory.
func Dir(d xdg.Dirs, session, agent string) string {
	return d.StatePath("noreread", visibility.ContextKey(session, agent))
}

// oldPrefix names the per-file record files of versions before the log.
const oldPrefix = "f-"

// forget drops a file's record.
func forget(dir, path string) error {
	_, err := appendLog(dir, entry{op: opForget, path: path})
	return err
}

// forgetAll drops every record of a context: its log, and record files an
// older version left.
func forgetAll(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		n := e.Name()
		if n == logName || strings.HasPrefix(n, oldPrefix) && strings.HasSuffix(n, ".json") {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Load assembles a context's records.
func (s *Store) Load(session, agent string) (*Context, error) {
	dir := Dir(s.Dirs, session, agent)
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	data, err := readLog(dir)
	if err != nil {
		return nil, err
	}
	c := &Context{Files: fold(data)}
	if data, err := readGovernorBytes(filepath.Join(dir, governorName)); err == nil {
		c.Governor, _ = decodeState(data)
	}
	return c, nil
}

// visibilityFor loads the proxy's export for a context, nil when there is
// none (the context is not projected) or it cannot be read; from the proxy
// itself when it runs on another machine (remote.go).
func (s *Store) visibilityFor(session, agent string) *visibility.Export {
	if base := s.remoteURL(); base != "" {
		return s.remoteVisibility(base, session, agent)
	}
	e, err := visibility.Read(s.Dirs, session, agent)
	if err != nil {
		return nil
	}
	return e
}

// count adds to the session's counters.
func (s *Store) count(session string, fn func(*ledger.Counters)) error {
	return ledger.UpdateCounters(s.Dirs, session, s.Now(), fn)
}

// ResetSession forgets every context of a session (compaction, /clear): the
// model no longer has what was read. Counters are kept.
func (s *Store) ResetSession(session string) error {
	dirs, err := filepath.Glob(filepath.Join(s.Dirs.StatePath("noreread"), visibility.SessionPrefix(session)+"*"))
	if err != nil {
		return fmt.Errorf("list contexts: %w", err)
	}
	var errs []error
	for _, d := range dirs {
		errs = append(errs, forgetAll(d), resetLoops(d))
	}
	return errors.Join(errs...)
}

// Prune removes contexts not updated for longer than age. An append does
// not touch its directory's mtime, so a context whose log is younger stays.
func (s *Store) Prune(age time.Duration) {
	cutoff := s.Now().Add(-age)
	root := s.Dirs.StatePath("noreread")
	statefile.PruneStale(root, age, s.Now(), func(e fs.DirEntry) bool {
		if !e.IsDir() {
			return false
		}
		fi, err := os.Stat(logPath(filepath.Join(root, e.Name())))
		return err != nil || fi.ModTime().Before(cutoff)
	})
}
