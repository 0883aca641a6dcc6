package visibility

import (
	"errors"
	"io/fs"
	"os"
	"strings"
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

// Distinct (session, agent) pairs never share a key, and a session's
// prefix matches its own contexts only.
func TestContextKeyInjective(t *testing.T) {
	// ("a", "") and ("a", MainAgent) are one context by design (see
	// TestExportRoundTrip); every other pair here is distinct.
	pairs := [][2]string{
		{"a__b", "c"}, {"a", "b__c"}, {"a@b", "c"}, {"a", "b@c"}, {"a_b", "c"}, {"a", "_b_c"},
		{"a", ""}, {"", "a"}, {"a.b", "c"}, {"a", "b.c"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := ContextKey(p[0], p[1])
		if o, dup := seen[k]; dup {
			t.Errorf("%q and %q share the key %q", o, p, k)
		}
		seen[k] = p
		assert.True(t, strings.HasPrefix(k, SessionPrefix(p[0])))
		for _, q := range pairs {
			if q[0] != p[0] {
				assert.False(t, strings.HasPrefix(k, SessionPrefix(q[0])), "%q's key %q matches session %q", p, k, q[0])
			}
		}
	}
}

func TestPrune(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	d := xdg.Resolve()
	now := time.Now()
	require.NoError(t, Write(d, &Export{Session: "old", Files: map[string]File{}}))
	require.NoError(t, Write(d, &Export{Session: "new", Files: map[string]File{}}))
	long := now.Add(-8 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(Path(d, "old", ""), long, long))
	assert.Equal(t, 1, Prune(d, 7*24*time.Hour, now))
	_, err := Read(d, "old", "")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	_, err = Read(d, "new", "")
	assert.NoError(t, err)
	assert.Zero(t, Prune(xdg.Dirs{State: t.TempDir()}, time.Hour, now), "no exports yet")
}

func TestCustomHeaders(t *testing.T) {
	h := CustomHeaders("X-Synaxi-Token: abc: def\n\nbroken line\n X-A :1 \r\nX-A: 2")
	assert.Equal(t, []Header{{"X-Synaxi-Token", "abc: def"}, {"X-A", "1"}, {"X-A", "2"}}, h)
	assert.True(t, HasHeader(h, "x-synaxi-token"))
	assert.False(t, HasHeader(h, "X-B"))
	assert.False(t, HasHeader(CustomHeaders("X-Synaxi-Token:"), "X-Synaxi-Token"), "an empty value is no token")
}
