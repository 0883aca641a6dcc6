// Package cache stores parse results on disk keyed by a hash of the file's
// content (plus the parser version and language), so a warm map re-parses
// nothing that did not change. Entries live under
// $XDG_CACHE_HOME/synaxi/mapgen/ (default ~/.cache/synaxi/mapgen/), one JSON
// file each, written atomically (temporary file and rename), files 0600 and
// directories 0700. A damaged entry is a miss, never an error.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// Dir resolves the default cache directory from the environment, following
// the XDG base directory rules: $XDG_CACHE_HOME if it is an absolute path,
// else $HOME/.cache, then synaxi/mapgen below it.
func Dir(getenv func(string) string) (string, error) {
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("resolve cache dir: neither XDG_CACHE_HOME nor HOME is set")
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "synaxi", "mapgen"), nil
}

// Cache is a directory of parse results. The zero value (empty Dir) caches
// nothing.
type Cache struct {
	Dir string
}

// Key is the cache key of a file's content parsed as lang.
func Key(lang string, content []byte) string {
	h := sha256.New()
	h.Write([]byte("synaxi-mapgen\x00" + strconv.Itoa(symbols.Version) + "\x00" + lang + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) path(key string) string {
	return filepath.Join(c.Dir, key[:2], key+".json")
}

// Get returns the cached result for key, if there is a readable one.
func (c Cache) Get(key string) (symbols.File, bool) {
	if c.Dir == "" {
		return symbols.File{}, false
	}
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return symbols.File{}, false
	}
	var f symbols.File
	if err := json.Unmarshal(data, &f); err != nil {
		return symbols.File{}, false
	}
	return f, true
}

// Put stores f under key.
func (c Cache) Put(key string, f symbols.File) error {
	if c.Dir == "" {
		return nil
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode cache entry: %w", err)
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("create cache entry: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write cache entry: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write cache entry: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("store cache entry: %w", err)
	}
	return nil
}
