package queue

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddDoneFailDead(t *testing.T) {
	q := Open(t.TempDir())
	a, err := q.Add(Job{Session: "a", Transcript: "/t/a.jsonl"})
	require.NoError(t, err)
	b, err := q.Add(Job{Session: "b", Transcript: "/t/b.jsonl"})
	require.NoError(t, err)
	st, err := q.Load()
	require.NoError(t, err)
	require.Len(t, st.Pending, 2)

	require.NoError(t, q.Done(a))
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	dead, err := q.Fail(b, errors.New("boom"), false, 3, time.Minute, now)
	require.NoError(t, err)
	assert.False(t, dead)
	st, _ = q.Load()
	require.Len(t, st.Pending, 1)
	assert.Equal(t, 1, st.Pending[0].Tries)
	due, next := st.Due(now)
	assert.Empty(t, due)
	assert.Equal(t, now.Add(time.Minute), next)
	due, _ = st.Due(now.Add(time.Minute))
	require.Len(t, due, 1)

	dead, err = q.Fail(due[0], errors.New("boom again"), false, 3, time.Minute, now)
	require.NoError(t, err)
	assert.False(t, dead)
	st, _ = q.Load()
	assert.Equal(t, now.Add(4*time.Minute), st.Pending[0].Next, "backoff grows")
	dead, err = q.Fail(st.Pending[0], errors.New("third"), false, 3, time.Minute, now)
	require.NoError(t, err)
	assert.True(t, dead)
	st, _ = q.Load()
	assert.Empty(t, st.Pending)
	dl, err := q.DeadLetters()
	require.NoError(t, err)
	require.Len(t, dl, 1)
	assert.Equal(t, "third", dl[0].Error)
	assert.Equal(t, 3, dl[0].Tries)
	assert.Equal(t, "b", dl[0].Session)

	// A dead letter ingested by hand later is forgiven.
	n, err := q.Forgive("/t/other.jsonl")
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = q.Forgive("/t/b.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	dl, _ = q.DeadLetters()
	assert.Empty(t, dl)
}

func TestPermanentFailureIsDeadAtOnce(t *testing.T) {
	q := Open(t.TempDir())
	j, _ := q.Add(Job{Session: "a"})
	dead, err := q.Fail(j, errors.New("missing"), true, 5, time.Minute, time.Now())
	require.NoError(t, err)
	assert.True(t, dead)
	// A drain killed after the dead letter but before the "dead" line
	// fails the job again: still one dead letter.
	_, err = q.Fail(j, errors.New("missing"), true, 5, time.Minute, time.Now())
	require.NoError(t, err)
	dl, _ := q.DeadLetters()
	assert.Len(t, dl, 1)
}

func TestCorruptLinesAreSetAside(t *testing.T) {
	q := Open(t.TempDir())
	a, _ := q.Add(Job{Session: "a"})
	f, err := os.OpenFile(q.path(), os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString("{not json\n\x00\x01garbage\n{\"op\":\"add\"}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b, _ := q.Add(Job{Session: "b"})
	// A torn final line, as a writer killed mid-append leaves.
	f, _ = os.OpenFile(q.path(), os.O_APPEND|os.O_WRONLY, 0o600)
	_, _ = f.WriteString(`{"op":"add","id":"torn","sess`)
	f.Close()

	st, err := q.Load()
	require.NoError(t, err)
	assert.Len(t, st.Pending, 2, "readers skip what does not parse")

	st, err = q.Compact()
	require.NoError(t, err)
	require.Len(t, st.Pending, 2)
	assert.Equal(t, []string{a.ID, b.ID}, []string{st.Pending[0].ID, st.Pending[1].ID})
	assert.Equal(t, 4, q.SetAside())
	st, _ = q.Compact()
	assert.Zero(t, st.Corrupt)
	assert.Equal(t, 4, q.SetAside(), "set aside once")
	data, _ := os.ReadFile(q.path())
	assert.Equal(t, 2, countLines(data))
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

func TestConcurrentAddsAndCompacts(t *testing.T) {
	q := Open(t.TempDir())
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			_, err := q.Add(Job{Session: fmt.Sprint("s", i)})
			assert.NoError(t, err)
			if i%5 == 0 {
				_, err := q.Compact()
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	st, err := q.Compact()
	require.NoError(t, err)
	assert.Len(t, st.Pending, 40)
}

func TestTidyCompactsOnlyWhenNeeded(t *testing.T) {
	q := Open(t.TempDir())
	a, _ := q.Add(Job{Session: "a"})
	require.NoError(t, q.Done(a))
	st, err := q.Tidy()
	require.NoError(t, err)
	assert.Empty(t, st.Pending)
	data, _ := os.ReadFile(q.path())
	assert.Equal(t, 2, countLines(data), "small and clean: left as it is")

	f, _ := os.OpenFile(q.path(), os.O_APPEND|os.O_WRONLY, 0o600)
	_, _ = f.WriteString("junk\n")
	f.Close()
	_, err = q.Tidy()
	require.NoError(t, err)
	data, _ = os.ReadFile(q.path())
	assert.Empty(t, data, "a corrupt line makes it compact")
	assert.Equal(t, 1, q.SetAside())

	for i := 0; i < 3000; i++ {
		j, _ := q.Add(Job{Session: fmt.Sprint("s", i), Transcript: "/a/long/path/to/a/transcript.jsonl"})
		require.NoError(t, q.Done(j))
	}
	_, err = q.Tidy()
	require.NoError(t, err)
	data, _ = os.ReadFile(q.path())
	assert.Empty(t, data, "a long log is compacted")
}

func FuzzQueueLog(f *testing.F) {
	f.Add([]byte(`{"op":"add","id":"a","session":"s"}` + "\n" + `{"op":"done","id":"a"}` + "\n"))
	f.Add([]byte("{\"op\":\"fail\",\"id\":\"x\",\"tries\":2}\n\x00garbage\n{\"op\":\"add\""))
	f.Fuzz(func(t *testing.T, log []byte) {
		q := Open(t.TempDir())
		if err := os.WriteFile(q.path(), log, 0o600); err != nil {
			t.Fatal(err)
		}
		before, err := q.Load()
		if err != nil {
			t.Fatal(err)
		}
		st, err := q.Compact()
		if err != nil {
			t.Fatal(err)
		}
		again, err := q.Compact()
		if err != nil || again.Corrupt != 0 || len(again.Pending) != len(st.Pending) {
			t.Fatalf("compaction is not stable: %+v then %+v (%v)", st, again, err)
		}
		if len(st.Pending) < len(before.Pending) {
			t.Fatalf("compaction lost jobs: %d before, %d after", len(before.Pending), len(st.Pending))
		}
	})
}
