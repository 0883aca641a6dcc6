package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/testbin"
	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/store"
)

var bin string

func TestMain(m *testing.M) { testbin.Main(m, "synaxi-ingest", &bin) }

// mClaude is the repository's copy of the m-claude fixture (see its README).
const mClaude = "../../extract/testdata/m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl"
const mClaudeSession = "c76e5be5-ffd2-4901-a935-885527c83a61"

type world struct {
	root string
	env  []string
}

func newWorld(t testing.TB, extraEnv ...string) *world {
	root := t.TempDir()
	w := &world{root: root, env: []string{
		"HOME=" + root, "PATH=" + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"), "XDG_DATA_HOME=" + filepath.Join(root, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"), "XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
	}}
	w.env = append(w.env, extraEnv...)
	return w
}

func (w *world) queue() *queue.Queue {
	return queue.Open(filepath.Join(w.root, "state", "synaxi", "ingest"))
}
func (w *world) store() *store.Store {
	return store.Open(filepath.Join(w.root, "data", "synaxi", "profile"))
}

func (w *world) hook(t *testing.T, session, transcript string, extraEnv ...string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"session_id": session, "transcript_path": transcript,
		"cwd": w.root, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	cmd := exec.Command(bin)
	cmd.Env = append(append([]string(nil), w.env...), extraEnv...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the hook always exits 0: %s", stderr.String())
	assert.Empty(t, out, "SessionEnd output is not protocol; the hook prints nothing")
	return stderr.String()
}

func (w *world) drain(t *testing.T) {
	t.Helper()
	cmd := exec.Command(bin, "drain")
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// waitIdle waits until the queue is empty and no drain holds the lock.
func (w *world) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st, err := w.queue().Load()
		require.NoError(t, err)
		if len(st.Pending) == 0 && !w.drainRunning() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(w.queue().Dir(), "drain.log"))
	t.Fatalf("queue not drained in time; drain.log:\n%s", log)
}

func (w *world) drainRunning() bool {
	cmd := exec.Command("flock", "-n", w.queue().LockPath(), "true")
	return cmd.Run() != nil
}

// copyAs writes the m-claude fixture as a new session id.
func copyAs(t testing.TB, dir, session string) string {
	data, err := os.ReadFile(mClaude)
	require.NoError(t, err)
	p := filepath.Join(dir, session+".jsonl")
	require.NoError(t, os.WriteFile(p, bytes.ReplaceAll(data, []byte(mClaudeSession), []byte(session)), 0o600))
	return p
}

func guard(t *testing.T, p *store.Profile) *store.Entry {
	t.Helper()
	for i := range p.Entries {
		if p.Entries[i].Text == "never commit without signing" {
			return &p.Entries[i]
		}
	}
	t.Fatalf("no signing guard in %d entries", len(p.Entries))
	return nil
}

func TestHookQueuesAndDetachedDrainLearns(t *testing.T) {
	w := newWorld(t)
	path := copyAs(t, w.root, "sess-1")
	w.hook(t, "sess-1", path)
	w.waitIdle(t)
	p, err := w.store().Load()
	require.NoError(t, err)
	g := guard(t, p)
	assert.Equal(t, 1, g.Count)
	assert.Equal(t, "never commit without signing.", g.Evidence[0].Quote)
	assert.Equal(t, "sess-1", g.Evidence[0].Session)
	log, _ := os.ReadFile(filepath.Join(w.queue().Dir(), "drain.log"))
	assert.Contains(t, string(log), "session sess-1:")
}

func TestOwnModelSessionsAreIgnored(t *testing.T) {
	w := newWorld(t)
	w.hook(t, "child", copyAs(t, w.root, "child"), extract.ChildEnv+"=1")
	w.hook(t, "off", copyAs(t, w.root, "off"), "SYNAXI_INGEST_ENABLED=false")
	_, err := os.Stat(w.queue().Dir())
	assert.True(t, os.IsNotExist(err), "nothing was queued")
}

func TestTwoSessionEndsAtOnce(t *testing.T) {
	w := newWorld(t)
	var wg sync.WaitGroup
	for _, s := range []string{"a-1", "b-2"} {
		path := copyAs(t, w.root, s)
		wg.Go(func() { w.hook(t, s, path) })
	}
	wg.Wait()
	w.waitIdle(t)
	p, err := w.store().Load()
	require.NoError(t, err)
	assert.Contains(t, p.Ingested, "a-1")
	assert.Contains(t, p.Ingested, "b-2")
	assert.Equal(t, 2, guard(t, p).Count)
}

