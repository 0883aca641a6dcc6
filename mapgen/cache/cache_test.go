package cache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

func TestDir(t *testing.T) {
	env := map[string]string{"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	d, err := Dir(get)
	require.NoError(t, err)
	assert.Equal(t, "/x/cache/synaxi/mapgen", d)

	env["XDG_CACHE_HOME"] = "relative/ignored"
	d, err = Dir(get)
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.cache/synaxi/mapgen", d)

	delete(env, "HOME")
	_, err = Dir(get)
	require.Error(t, err)
}

func TestRoundTripAndDamage(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	key := Key("go", []byte("package p\n"))
	assert.NotEqual(t, key, Key("python", []byte("package p\n")))
	assert.NotEqual(t, key, Key("go", []byte("package q\n")))

	_, ok := c.Get(key)
	assert.False(t, ok)
	want := symbols.File{Lang: "go", Package: "p", Lines: 1, Refs: map[string]int{"x": 2}}
	require.NoError(t, c.Put(key, want))
	got, ok := c.Get(key)
	require.True(t, ok)
	assert.Equal(t, want, got)

	p := c.path(key)
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(filepath.Dir(p))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	require.NoError(t, os.WriteFile(p, []byte("{torn"), 0o600))
	_, ok = c.Get(key)
	assert.False(t, ok, "a damaged entry is a miss")

	var none Cache
	require.NoError(t, none.Put(key, want))
	_, ok = none.Get(key)
	assert.False(t, ok)
}
