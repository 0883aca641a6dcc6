package convlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

func TestSummarize(t *testing.T) {
	s := Summarize(gate.Parse([]byte(`{"model":"m","stream":true,"system":[{"type":"text","text":"abc"},{"type":"text","text":"de"}],"tools":[{},{}],"messages":[{},{},{}]}`)))
	assert.Equal(t, Summary{Bytes: 133, Messages: 3, SystemLen: 5, Tools: 2, Stream: true, Model: "m", Valid: true}, s)
	assert.Equal(t, 5, Summarize(gate.Parse([]byte(`{"system":"12345"}`))).SystemLen)
	assert.Equal(t, Summary{Bytes: 2}, Summarize(gate.Parse([]byte("\xff{"))))
}

// FuzzSummarize: any body summarises without panicking, and an invalid one
// reports only its size.
func FuzzSummarize(f *testing.F) {
	f.Add([]byte(`{"model":"m","system":[{"text":"abc"}],"messages":[{}]}`))
	f.Add([]byte(`{"system":"x","messages":[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := Summarize(gate.Parse(body))
		assert.Equal(t, len(body), s.Bytes)
		if !s.Valid {
			assert.Equal(t, Summary{Bytes: len(body)}, s)
		}
	})
}

// TestRotateAndMode writes past two caps: the log stays under its cap, one
// older log is kept, every line is whole, and the files are 0600 in a 0700
// directory.
func TestRotateAndMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proxyd")
	path := filepath.Join(dir, "conversations.jsonl")
	l := New(path, 4096) // rounded up to 1 MiB
	t.Cleanup(func() { _ = l.Close() })
	var written int64
	for i := 0; written < 5<<19; i++ { // 2.5 MiB: two rotations
		e := &Entry{ID: "req", Status: 200 + i%100, Path: "/v1/messages"}
		line, _ := json.Marshal(e)
		written += int64(len(line)) + 1
		require.NoError(t, l.Write(e))
	}
	require.NoError(t, l.Close())

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	// lumberjack removes backups past MaxBackups in the background.
	var backups []string
	require.Eventually(t, func() bool {
		backups, _ = filepath.Glob(filepath.Join(dir, "conversations-*.jsonl"))
		return len(backups) == 1
	}, 10*time.Second, 10*time.Millisecond, "one older log kept: %v", backups)
	for _, p := range append(backups, path) {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.LessOrEqual(t, fi.Size(), int64(1<<20), p)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
		skipped, err := statefile.ScanJSONL(p, func([]byte) error { return nil })
		require.NoError(t, err)
		assert.Zero(t, skipped, "%s: every line whole", p)
	}
}
