// Package recall keeps the tool output the projection folded out of a
// conversation, so the model can get it back in one call (the synaxi MCP
// server's recall tool) instead of re-running a command.
//
// Invariants:
//   - An item is named by its reference, a hash of its bytes (Ref), so the
//     projection's notes are a pure function of the request and any
//     replica names the same item the same way; an item is written once.
//   - Items live under $XDG_STATE_HOME/synaxi/recall, files 0600 in a 0700
//     directory, written atomically, and hold only tool output the client
//     itself sent (what a transcript keeps): never a header or a credential.
//   - The store is bounded: Put removes items older than MaxAge and, past
//     MaxBytes in all, the oldest first.
//   - It is read only on this machine: the MCP server reads the files; no
//     network path serves them.
package recall

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Bounds of the store.
const (
	MaxBytes = 64 << 20
	MaxAge   = 7 * 24 * time.Hour
)

// ErrNotFound is Get's answer for a reference the store does not hold (it
// expired, was pruned, or was folded by a proxy on another machine).
var ErrNotFound = errors.New("no such recall item: it expired or was folded on another machine; repeat the call instead")

var refRE = regexp.MustCompile(`^r[0-9a-f]{16}$`)

// Ref is the reference of text: "r" and 16 hex digits of its SHA-256.
func Ref(text string) string {
	h := sha256.Sum256([]byte(text))
	return "r" + hex.EncodeToString(h[:8])
}

// Dir is the store's directory.
func Dir(d xdg.Dirs) string { return d.StatePath("recall") }

// Put stores text under its reference unless it is already there, then
// prunes the store to its bounds.
func Put(d xdg.Dirs, text []byte, now time.Time) error {
	path := filepath.Join(Dir(d), Ref(string(text)))
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := statefile.WriteBytes(path, text); err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	return prune(Dir(d), now)
}

// Get returns the item stored under ref.
func Get(d xdg.Dirs, ref string) ([]byte, error) {
	if !refRE.MatchString(ref) {
		return nil, fmt.Errorf("recall: %q is not a reference (r and 16 hex digits, as a fold note names it)", ref)
	}
	b, err := os.ReadFile(filepath.Join(Dir(d), ref))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// prune removes items older than MaxAge and, while the rest exceeds
// MaxBytes, the oldest.
func prune(dir string, now time.Time) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("recall: prune: %w", err)
	}
	type item struct {
		path string
		size int64
		mod  time.Time
	}
	var items []item
	var total int64
	for _, e := range ents {
		if !refRE.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if now.Sub(info.ModTime()) > MaxAge {
			_ = os.Remove(p)
			continue
		}
		items = append(items, item{p, info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(items, func(i, j int) bool { return items[i].mod.Before(items[j].mod) })
	for _, it := range items {
		if total <= MaxBytes {
			break
		}
		_ = os.Remove(it.path)
		total -= it.size
	}
	return nil
}
