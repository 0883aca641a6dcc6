package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/hint"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

// A damaged profile.json: doctor names the one command that restores it,
// and that command does.
func TestCheckProfileNamesTheRestore(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	f := &facts{d: xdg.For("linux", func(k string) string { return env[k] })}
	s := store.Open(store.Dir(f.d))
	c := checkProfile(context.Background(), f)
	assert.NoError(t, c.Err, "no profile yet is fine")

	_, err := s.Update("one", func(p *store.Profile) error {
		p.Pruned = []store.Pruned{{ID: "x", Text: "t", Why: "faded"}}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(), []byte(`{"version": 1, "entries": [`), 0o600))
	c = checkProfile(context.Background(), f)
	require.Error(t, c.Err)
	assert.Contains(t, c.Err.Error(), filepath.Base(s.Path()))
	assert.Equal(t, []string{"synaxi profile rollback (restores v1, the last good version; the damaged file is kept beside it)"}, hint.Hints(c.Err))

	_, err = s.Rollback(0)
	require.NoError(t, err)
	c = checkProfile(context.Background(), f)
	assert.NoError(t, c.Err)
	assert.Equal(t, "v2, 0 entries", c.Detail)
}