// A drain killed at random moments, again and again, loses no queued
// session, counts none twice and leaves no torn file.
func TestKilledDrainLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a drain many times")
	}
	w := newWorld(t)
	q := w.queue()
	const n = 24
	for i := range n {
		s := fmt.Sprintf("kill-%02d", i)
		_, err := q.Add(queue.Job{Session: s, Transcript: copyAs(t, w.root, s), Cwd: w.root})
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for round := 0; round < 60; round++ {
		st, err := q.Load()
		require.NoError(t, err)
		if len(st.Pending) == 0 {
			break
		}
		cmd := exec.Command(bin, "drain")
		cmd.Env = w.env
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		if cmd.Process.Kill() == nil {
			kills++
		}
		_ = cmd.Wait()
		checkNoTornFiles(t, w)
	}
	w.drain(t)
	t.Logf("%d kills", kills)
	assert.Positive(t, kills)

	st, err := q.Load()
	require.NoError(t, err)
	assert.Empty(t, st.Pending)
	dl, _ := q.DeadLetters()
	assert.Empty(t, dl)
	p, err := w.store().Load()
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	assert.Len(t, p.Ingested, n, "every session was learned from")
	g := guard(t, p)
	assert.Equal(t, n, g.Count, "every session counted exactly once")
	checkNoTornFiles(t, w)
}

func checkNoTornFiles(t *testing.T, w *world) {
	t.Helper()
	dir := filepath.Dir(w.store().Path())
	for _, dir := range []string{dir, filepath.Join(dir, "history")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.True(t, json.Valid(data), "torn %s", f)
		}
	}
	data, err := os.ReadFile(filepath.Join(w.queue().Dir(), "queue.jsonl"))
	if err == nil {
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if line != "" {
				require.True(t, json.Valid([]byte(line)), "torn queue line %q", line)
			}
		}
	}
	assert.Zero(t, w.queue().SetAside(), "no corrupt queue line")
}

// Missing, truncated, binary and oversized transcripts each end in the
// dead-letter list with an error naming the problem; nothing else changes.
func TestBadTranscriptsGoToDeadLetters(t *testing.T) {
	w := newWorld(t, "SYNAXI_INGEST_MAX_TRIES=2", "SYNAXI_INGEST_RETRY_BACKOFF=1s")
	good := copyAs(t, w.root, "good")
	w.hook(t, "good", good)
	w.waitIdle(t)
	before, err := os.ReadFile(w.store().Path())
	require.NoError(t, err)

	data, _ := os.ReadFile(good)
	trunc := filepath.Join(w.root, "trunc.jsonl")
	require.NoError(t, os.WriteFile(trunc, data[:len(data)/2], 0o600))
	binary := filepath.Join(w.root, "binary.jsonl")
	blob := make([]byte, 64<<10)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(binary, blob, 0o600))
	huge := filepath.Join(t.TempDir(), "huge.jsonl")
	writeHuge(t, huge, data, 200<<20)

	want := map[string]string{
		"missing": "transcript does not exist",
		"trunc":   "ends mid-record (truncated)",
		"binary":  "binary data",
		"huge":    "transcript is too large: 201 MB, over the 128 MB limit",
	}
	paths := map[string]string{"missing": filepath.Join(w.root, "missing.jsonl"), "trunc": trunc, "binary": binary, "huge": huge}
	for s, p := range paths {
		w.hook(t, s, p)
	}
	w.waitIdle(t)
	dl, err := w.queue().DeadLetters()
	require.NoError(t, err)
	require.Len(t, dl, len(want))
	for _, d := range dl {
		assert.Contains(t, d.Error, want[d.Session], d.Session)
		assert.Contains(t, d.Error, paths[d.Session], "the error names the file")
	}
	after, err := os.ReadFile(w.store().Path())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the profile did not change")
}

// writeHuge writes a real JSONL transcript of at least size bytes by
// repeating line-complete chunks of data.
func writeHuge(t *testing.T, path string, data []byte, size int64) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	var written int64
	for written < size {
		n, err := f.Write(data)
		require.NoError(t, err)
		written += int64(n)
	}
}

// The drain's log does not grow without bound: past 1 MB it is rotated
// (lumberjack) on the next write, one older log is kept, and both stay
// private to the user.
func TestDrainLogIsRotated(t *testing.T) {
	w := newWorld(t)
	dir := w.queue().Dir()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	old := bytes.Repeat([]byte("an old drain line\n"), (1<<20)/18+1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "drain.log"), old, 0o600))
	w.hook(t, "sess-1", copyAs(t, w.root, "sess-1"))
	w.waitIdle(t)

	cur, err := os.ReadFile(filepath.Join(dir, "drain.log"))
	require.NoError(t, err)
	assert.Contains(t, string(cur), "session sess-1:")
	assert.NotContains(t, string(cur), "an old drain line", "the new log starts empty")
	backups, err := filepath.Glob(filepath.Join(dir, "drain-*.log"))
	require.NoError(t, err)
	require.Len(t, backups, 1, "one older log kept")
	kept, err := os.ReadFile(backups[0])
	require.NoError(t, err)
	assert.Equal(t, old, kept)
	for _, p := range append(backups, filepath.Join(dir, "drain.log")) {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
}
