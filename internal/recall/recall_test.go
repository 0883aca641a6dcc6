package recall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
)

func TestPutGet(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	now := time.Now()
	text := []byte("ok   pkg  0.01s\nFAIL pkg/x\n")
	require.NoError(t, Put(d, text, now))
	require.NoError(t, Put(d, text, now), "written once")
	ref := Ref(string(text))
	assert.Regexp(t, `^r[0-9a-f]{16}$`, ref)
	got, err := Get(d, ref)
	require.NoError(t, err)
	assert.Equal(t, text, got)
	info, err := os.Stat(filepath.Join(Dir(d), ref))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dir, err := os.Stat(Dir(d))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	_, err = Get(d, Ref("never stored"))
	assert.ErrorIs(t, err, ErrNotFound)
	for _, bad := range []string{"../x", "r12", "R0123456789abcdef", ""} {
		_, err = Get(d, bad)
		assert.ErrorContains(t, err, "not a reference", bad)
	}
}

func TestPruneBounds(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	now := time.Now()
	old := []byte("an old result")
	require.NoError(t, Put(d, old, now))
	past := now.Add(-MaxAge - time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(Dir(d), Ref(string(old))), past, past))
	big := strings.Repeat("x", MaxBytes/2+1)
	require.NoError(t, Put(d, []byte(big+"1"), now.Add(time.Second)))
	_, err := Get(d, Ref(string(old)))
	assert.ErrorIs(t, err, ErrNotFound, "older than MaxAge: removed")
	first := filepath.Join(Dir(d), Ref(big+"1"))
	require.NoError(t, os.Chtimes(first, now, now))
	require.NoError(t, Put(d, []byte(big+"2"), now.Add(2*time.Second)))
	_, err = Get(d, Ref(big+"1"))
	assert.ErrorIs(t, err, ErrNotFound, "past MaxBytes: the oldest goes")
	_, err = Get(d, Ref(big+"2"))
	assert.NoError(t, err)
}
