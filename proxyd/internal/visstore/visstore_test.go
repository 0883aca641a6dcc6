package visstore

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/visibility"
	"github.com/synaxi/synaxi/proxyd/internal/visstore/redistest"
)

func TestStore(t *testing.T) {
	url := redistest.Start(t)
	ctx := context.Background()
	a, err := Open(ctx, url)
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(ctx, url) // another replica
	require.NoError(t, err)
	defer b.Close()

	_, err = b.Read(ctx, "s/1", "w1")
	require.ErrorIs(t, err, fs.ErrNotExist)

	now := time.Now().UTC().Truncate(time.Millisecond)
	older := &visibility.Export{Session: "s/1", Agent: "w1", Updated: now,
		Files: map[string]visibility.File{"/r/a.go": {Visible: []visibility.Range{{Start: 1, End: 0}}}}}
	newer := &visibility.Export{Session: "s/1", Agent: "w1", Updated: now.Add(time.Second),
		Files: map[string]visibility.File{"/r/a.go": {Evicted: true}}}
	require.NoError(t, a.Write(ctx, older))
	got, err := b.Read(ctx, "s/1", "w1")
	require.NoError(t, err)
	assert.Equal(t, older.Files, got.Files, "what one replica writes, another reads")
	assert.True(t, got.Updated.Equal(now))

	require.NoError(t, b.Write(ctx, newer))
	require.NoError(t, a.Write(ctx, older)) // arrives late: must not win
	got, err = a.Read(ctx, "s/1", "w1")
	require.NoError(t, err)
	assert.Equal(t, newer.Files, got.Files, "a late write of an older export never replaces a newer one")

	_, err = a.Read(ctx, "s/1", "other")
	require.ErrorIs(t, err, fs.ErrNotExist, "contexts are apart")
	ttl, err := a.c.TTL(ctx, key("s/1", "w1")).Result()
	require.NoError(t, err)
	assert.InDelta(t, TTL.Seconds(), ttl.Seconds(), 60, "exports expire")
}

// Concurrent writes of one context from several replicas leave the newest.
func TestStoreConcurrentWrites(t *testing.T) {
	url := redistest.Start(t)
	ctx := context.Background()
	base := time.Now()
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, url)
			if !assert.NoError(t, err) {
				return
			}
			defer s.Close()
			for i := range 25 {
				n := r*25 + i
				assert.NoError(t, s.Write(ctx, &visibility.Export{Session: "s", Agent: "main", Updated: base.Add(time.Duration(n) * time.Millisecond),
					Files: map[string]visibility.File{fmt.Sprint(n): {}}}))
			}
		}()
	}
	wg.Wait()
	s, err := Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Read(ctx, "s", "")
	require.NoError(t, err)
	assert.Contains(t, got.Files, "99", "the newest export stays")
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := Open(ctx, "http://127.0.0.1:1")
	require.ErrorContains(t, err, "redis://")
	_, err = Open(ctx, "redis://:secretpw@127.0.0.1:1/0")
	require.Error(t, err, "nothing listens there")
	assert.NotContains(t, err.Error(), "secretpw", "the password is never in an error")
}
