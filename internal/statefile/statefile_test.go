package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The concurrency tests re-run this test binary as child processes; the
// environment variable selects what the child does.
const (
	helperEnv  = "SYNAXI_STATEFILE_HELPER"
	helperPath = "SYNAXI_STATEFILE_PATH"
	helperID   = "SYNAXI_STATEFILE_ID"
)

const (
	procs   = 32
	perProc = 200
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Getenv(helperPath), os.Getenv(helperID)))
	}
	os.Exit(m.Run())
}

type counterDoc struct {
	N int `json:"n"`
}

// bigDoc is a large document whose checksum proves it was written whole.
type bigDoc struct {
	Seq  int    `json:"seq"`
	Pad  string `json:"pad"`
	Hash string `json:"hash"`
}

func newBigDoc(seq int) bigDoc {
	pad := strings.Repeat(fmt.Sprintf("%08d", seq), 256<<10/8) // 256 KB each
	sum := sha256.Sum256([]byte(pad))
	return bigDoc{Seq: seq, Pad: pad, Hash: hex.EncodeToString(sum[:])}
}

func (d bigDoc) valid() bool {
	sum := sha256.Sum256([]byte(d.Pad))
	return d.Hash == hex.EncodeToString(sum[:]) && len(d.Pad) == 256<<10
}

type appendLine struct {
	Proc int    `json:"proc"`
	I    int    `json:"i"`
	Pad  string `json:"pad"`
}

// helper is the child process's body; its exit code is the result.
func helper(mode, path, id string) int {
	proc, _ := strconv.Atoi(id)
	var (
		err  error
		opts []Option
	)
	if m, ok := strings.CutSuffix(mode, "-nosync"); ok {
		mode, opts = m, []Option{NoSync}
	}
	switch mode {
	case "update":
		for range perProc {
			if err = Update(path, func(d *counterDoc) error { d.N++; return nil }, opts...); err != nil {
				break
			}
		}
	case "append":
		for i := range perProc {
			// Lines of varying size, up to 12 KB, to make a torn write visible.
			line := appendLine{Proc: proc, I: i, Pad: strings.Repeat("x", (proc*7919+i*104729)%(12<<10))}
			if err = AppendJSONL(path, line); err != nil {
				break
			}
		}
	case "write-forever":
		// Encode ahead so that the loop is all locking and writing: a kill
		// then almost always lands inside a write, with the lock held.
		var docs [2][]byte
		for i := range docs {
			if docs[i], err = json.Marshal(newBigDoc(i + 2)); err != nil {
				break
			}
		}
		for i := 0; err == nil; i++ {
			err = WithLock(path, func() error { return WriteBytes(path, docs[i%2], opts...) })
		}
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func helperCmd(t *testing.T, mode, path string, id int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperPath+"="+path, helperID+"="+strconv.Itoa(id))
	cmd.Stderr = os.Stderr
	return cmd
}

// runHelpers starts procs children at once and waits for all of them.
func runHelpers(t *testing.T, mode, path string) {
	t.Helper()
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := helperCmd(t, mode, path, i)
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		assert.NoError(t, cmd.Wait(), "child %d", i)
	}
}

// memDir is a temporary directory on tmpfs when the machine has one. The
// 6,400 serialised updates test locking, not the disk: on tmpfs fsync is
// free, so the test takes about a second instead of one fsync per update
// (2 ms or more each on a busy disk).
func memDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "synaxi-statefile-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func TestUpdateManyProcessesLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 32 processes")
	}
	for _, mode := range []string{"update", "update-nosync"} {
		path := filepath.Join(memDir(t), "state", "counter.json")
		runHelpers(t, mode, path)
		var d counterDoc
		require.NoError(t, ReadJSON(path, &d))
		assert.Equal(t, procs*perProc, d.N, mode)
		assertPrivate(t, path)
	}
}

