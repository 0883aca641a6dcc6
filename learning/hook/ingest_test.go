package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

// transcript writes a one-correction session.
func transcript(t *testing.T, dir, session, typed string) string {
	t.Helper()
	line := fmt.Sprintf(`{"type":"user","uuid":"%s-u","sessionId":%q,"cwd":%q,"timestamp":"2026-11-20T09:00:00Z","message":{"role":"user","content":%q}}`+"\n",
		session, session, dir, typed)
	p := filepath.Join(dir, session+".jsonl")
	require.NoError(t, os.WriteFile(p, []byte(line), 0o600))
	return p
}

// gated is an extractor that blocks until released, to hold a drain in
// the middle of a job.
type gated struct {
	started chan string
	release chan struct{}
	calls   atomic.Int32
}

func (g *gated) Name() string { return "gated" }
func (g *gated) Extract(ctx context.Context, d *read.Doc, known []store.Entry) ([]store.Observation, error) {
	g.calls.Add(1)
	g.started <- d.Session
	<-g.release
	return extract.Embedded{}.Extract(ctx, d, known)
}

func newDrainer(t *testing.T, ex extract.Extractor) (*Drainer, *bytes.Buffer) {
	root := t.TempDir()
	cfg := config.Default().Ingest
	cfg.RetryBackoff = config.Duration(50 * time.Millisecond)
	cfg.MaxTries = 3
	var log bytes.Buffer
	return &Drainer{
		Queue: queue.Open(filepath.Join(root, "q")),
		Pipeline: &pipeline.Pipeline{Store: store.Open(filepath.Join(root, "profile")), Extractor: ex,
			MaxBytes: int64(cfg.MaxTranscriptMB) << 20, Counts: filepath.Join(root, "q", screen.CountsFile)},
		Config: cfg, MaxWait: 5 * time.Second, Log: &log, Now: time.Now,
		Publish: func(context.Context) error { return nil },
	}, &log
}

// Synapptic's hook skipped a session whose end arrived while a previous
// run's PID was alive. Here the event queued during a drain is processed
// by that drain after it lets go of the lock, and a second drain started
// meanwhile exits without losing it.
func TestEventDuringDrainIsNotSkipped(t *testing.T) {
	g := &gated{started: make(chan string, 4), release: make(chan struct{})}
	dr, _ := newDrainer(t, g)
	dir := t.TempDir()
	_, err := Enqueue(dr.Queue, &hookio.Input{Common: hookio.Common{SessionID: "s1", TranscriptPath: transcript(t, dir, "s1", "never push to main on fridays"), Cwd: dir}})
	require.NoError(t, err)

	done := make(chan Stats)
	go func() {
		st, err := dr.Drain(context.Background())
		assert.NoError(t, err)
		done <- st
	}()
	assert.Equal(t, "s1", <-g.started)

	// SessionEnd of s2 while the first drain is busy: queued, and a second
	// drain finds the lock taken and returns at once.
	_, err = Enqueue(dr.Queue, &hookio.Input{Common: hookio.Common{SessionID: "s2", TranscriptPath: transcript(t, dir, "s2", "always sign commits with gpg"), Cwd: dir}})
	require.NoError(t, err)
	second, _ := newDrainer(t, g)
	second.Queue, second.Pipeline = dr.Queue, dr.Pipeline
	st, err := second.Drain(context.Background())
	require.NoError(t, err)
	assert.Zero(t, st.Done)

	close(g.release)
	st = <-done
	assert.Equal(t, 2, st.Done)
	assert.Equal(t, 1, st.Published, "both versions published in one go")
	p, err := dr.Pipeline.Store.Load()
	require.NoError(t, err)
	assert.Contains(t, p.Ingested, "s1")
	assert.Contains(t, p.Ingested, "s2")
	qs, _ := dr.Queue.Load()
	assert.Empty(t, qs.Pending)
}

type flaky struct{ fails int }

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Extract(ctx context.Context, d *read.Doc, known []store.Entry) ([]store.Observation, error) {
	if f.fails > 0 {
		f.fails--
		return nil, errors.New("endpoint unavailable")
	}
	return extract.Embedded{}.Extract(ctx, d, known)
}

