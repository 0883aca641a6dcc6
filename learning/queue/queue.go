// Package queue is the durable ingest queue the SessionEnd hook appends to
// and the drain works through, in $XDG_STATE_HOME/synaxi/ingest/:
//
//	queue.jsonl      an append-only log: "add" a job, "fail" an attempt,
//	                 "done" or "dead" to finish it
//	dead.jsonl       dead letters: jobs that failed MaxTries times or whose
//	                 input can never work, with the error (synaxi status)
//	corrupt.jsonl    queue lines that did not parse, set aside verbatim
//	drain.lock       held by the one drain at work
//
// Invariants: every append is one write under the sidecar lock, so a killed
// writer leaves at most a torn last line, which the next Compact sets aside
// (never fatal). A job leaves the queue only by a "done" or "dead" line,
// appended after its work finished, so a process killed mid-job leaves the
// job pending and it runs again (the work must be idempotent: ingest is).
// Compact rewrites the log atomically with only the pending jobs. Readers
// take no lock and ignore a final line without its newline.
package queue

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
)

// Job is one finished session to ingest.
type Job struct {
	ID         string    `json:"id"`
	Session    string    `json:"session"`
	Transcript string    `json:"transcript"`
	Cwd        string    `json:"cwd,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Added      time.Time `json:"added"`
	// Set by failed attempts.
	Tries int       `json:"tries,omitempty"`
	Next  time.Time `json:"next,omitzero"`
	Error string    `json:"error,omitempty"`
}

// Dead is a dead letter: a job given up on.
type Dead struct {
	Job
	At time.Time `json:"at"`
}

type line struct {
	Op string `json:"op"` // add, fail, done, dead
	Job
}

// Queue is the queue in one directory.
type Queue struct {
	dir string
}

// Open returns the queue in dir.
func Open(dir string) *Queue { return &Queue{dir: dir} }

// Dir is the queue's directory.
func (q *Queue) Dir() string { return q.dir }

func (q *Queue) path() string        { return filepath.Join(q.dir, "queue.jsonl") }
func (q *Queue) deadPath() string    { return filepath.Join(q.dir, "dead.jsonl") }
func (q *Queue) corruptPath() string { return filepath.Join(q.dir, "corrupt.jsonl") }

// LockPath is the drain's lock file.
func (q *Queue) LockPath() string { return filepath.Join(q.dir, "drain.lock") }

// NewID returns a fresh job id.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Add appends j (given an id and time if it has none).
func (q *Queue) Add(j Job) (Job, error) {
	if j.ID == "" {
		j.ID = NewID()
	}
	if j.Added.IsZero() {
		j.Added = time.Now().UTC()
	}
	return j, statefile.AppendJSONL(q.path(), line{Op: "add", Job: j})
}

// State is the queue folded from its log.
type State struct {
	Pending []Job // in the order added
	Corrupt int   // lines that did not parse
}

// Load folds the log without locking.
func (q *Queue) Load() (State, error) {
	st, _, err := q.fold(false)
	return st, err
}

// fold reads the log. strict treats a final line without newline as
// corrupt (under the lock no writer is mid-append); otherwise it is
// skipped as still being written. It returns the corrupt lines too.
func (q *Queue) fold(strict bool) (State, [][]byte, error) {
	var st State
	data, err := os.ReadFile(q.path())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil, nil
	}
	if err != nil {
		return st, nil, fmt.Errorf("read ingest queue: %w", err)
	}
	var bad [][]byte
	byID := map[string]int{}
	var jobs []Job
	finished := map[string]bool{}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var raw []byte
		if i < 0 {
			raw, data = data, nil
			if !strict {
				break
			}
		} else {
			raw, data = data[:i], data[i+1:]
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil || l.ID == "" {
			bad = append(bad, raw)
			continue
		}
		switch l.Op {
		case "add":
			if _, dup := byID[l.ID]; !dup {
				byID[l.ID] = len(jobs)
				jobs = append(jobs, l.Job)
			}
		case "fail":
			if k, ok := byID[l.ID]; ok {
				jobs[k].Tries, jobs[k].Next, jobs[k].Error = l.Tries, l.Next, l.Error
			}
		case "done", "dead":
			finished[l.ID] = true
		default:
			bad = append(bad, raw)
		}
	}
	for _, j := range jobs {
		if !finished[j.ID] {
			st.Pending = append(st.Pending, j)
		}
	}
	st.Corrupt = len(bad)
	return st, bad, nil
}

// Due returns the pending jobs whose time has come, and the earliest time a
// job that is not due yet will be (zero if none).
func (s State) Due(now time.Time) (due []Job, next time.Time) {
	for _, j := range s.Pending {
		if !j.Next.After(now) {
			due = append(due, j)
		} else if next.IsZero() || j.Next.Before(next) {
			next = j.Next
		}
	}
	return due, next
}

// Done records that j finished.
func (q *Queue) Done(j Job) error {
	return statefile.AppendJSONL(q.path(), line{Op: "done", Job: Job{ID: j.ID}})
}

// Fail records a failed attempt at j. A permanent failure, or the
// maxTries-th, moves j to the dead letters; otherwise it is retried after
// backoff·4^(tries-1). It returns whether j is now dead.
func (q *Queue) Fail(j Job, cause error, permanent bool, maxTries int, backoff time.Duration, now time.Time) (bool, error) {
	j.Tries++
	j.Error = cause.Error()
	if permanent || j.Tries >= maxTries {
		j.Next = time.Time{}
		if err := q.addDead(Dead{Job: j, At: now.UTC()}); err != nil {
			return false, err
		}
		return true, statefile.AppendJSONL(q.path(), line{Op: "dead", Job: Job{ID: j.ID}})
	}
	d := backoff
	for range j.Tries - 1 {
		d *= 4
	}
	j.Next = now.Add(d).UTC()
	return false, statefile.AppendJSONL(q.path(), line{Op: "fail", Job: j})
}

// addDead appends d unless a dead letter with its id is already there (a
// drain killed between the two appends of Fail tries again).
func (q *Queue) addDead(d Dead) error {
	return statefile.WithLock(q.deadPath(), func() error {
		have, err := q.DeadLetters()
		if err != nil {
			return err
		}
		if slices.ContainsFunc(have, func(x Dead) bool { return x.ID == d.ID }) {
			return nil
		}
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(q.deadPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, statefile.FileMode)
		if err != nil {
			return fmt.Errorf("open dead letters: %w", err)
		}
		_, werr := f.Write(append(b, '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return werr
	})
}

// DeadLetters lists the dead letters, oldest first.
func (q *Queue) DeadLetters() ([]Dead, error) {
	var out []Dead
	_, err := statefile.ScanJSONL(q.deadPath(), func(b []byte) error {
		var d Dead
		if json.Unmarshal(b, &d) == nil && d.ID != "" {
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// Forgive removes the dead letters of transcript (it has since been
// ingested by hand) and returns how many.
func (q *Queue) Forgive(transcript string) (int, error) {
	n := 0
	err := statefile.WithLock(q.deadPath(), func() error {
		dead, err := q.DeadLetters()
		if err != nil {
			return err
		}
		var keep bytes.Buffer
		for _, d := range dead {
			if d.Transcript == transcript {
				n++
				continue
			}
			b, err := json.Marshal(d)
			if err != nil {
				return err
			}
			keep.Write(b)
			keep.WriteByte('\n')
		}
		if n == 0 {
			return nil
		}
		return statefile.WriteBytes(q.deadPath(), keep.Bytes())
	})
	return n, err
}

// Compact rewrites the log under its lock with only the pending jobs (an
// "add" line each, carrying its tries), and sets corrupt lines aside in
// corrupt.jsonl. It returns the state it wrote.
func (q *Queue) Compact() (State, error) {
	var st State
	err := statefile.WithLock(q.path(), func() error {
		var bad [][]byte
		var err error
		st, bad, err = q.fold(true)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			var buf bytes.Buffer
			for _, b := range bad {
				rec, _ := json.Marshal(map[string]any{"at": time.Now().UTC(), "line": string(b)})
				buf.Write(rec)
				buf.WriteByte('\n')
			}
			if err := statefile.AppendLines(q.corruptPath(), buf.Bytes()); err != nil {
				return err
			}
		}
		var buf bytes.Buffer
		for _, j := range st.Pending {
			b, err := json.Marshal(line{Op: "add", Job: j})
			if err != nil {
				return err
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		return statefile.WriteBytes(q.path(), buf.Bytes())
	})
	return st, err
}

// CompactAt is the log size above which Tidy compacts it.
const CompactAt = 256 << 10

// Tidy compacts the log when it holds corrupt lines or has grown past
// CompactAt, and otherwise only reads it: compaction fsyncs under the lock
// every SessionEnd hook's append takes, so it is kept off the common path.
func (q *Queue) Tidy() (State, error) {
	st, err := q.Load()
	if err != nil {
		return st, err
	}
	fi, err := os.Stat(q.path())
	if st.Corrupt > 0 || (err == nil && fi.Size() > CompactAt) {
		return q.Compact()
	}
	return st, nil
}

// SetAside counts the corrupt lines set aside so far.
func (q *Queue) SetAside() int {
	n := 0
	_, _ = statefile.ScanJSONL(q.corruptPath(), func([]byte) error { n++; return nil })
	return n
}
