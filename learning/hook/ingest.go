// Package hook is the SessionEnd side of synaxi's learning loop: the hook
// queues the finished session and starts a detached drain; the drain
// learns from every queued session and publishes the result.
//
// Invariants:
//   - The hook does no learning inline: it appends one queue line and starts
//     the drain in a new session (process group) with no stdio, then returns.
//   - Only one drain works at a time (an flock on the queue's drain.lock).
//     A drain that finds the lock taken exits at once; the working one
//     re-reads the queue after it releases the lock and takes the lock
//     again if anything is due, so an event queued while a drain was
//     finishing is never skipped (Synapptic skipped it behind a live PID).
//   - A job is finished only after its profile version is saved; a drain
//     killed mid-job leaves it queued, and ingest is idempotent per session.
//   - A failure retries with backoff; a permanent one (missing, binary,
//     empty or oversized transcript) or the last try goes to the dead
//     letters with its error, which synaxi status shows.
//   - Processes synaxi starts for its own model calls carry
//     extract.ChildEnv; the hook ignores their sessions.
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/store"
)

// ErrNoTranscript reports a SessionEnd input without a transcript path.
var ErrNoTranscript = errors.New("hook input has no transcript_path")

// Enqueue appends the session of a SessionEnd input to q.
func Enqueue(q *queue.Queue, in *hookio.Input) (queue.Job, error) {
	if in.SessionID == "" {
		return queue.Job{}, fmt.Errorf("hook input has no session_id")
	}
	if in.TranscriptPath == "" {
		return queue.Job{}, ErrNoTranscript
	}
	return q.Add(queue.Job{Session: in.SessionID, Transcript: in.TranscriptPath, Cwd: in.Cwd, Reason: in.Reason})
}

// Spawn starts `exe drain` detached: its own session and process group, no
// stdin, stdout or stderr, not waited for.
func Spawn(exe string) error {
	cmd := exec.Command(exe, "drain")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start drain: %w", err)
	}
	return cmd.Process.Release()
}

// Drainer works through the queue.
type Drainer struct {
	Queue *queue.Queue
	// Pipeline learns from one queued session (read → extract → screen →
	// store).
	Pipeline *pipeline.Pipeline
	Config   config.Ingest
	// Publish runs once after each pass over the queue that saved a new
	// profile version (nil: nothing to do), so a backlog is published once,
	// not once per session. Its failure is logged; the profile change
	// stands.
	Publish func(ctx context.Context) error
	// MaxWait is the longest a drain stays to retry a job whose backoff has
	// not run out; a longer wait is left to the next drain.
	MaxWait time.Duration
	Log     io.Writer
	Now     func() time.Time
}

// New returns the drainer for the user's directories and configuration.
func New(d xdg.Dirs, cfg config.Config, getenv func(string) string, log io.Writer) (*Drainer, error) {
	p, err := pipeline.New(d, cfg, getenv)
	if err != nil {
		return nil, err
	}
	return &Drainer{
		Queue: queue.Open(d.StatePath("ingest")), Pipeline: p, Config: cfg.Ingest,
		MaxWait: 2 * time.Minute, Log: log, Now: time.Now,
		Publish: func(ctx context.Context) error {
			rep, err := publish.Publish(ctx, d, cfg.Guidance, getenv)
			if err == nil && rep != nil {
				for _, p := range rep.Problems {
					fmt.Fprintf(log, "publish: %v\n", p)
				}
			}
			return err
		},
	}, nil
}

// Stats says what a drain did.
type Stats struct {
	Done, Failed, Dead int
	Published          int // publications run
	latest             int // newest profile version saved, not yet published
}