func TestAppendJSONLManyProcessesEveryLineWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 32 processes")
	}
	path := filepath.Join(t.TempDir(), "log", "ledger.jsonl")
	runHelpers(t, "append", path)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	require.Len(t, lines, procs*perProc)
	seen := map[[2]int]bool{}
	next := map[int]int{}
	for n, l := range lines {
		var line appendLine
		require.NoError(t, json.Unmarshal(l, &line), "line %d is not whole", n+1)
		require.Equal(t, (line.Proc*7919+line.I*104729)%(12<<10), len(line.Pad), "line %d", n+1)
		seen[[2]int{line.Proc, line.I}] = true
		// Each process's lines appear in the order it wrote them.
		require.Equal(t, next[line.Proc], line.I, "line %d", n+1)
		next[line.Proc]++
	}
	assert.Len(t, seen, procs*perProc)

	count := 0
	skipped, err := ScanJSONL(path, func([]byte) error { count++; return nil })
	require.NoError(t, err)
	assert.Zero(t, skipped)
	assert.Equal(t, procs*perProc, count)
	assertPrivate(t, path)
}

// TestKilledWriterLeavesValidFile kills a process that rewrites a large
// document in a loop, at several points, and checks that the file always
// decodes to a complete earlier version and that the next Update takes the
// lock (the kernel released the dead process's flock).
func TestKilledWriterLeavesValidFile(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "big.json")
	seen := map[int]int{}
	for round := range 12 {
		mode := "write-forever"
		if round%2 == 1 {
			mode += "-nosync" // the same guarantee without fsync
		}
		cmd := helperCmd(t, mode, path, round)
		require.NoError(t, cmd.Start())
		// Wait until the child has replaced the version the previous round
		// left (seq 1), then let it run a little longer.
		require.Eventually(t, func() bool {
			var d bigDoc
			return ReadJSON(path, &d) == nil && d.Seq >= 2
		}, 20*time.Second, time.Millisecond, "round %d: child wrote nothing", round)
		time.Sleep(time.Duration(round*round) * time.Millisecond / 2)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())

		var d bigDoc
		require.NoError(t, ReadJSON(path, &d), "round %d", round)
		require.True(t, d.valid(), "round %d: torn document seq %d", round, d.Seq)
		seen[d.Seq]++

		// The lock died with the process: an Update succeeds at once.
		start := time.Now()
		require.NoError(t, Update(path, func(d *bigDoc) error {
			require.True(t, d.valid())
			*d = newBigDoc(1)
			return nil
		}))
		assert.Less(t, time.Since(start), LockTimeout/2)
	}
	litter, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".big.json*"))
	t.Logf("versions found after the kills: %v; temporary files left by killed writers: %d", seen, len(litter))
	// What a killed writer leaves is exactly what PruneTemps removes.
	for _, l := range litter {
		assert.True(t, IsTemp(filepath.Base(l)), l)
	}
	assert.Equal(t, len(litter), PruneTemps(filepath.Dir(path), 0, time.Now().Add(time.Second)))
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".big.json*"))
	assert.Empty(t, left)
	_, err := os.Stat(path)
	assert.NoError(t, err, "the document itself stays")
	assertPrivate(t, path)
}

func TestUpdate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "doc.json")

	// A missing file starts from the zero value; the directories are made.
	require.NoError(t, Update(path, func(d *counterDoc) error {
		assert.Zero(t, d.N)
		d.N = 5
		return nil
	}))
	assertPrivate(t, path)

	// ErrSkip and other errors leave the file as it was.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, Update(path, func(d *counterDoc) error { d.N = 99; return ErrSkip }))
	boom := errors.New("boom")
	require.ErrorIs(t, Update(path, func(d *counterDoc) error { d.N = 99; return boom }), boom)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// A corrupt document is replaced rather than wedging every update.
	require.NoError(t, os.WriteFile(path, []byte(`{"n":`), 0o600))
	require.NoError(t, Update(path, func(d *counterDoc) error {
		assert.Zero(t, d.N)
		d.N = 1
		return nil
	}))
	var d counterDoc
	require.NoError(t, ReadJSON(path, &d))
	assert.Equal(t, 1, d.N)

	// A path that cannot be read is an error, not a fresh document.
	unreadable := filepath.Join(dir, "dir.json")
	require.NoError(t, os.MkdirAll(filepath.Join(unreadable, "keep"), 0o700))
	called := false
	err = Update(unreadable, func(d *counterDoc) error { called = true; return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read state")
	assert.False(t, called)
	assert.DirExists(t, filepath.Join(unreadable, "keep"))
}

func TestReadWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	var d counterDoc
	require.ErrorIs(t, ReadJSON(path, &d), fs.ErrNotExist)
	require.NoError(t, WriteJSON(path, counterDoc{N: 3}))
	require.NoError(t, ReadJSON(path, &d))
	assert.Equal(t, 3, d.N)
	assertPrivate(t, path)

	require.NoError(t, os.WriteFile(path, []byte("nope"), 0o600))
	err := ReadJSON(path, &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)

	require.Error(t, WriteJSON(path, func() {}), "unencodable value")
}

