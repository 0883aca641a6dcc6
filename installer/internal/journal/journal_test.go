package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackupOnceAndRestore(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	p := filepath.Join(work, "settings.json")
	orig := []byte("{ \"odd\" :1 }\n")
	require.NoError(t, os.WriteFile(p, orig, 0o640))

	j := &Journal{}
	f, err := j.Backup(dir, p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte("changed"), 0o640))
	require.NoError(t, f.Note("changed it"))
	assert.True(t, f.Unchanged())

	again, err := j.Backup(dir, p)
	require.NoError(t, err)
	assert.Same(t, f, again, "a journaled file is not backed up twice")
	require.NoError(t, j.Save(dir))

	loaded, err := Load(dir)
	require.NoError(t, err)
	lf := loaded.Find(p)
	require.NotNil(t, lf)
	assert.Equal(t, []string{"changed it"}, lf.Changes)
	require.NoError(t, os.WriteFile(p, []byte("user edit"), 0o640))
	assert.False(t, lf.Unchanged())
	require.NoError(t, lf.Restore(dir))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, orig, got)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the original mode comes back")
}

func TestRestoreAbsentRemoves(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	j := &Journal{}
	p := filepath.Join(work, "new", "config.toml")
	require.NoError(t, j.MkdirAll(filepath.Dir(p), noop))
	f, err := j.Backup(dir, p)
	require.NoError(t, err)
	assert.False(t, f.Existed)
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	require.NoError(t, f.Restore(dir))
	assert.NoFileExists(t, p)
	assert.Empty(t, j.RemoveDirs())
	assert.NoDirExists(t, filepath.Dir(p))
	assert.DirExists(t, work, "only directories install created go")
}

func TestDamagedBackupIsRefused(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	p := filepath.Join(work, "f")
	require.NoError(t, os.WriteFile(p, []byte("original"), 0o600))
	j := &Journal{}
	f, err := j.Backup(dir, p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "backups", f.Backup), []byte("tampered"), 0o600))
	require.NoError(t, os.WriteFile(p, []byte("now"), 0o600))
	require.ErrorContains(t, f.Restore(dir), "damaged")
	got, _ := os.ReadFile(p)
	assert.Equal(t, "now", string(got), "nothing is written from a bad backup")
}

func TestRemoveDirsKeepsNonEmpty(t *testing.T) {
	work := t.TempDir()
	j := &Journal{}
	d := filepath.Join(work, "a", "b")
	require.NoError(t, j.MkdirAll(d, noop))
	require.NoError(t, os.WriteFile(filepath.Join(work, "a", "user-file"), nil, 0o600))
	kept := j.RemoveDirs()
	assert.Equal(t, []string{filepath.Join(work, "a")}, kept)
	assert.NoDirExists(t, d)
}

func noop() error { return nil }

func TestMkdirAllRecordsFirst(t *testing.T) {
	work := t.TempDir()
	d := filepath.Join(work, "a", "b")
	j := &Journal{}
	err := j.MkdirAll(d, func() error {
		assert.Equal(t, []string{filepath.Join(work, "a"), d}, j.Dirs, "recorded before the record step")
		assert.NoDirExists(t, filepath.Join(work, "a"), "nothing created before the record step")
		return errors.New("disk full")
	})
	require.ErrorContains(t, err, "disk full")
	assert.NoDirExists(t, filepath.Join(work, "a"), "a failed record creates nothing")

	calls := 0
	require.NoError(t, j.MkdirAll(d, func() error { calls++; return nil }))
	assert.DirExists(t, d)
	require.NoError(t, j.MkdirAll(d, func() error { calls++; return nil }))
	assert.Equal(t, 1, calls, "nothing to create, nothing to record")
}

func TestWroteRecordsWithoutReading(t *testing.T) {
	f := &File{Path: filepath.Join(t.TempDir(), "absent")}
	f.Wrote([]byte("x"), "set x")
	f.Wrote([]byte("x"), "set x")
	assert.Equal(t, Hash([]byte("x")), f.Installed)
	assert.Equal(t, []string{"set x"}, f.Changes)
}