// Drain works until no job is due, then releases the lock and checks once
// more. It returns at once when another drain holds the lock.
func (dr *Drainer) Drain(ctx context.Context) (Stats, error) {
	var st Stats
	if err := xdg.Ensure(dr.Queue.Dir()); err != nil {
		return st, err
	}
	for {
		lk := flock.New(dr.Queue.LockPath(), flock.SetPermissions(statefile.FileMode))
		ok, err := lk.TryLock()
		if err != nil {
			return st, fmt.Errorf("lock drain: %w", err)
		}
		if !ok {
			return st, nil // the holder re-checks after it lets go
		}
		err = dr.work(ctx, &st)
		lk.Unlock()
		dr.publish(ctx, &st)
		if err != nil {
			return st, err
		}
		s, err := dr.Queue.Load()
		if err != nil {
			return st, err
		}
		if due, _ := s.Due(dr.Now()); len(due) == 0 {
			return st, nil
		}
	}
}

// work runs jobs while any is due, waiting up to MaxWait for one in
// backoff. The log is tidied once per turn at the lock; afterwards it is
// only read (finished jobs are appended lines).
func (dr *Drainer) work(ctx context.Context, st *Stats) error {
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		read := dr.Queue.Load
		if first {
			read = dr.Queue.Tidy
		}
		s, err := read()
		if err != nil {
			return err
		}
		due, next := s.Due(dr.Now())
		if len(due) == 0 {
			if next.IsZero() || next.Sub(dr.Now()) > dr.MaxWait {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(next.Sub(dr.Now()), time.Second)):
			}
			continue
		}
		for _, j := range due {
			dr.run(ctx, j, st)
		}
	}
}

// run processes one job and records the outcome.
func (dr *Drainer) run(ctx context.Context, j queue.Job, st *Stats) {
	project := ""
	if j.Cwd != "" {
		project = store.ProjectRoot(j.Cwd)
	}
	res, err := dr.Pipeline.Ingest(ctx, j.Transcript, pipeline.Options{Project: project, Session: j.Session})
	if err != nil {
		dead, ferr := dr.Queue.Fail(j, err, Permanent(err), dr.Config.MaxTries, dr.Config.RetryBackoff.Std(), dr.Now())
		if ferr != nil {
			dr.logf("record failure of %s: %v", j.Session, ferr)
		}
		if dead {
			st.Dead++
			dr.logf("gave up on session %s: %v", j.Session, err)
		} else {
			st.Failed++
			dr.logf("session %s failed (try %d of %d), retrying later: %v", j.Session, j.Tries+1, dr.Config.MaxTries, err)
		}
		return
	}
	if err := dr.Queue.Done(j); err != nil {
		dr.logf("record done %s: %v", j.Session, err)
	}
	st.Done++
	if res.Unchanged {
		dr.logf("session %s: already read at this size, nothing new", j.Session)
		return
	}
	dr.logf("session %s: %d proposed, %d kept, %d rejected, %d you had rejected before, %d dropped for a secret, %d flagged dangerous, profile v%d", j.Session,
		res.Proposed, len(res.Kept)-res.Merge.Forgotten, len(res.Rejected), res.Merge.Forgotten, res.Gate.SecretsDropped, res.Gate.DangerousFlagged, res.Version)
	st.latest = max(st.latest, res.Version)
}

// publish runs Publish if a version was saved since the last time.
func (dr *Drainer) publish(ctx context.Context, st *Stats) {
	if st.latest == 0 || dr.Publish == nil {
		return
	}
	if err := dr.Publish(ctx); err != nil {
		dr.logf("publish after v%d: %v", st.latest, err)
	}
	st.latest = 0
	st.Published++
}

// Permanent reports whether retrying err cannot help: the transcript is
// missing, binary, not a transcript, or over the size limit.
func Permanent(err error) bool {
	return errors.Is(err, read.ErrMissing) || errors.Is(err, read.ErrBinary) ||
		errors.Is(err, read.ErrEmpty) || errors.Is(err, read.ErrTooLarge)
}

func (dr *Drainer) logf(format string, a ...any) {
	if dr.Log != nil {
		fmt.Fprintf(dr.Log, "%s %s\n", dr.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
	}
}
