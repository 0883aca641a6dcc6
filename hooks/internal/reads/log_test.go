package reads

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEntryRoundTrip(t *testing.T) {
	at := time.Unix(0, 1765100000123456789)
	for _, e := range []entry{
		{op: opRead, path: "/w/a.go", rec: FileRec{Size: 120, MtimeNs: 1765100000000000001, Ino: 42, Spans: []span{{1, 40}, {90, 0}}, ViaTool: true, At: at}},
		{op: opRead, path: "/w/with space\nand newline \"quoted\".go", rec: FileRec{Size: 0, MtimeNs: -5, At: at}},
		{op: opGrant, path: "/w/a.go", tokens: 761},
		{op: opUsed, path: "/w/a.go"},
		{op: opForget, path: "/w/ü.go"},
		{op: opReset},
	} {
		line := e.encode()
		require.Equal(t, byte('\n'), line[len(line)-1])
		got, ok := parseEntry(line[:len(line)-1])
		require.True(t, ok, "%q", line)
		assert.Equal(t, e, got, "%q", line)
	}
}

func TestParseEntryRejects(t *testing.T) {
	for _, line := range []string{
		``, `r`, `q "/a"`, `X "/a"`, `u /a`, `u ""`, `g -1 "/a"`, `g x "/a"`,
		`r 1 2 3 t 4 "/a"`,          // a field short
		`r 1 2 3 y 4 1-0 "/a"`,      // bad VIA
		`r 1 2 3 t 4 0-5 "/a"`,      // a span from line 0
		`r 1 2 3 t 4 9-5 "/a"`,      // ends before it starts
		`r -1 2 3 t 4 1-0 "/a"`,     // negative size
		`r 1 2 3 t 4 1-0 "/a" tail`, // trailing bytes after the path
		`r 1 2 3 t 4 1-0  "/a"`,     // two spaces
		`r 1 2 3 t 4 1-0 "/a`,       // torn
		`g 5 "/a"` + "\x00",         // not a quoted string
	} {
		_, ok := parseEntry([]byte(line))
		assert.False(t, ok, "%q", line)
	}
}

func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{`r 1 2 3 t 4 1-40,90-0 "/a.go"`, `g 761 "/a.go"`, `u "/a"`, `x "/b"`, `X`, `r 0 0 0 - 0 . "/c"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := parseEntry(line)
		if !ok {
			return
		}
		enc := e.encode()
		again, ok := parseEntry(enc[:len(enc)-1])
		require.True(t, ok, "%q re-encoded as %q", line, enc)
		require.Equal(t, e, again)
		recs := fold(append(append([]byte(nil), line...), '\n'))
		if e.op == opRead {
			require.Contains(t, recs, e.path)
		}
	})
}

func TestFoldOrder(t *testing.T) {
	const p = "/w/a.go"
	at := time.Unix(100, 0)
	read := func(size int64, spans ...span) entry {
		return entry{op: opRead, path: p, rec: FileRec{Size: size, MtimeNs: 7, Ino: 3, Spans: spans, At: at}}
	}
	var log []byte
	add := func(es ...entry) {
		for _, e := range es {
			log = append(log, e.encode()...)
		}
	}
	add(read(10, span{1, 5}), read(10, span{6, 9}), entry{op: opGrant, path: p, tokens: 9})
	r := fold(log, p)[p]
	require.NotNil(t, r)
	assert.Equal(t, []span{{1, 9}}, r.Spans, "same identity: spans merge")
	require.NotNil(t, r.Grant)

	add(read(10, span{20, 0}))
	r = fold(log, p)[p]
	assert.NotNil(t, r.Grant, "a read of the same file keeps the grant")
	add(read(11, span{1, 2}))
	r = fold(log, p)[p]
	assert.Nil(t, r.Grant, "another identity starts afresh")
	assert.Equal(t, []span{{1, 2}}, r.Spans)

	add(entry{op: opReset})
	assert.Empty(t, fold(log, p))
	add(read(11, span{1, 2}), entry{op: opForget, path: p})
	assert.Empty(t, fold(log))
	assert.Empty(t, fold(log, "/w/other.go"))
}

// TestReplacedFileSameSizeAndMtime: a file replaced by another of the same
// size with its mtime set back (a rename over it, `cp -p`) is a new inode,
// so its re-read passes.
func TestReplacedFileSameSizeAndMtime(t *testing.T) {
	e := newEnv(t)
	p := e.file("a.go", 100)
	st, err := os.Stat(p)
	require.NoError(t, err)
	e.read(p, 0, 0)

	data := mustRead(t, p)
	data[0] = 'L'
	tmp := filepath.Join(e.work, "a.go.new")
	require.NoError(t, os.WriteFile(tmp, data, 0o644))
	require.NoError(t, os.Chtimes(tmp, st.ModTime(), st.ModTime()))
	require.NoError(t, os.Rename(tmp, p))
	st2, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, st.Size(), st2.Size())
	require.Equal(t, st.ModTime(), st2.ModTime())

	denied, _ := e.read(p, 0, 0)
	assert.False(t, denied, "new content under the same size and mtime")
	denied, _ = e.read(p, 0, 0)
	assert.True(t, denied)
}

// TestCompaction: a log grown past compactAt is rewritten to at most
// compactTo bytes, one line per record; the records it keeps still deny.
func TestCompaction(t *testing.T) {
	e := newEnv(t)
	first := e.file("first.go", 100)
	last := e.file("last.go", 100)
	e.read(first, 0, 0)
	dir := Dir(e.s.Dirs, e.sess, "")
	base := time.Unix(1765100000, 0)
	e.s.Now = func() time.Time { base = base.Add(time.Second); return base }
	for i := 0; ; i++ {
		ti := map[string]any{"file_path": last, "offset": 1 + i, "limit": 1}
		require.NoError(t, e.s.Post(e.input("PostToolUse", "Read", ti, nil)))
		fi, err := os.Stat(logPath(dir))
		require.NoError(t, err)
		if fi.Size() < int64(i)*20 {
			break // compacted
		}
		require.Less(t, i, compactAt/20, "never compacted")
	}
	fi, err := os.Stat(logPath(dir))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(compactTo))
	denied, _ := e.read(last, 1, 50)
	assert.True(t, denied, "the newest record survives")
}