func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.json")
	require.NoError(t, WriteJSON(path, counterDoc{N: 1}))
	// flock(2) locks belong to the open file description, so a second
	// handle in the same process contends like another process would.
	held := flock.New(LockPath(path))
	require.NoError(t, held.Lock())
	defer held.Unlock()

	old := LockTimeout
	LockTimeout = 50 * time.Millisecond
	defer func() { LockTimeout = old }()
	err := Update(path, func(d *counterDoc) error { d.N++; return nil })
	require.ErrorIs(t, err, ErrLockTimeout)
	require.NoError(t, AppendJSONL(path+"l", 1), "another file's lock is free")
	require.ErrorIs(t, WithLock(path, func() error { return nil }), ErrLockTimeout)

	var d counterDoc
	require.NoError(t, ReadJSON(path, &d), "readers take no lock")
	assert.Equal(t, 1, d.N)
}

func TestScanJSONL(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		lines   []string
		skipped int
	}{
		{"missing file", "", nil, 0},
		{"empty", "", nil, 0},
		{"whole lines", "{\"a\":1}\n[2]\n\"s\"\n", []string{`{"a":1}`, `[2]`, `"s"`}, 0},
		{"torn last line", "{\"a\":1}\n{\"a\":2}\n{\"a\":", []string{`{"a":1}`, `{"a":2}`}, 1},
		{"valid last line without newline is torn", "{\"a\":1}\n{\"a\":2}", []string{`{"a":1}`}, 1},
		{"malformed middle line", "{\"a\":1}\nnot json\n\n  \n{\"a\":3}\r\n", []string{`{"a":1}`, `{"a":3}`}, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
			if tt.name != "missing file" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			var got []string
			skipped, err := ScanJSONL(path, func(line []byte) error {
				got = append(got, string(line))
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, tt.lines, got)
			assert.Equal(t, tt.skipped, skipped)
		})
	}

	t.Run("callback error stops the scan", func(t *testing.T) {
		path := filepath.Join(dir, "stop.jsonl")
		require.NoError(t, AppendJSONL(path, 1, 2, 3))
		stop := errors.New("stop")
		n := 0
		_, err := ScanJSONL(path, func([]byte) error { n++; return stop })
		require.ErrorIs(t, err, stop)
		assert.Equal(t, 1, n)
	})
	t.Run("long lines", func(t *testing.T) {
		path := filepath.Join(dir, "long.jsonl")
		big := strings.Repeat("y", 5<<20)
		require.NoError(t, AppendJSONL(path, big, "small"))
		var got []int
		skipped, err := ScanJSONL(path, func(line []byte) error { got = append(got, len(line)); return nil })
		require.NoError(t, err)
		assert.Zero(t, skipped)
		assert.Equal(t, []int{len(big) + 2, len(`"small"`)}, got)
	})
}

func TestAppendLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.jsonl")
	require.NoError(t, AppendLines(path, nil))
	_, err := os.Stat(path)
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing to append creates nothing")
	require.NoError(t, AppendLines(path, []byte(`{"a":1}`)))
	require.NoError(t, AppendLines(path, []byte("{\"a\":2}\n{\"a\":3}\n")))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n", string(raw))
	require.Error(t, AppendJSONL(path, 1, func() {}), "unencodable value")
	raw2, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, raw, raw2, "a batch with a bad value writes nothing")
	assertPrivate(t, path)
}

func TestModes(t *testing.T) {
	dir := t.TempDir()
	// An existing, too open directory is tightened.
	open := filepath.Join(dir, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o755))
	require.NoError(t, WriteJSON(filepath.Join(open, "a.json"), 1))
	assertPrivate(t, filepath.Join(open, "a.json"))

	nested := filepath.Join(dir, "x", "y", "z.jsonl")
	require.NoError(t, AppendJSONL(nested, 1))
	assertPrivate(t, nested)
	for _, d := range []string{filepath.Join(dir, "x"), filepath.Join(dir, "x", "y")} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
}

// assertPrivate checks that path and its lock file are 0600 and their
// directory 0700.
func assertPrivate(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, LockPath(path)} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
	fi, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), filepath.Dir(path))
}
