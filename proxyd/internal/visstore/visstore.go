// Package visstore keeps the no-reread hook's visibility exports in Redis,
// shared by every replica of a team's synaxi-proxyd, so a hook's call that
// reaches any replica gets the export of the context's latest projected
// request, whichever replica served it.
//
// Invariants:
//   - One key per conversation context, named by visibility.ContextKey
//     under Prefix; its value is the export's JSON, replaced whole, and
//     expires after TTL without a write (a live context's export is
//     rewritten on every projected request).
//   - A write never replaces a newer export of the same context (by its
//     Updated time), whatever order two replicas' writes arrive in.
//   - Every call is bounded by the caller's context; an error never
//     panics, and a missing export reads as fs.ErrNotExist, as a missing
//     file does in package visibility.
package visstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/synaxi/synaxi/internal/visibility"
)

// Prefix starts every key the store writes.
const Prefix = "synaxi:visibility:"

// TTL is how long an export lives without being rewritten; the local
// exports are pruned after the same 7 days.
const TTL = 7 * 24 * time.Hour

// Store is a Redis-backed export store. Create it with Open.
type Store struct {
	c *redis.Client
}

// Open connects to the Redis server at url (redis://[user:password@]host:port/db,
// or rediss:// for TLS) and checks it answers within ctx.
func Open(ctx context.Context, url string) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("visibility store %q: %w (want redis://host:6379/0)", redact(url), err)
	}
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("visibility store %s: %w", opt.Addr, err)
	}
	return &Store{c: c}, nil
}

// Close disconnects.
func (s *Store) Close() error { return s.c.Close() }

func key(session, agent string) string { return Prefix + visibility.ContextKey(session, agent) }

// writeNewer sets KEYS[1] to ARGV[1] (an export) with expiry ARGV[3]
// seconds unless the stored export's updated time (ARGV[2], Unix nanos,
// kept in the hash's "updated" field) is later.
var writeNewer = redis.NewScript(`
local have = redis.call("HGET", KEYS[1], "updated")
if have and tonumber(have) > tonumber(ARGV[2]) then
  return 0
end
redis.call("HSET", KEYS[1], "export", ARGV[1], "updated", ARGV[2])
redis.call("EXPIRE", KEYS[1], ARGV[3])
return 1
`)

// Write stores e as its context's export unless a newer one is stored.
func (s *Store) Write(ctx context.Context, e *visibility.Export) error {
	e.V = visibility.Version
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode visibility export: %w", err)
	}
	err = writeNewer.Run(ctx, s.c, []string{key(e.Session, e.Agent)}, b, e.Updated.UnixNano(), int64(TTL/time.Second)).Err()
	if err != nil {
		return fmt.Errorf("write visibility export to the store: %w", err)
	}
	return nil
}

// Read loads a context's export; errors.Is(err, fs.ErrNotExist) when the
// store has none.
func (s *Store) Read(ctx context.Context, session, agent string) (*visibility.Export, error) {
	b, err := s.c.HGet(ctx, key(session, agent), "export").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("visibility export of %s: %w", visibility.ContextKey(session, agent), fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read visibility export from the store: %w", err)
	}
	var e visibility.Export
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode visibility export of %s: %w", visibility.ContextKey(session, agent), err)
	}
	return &e, nil
}

// redact hides a password in a Redis URL for an error message.
func redact(url string) string {
	opt, err := redis.ParseURL(url)
	if err != nil || opt.Password == "" {
		if err != nil {
			return "(unparsable URL)"
		}
		return url
	}
	return "redis://…@" + opt.Addr
}
