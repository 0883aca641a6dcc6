package convlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestRotateAndMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	l := New(path, 600)
	for i := range 10 {
		require.NoError(t, l.Write(&Entry{ID: "req", Status: 200 + i, Path: "/v1/messages"}))
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(600))
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	old, err := os.Stat(path + ".1")
	require.NoError(t, err)
	assert.LessOrEqual(t, old.Size(), int64(600))
}
