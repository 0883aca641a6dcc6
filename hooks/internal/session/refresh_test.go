package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/xdg"
)

func TestRefreshStable(t *testing.T) {
	d := xdg.Dirs{Data: t.TempDir()}
	dst, src := d.DataPath("bin"), t.TempDir()
	require.NoError(t, os.MkdirAll(dst, 0o700))
	write := func(dir, name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755))
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		return string(b)
	}
	write(dst, "synaxi-statusline", "old statusline")
	write(dst, "synaxi-proxyd", "old proxyd")
	write(src, "synaxi-statusline", "new statusline")
	write(src, "synaxi-proxyd", "new proxyd")
	write(src, "synaxi-ingest", "not copied by install")

	ok, err := RefreshStable(d, src, "v0.2.0")
	require.NoError(t, err)
	assert.False(t, ok, "no stamp: install never stamped these copies")
	assert.Equal(t, "old proxyd", read("synaxi-proxyd"))

	for _, stamp := range []string{"v0.2.0", "v0.3.0", "dev"} {
		write(dst, StampFile, stamp+"\n")
		ok, err = RefreshStable(d, src, "v0.2.0")
		require.NoError(t, err)
		assert.False(t, ok, "copies of %s are not older than v0.2.0", stamp)
	}
	assert.Equal(t, "old statusline", read("synaxi-statusline"))

	write(dst, StampFile, "v0.1.0\n")
	ok, err = RefreshStable(d, src, "v0.2.0")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "new statusline", read("synaxi-statusline"))
	assert.Equal(t, "new proxyd", read("synaxi-proxyd"))
	assert.Equal(t, "v0.2.0\n", read(StampFile))
	fi, err := os.Stat(filepath.Join(dst, "synaxi-proxyd"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm()&0o755, "still executable")
	_, err = os.Stat(filepath.Join(dst, "synaxi-ingest"))
	assert.True(t, os.IsNotExist(err), "only what install copied is replaced")
	ents, err := os.ReadDir(dst)
	require.NoError(t, err)
	assert.Len(t, ents, 3, "no temporary file left")
}