func TestRetryWithBackoffThenSucceed(t *testing.T) {
	dr, log := newDrainer(t, &flaky{fails: 2})
	dir := t.TempDir()
	_, err := dr.Queue.Add(queue.Job{Session: "s1", Transcript: transcript(t, dir, "s1", "never use tabs"), Cwd: dir})
	require.NoError(t, err)
	st, err := dr.Drain(context.Background())
	require.NoError(t, err)
	assert.Equal(t, Stats{Done: 1, Failed: 2, Published: 1}, st)
	assert.Contains(t, log.String(), "endpoint unavailable")
	p, _ := dr.Pipeline.Store.Load()
	assert.Len(t, p.Entries, 1)
	// An extraction that failed never marked the session processed.
	assert.Equal(t, 1, p.Version)
}

func TestFailuresEndInDeadLetters(t *testing.T) {
	dr, _ := newDrainer(t, &flaky{fails: 99})
	dir := t.TempDir()
	_, err := dr.Queue.Add(queue.Job{Session: "s1", Transcript: transcript(t, dir, "s1", "never use tabs")})
	require.NoError(t, err)
	_, err = dr.Queue.Add(queue.Job{Session: "gone", Transcript: filepath.Join(dir, "gone.jsonl")})
	require.NoError(t, err)
	st, err := dr.Drain(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, st.Dead)
	assert.Equal(t, 2, st.Failed, "the flaky one was tried MaxTries times; the missing one once")
	assert.Zero(t, st.Published, "nothing saved, nothing published")
	dl, err := dr.Queue.DeadLetters()
	require.NoError(t, err)
	require.Len(t, dl, 2)
	assert.Equal(t, "gone", dl[0].Session)
	assert.Contains(t, dl[0].Error, "transcript does not exist")
	assert.Equal(t, 1, dl[0].Tries)
	assert.Equal(t, 3, dl[1].Tries)
	_, err = os.Stat(dr.Pipeline.Store.Path())
	assert.True(t, os.IsNotExist(err), "no profile version was written")
}

func TestCorruptQueueLineIsNotFatal(t *testing.T) {
	dr, _ := newDrainer(t, extract.Embedded{})
	dir := t.TempDir()
	_, err := dr.Queue.Add(queue.Job{Session: "s1", Transcript: transcript(t, dir, "s1", "never use tabs")})
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(dr.Queue.Dir(), "queue.jsonl"), os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, _ = f.WriteString("\x00\x00 garbage {\n")
	f.Close()
	_, err = dr.Queue.Add(queue.Job{Session: "s2", Transcript: transcript(t, dir, "s2", "always run the linter first")})
	require.NoError(t, err)
	st, err := dr.Drain(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, st.Done)
	assert.Equal(t, 1, dr.Queue.SetAside())
}

func TestEnqueueNeedsSessionAndTranscript(t *testing.T) {
	q := queue.Open(t.TempDir())
	_, err := Enqueue(q, &hookio.Input{Common: hookio.Common{SessionID: "s"}})
	assert.ErrorIs(t, err, ErrNoTranscript)
	_, err = Enqueue(q, &hookio.Input{Common: hookio.Common{TranscriptPath: "/x"}})
	assert.Error(t, err)
}

// A session already read at its size says so in the drain log, not "0
// proposed … profile v0" (issue 24).
func TestDrainLogSaysAlreadyRead(t *testing.T) {
	dr, log := newDrainer(t, extract.Embedded{})
	dir := t.TempDir()
	path := transcript(t, dir, "s1", "never push to main on fridays")
	for range 2 {
		_, err := Enqueue(dr.Queue, &hookio.Input{Common: hookio.Common{SessionID: "s1", TranscriptPath: path, Cwd: dir}})
		require.NoError(t, err)
		_, err = dr.Drain(context.Background())
		require.NoError(t, err)
	}
	assert.Contains(t, log.String(), "session s1: 1 proposed, 1 kept")
	assert.Contains(t, log.String(), "session s1: already read at this size, nothing new")
	assert.NotContains(t, log.String(), "profile v0")
}
