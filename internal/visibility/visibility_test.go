package visibility

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
)

func TestExportRoundTrip(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	d := xdg.Resolve()

	_, err := Read(d, "s1", "")
	require.True(t, errors.Is(err, fs.ErrNotExist))

	e := &Export{Session: "s1", Agent: "", Updated: time.Unix(100, 0).UTC(), Files: map[string]File{
		"/repo/a.go": {Visible: []Range{{Start: 1, End: 0}}},
		"/repo/b.go": {Evicted: true},
	}}
	require.NoError(t, Write(d, e))
	got, err := Read(d, "s1", MainAgent)
	require.NoError(t, err)
	assert.Equal(t, Version, got.V)
	assert.Equal(t, e.Files, got.Files)

	// A subagent's context is separate from the main one.
	_, err = Read(d, "s1", "agent-7")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.NotEqual(t, ContextKey("s1", ""), ContextKey("s1", "agent-7"))
	assert.Equal(t, ContextKey("s1", ""), ContextKey("s1", MainAgent))
}
