package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
)

// HistoryKeep is how many versions the history keeps; older ones are
// deleted after a save.
const HistoryKeep = 200

// ErrUnchanged, returned by an Update callback, ends the update without
// writing a new version. Mutating methods return it when there was nothing
// to change.
var ErrUnchanged = errors.New("profile: unchanged")

// ErrNotFound reports an entry id or version that does not exist.
var ErrNotFound = errors.New("profile: not found")

// ErrDamaged reports a profile file that exists but does not decode.
// Rollback and Reset repair a damaged profile.json; nothing else
// overwrites it.
var ErrDamaged = errors.New("profile: damaged")

// Store is the versioned profile store in one directory.
type Store struct {
	dir string
	now func() time.Time
}

// Open returns the store rooted at dir (created on first write), by
// default $XDG_DATA_HOME/synaxi/profile.
func Open(dir string) *Store { return &Store{dir: dir, now: time.Now} }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Path is the current version's file.
func (s *Store) Path() string { return filepath.Join(s.dir, "profile.json") }

func (s *Store) historyDir() string { return filepath.Join(s.dir, "history") }

func (s *Store) versionPath(v int) string {
	return filepath.Join(s.historyDir(), fmt.Sprintf("v%06d.json", v))
}

// Load returns the current profile. A store never written gives an empty
// profile at version 0. Load takes no lock.
func (s *Store) Load() (*Profile, error) {
	p, err := readProfile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return &Profile{}, nil
	}
	return p, err
}

// LoadVersion returns version v from the history.
func (s *Store) LoadVersion(v int) (*Profile, error) {
	p, err := readProfile(s.versionPath(v))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("profile version %d: %w (see `synaxi profile history`)", v, ErrNotFound)
	}
	return p, err
}

func readProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decode profile %s: %w: %w", path, ErrDamaged, err)
	}
	p.migrate()
	return &p, nil
}

// Update runs fn on a copy of the current profile under the store's lock
// and saves the result as a new version labelled reason. It returns the new
// version; when fn returns ErrUnchanged nothing is written and Update returns
// 0 and ErrUnchanged. Any other error from fn is returned and nothing is
// written. A result that fails Validate is not written either.
func (s *Store) Update(reason string, fn func(*Profile) error) (int, error) {
	return s.update(func() string { return reason }, fn)
}

// update is Update with a reason computed after fn ran.
func (s *Store) update(reason func() string, fn func(*Profile) error) (int, error) {
	var version int
	err := statefile.WithLock(s.Path(), func() error {
		p, err := s.Load()
		if err != nil {
			// An unreadable current file is not overwritten: that would
			// lose the profile. Rollback to a history version repairs it.
			if errors.Is(err, ErrDamaged) {
				return fmt.Errorf("%w; `synaxi profile rollback` restores the last good version", err)
			}
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
		last, err := s.lastVersion()
		if err != nil {
			return err
		}
		version, err = s.save(p, last, reason())
		return err
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// annotate changes bookkeeping in the current version without making a
// new one: under the lock, fn edits the current profile and, if it says
// it changed something, profile.json and the history file of its version
// are rewritten (each by atomic rename). A store never written, or a
// damaged profile.json, is left alone.
func (s *Store) annotate(fn func(*Profile) bool) error {
	return statefile.WithLock(s.Path(), func() error {
		p, err := readProfile(s.Path())
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(p) {
			return nil
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("refuse to save an invalid profile: %w", err)
		}
		data, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return fmt.Errorf("encode profile: %w", err)
		}
		if err := statefile.WriteBytes(s.versionPath(p.Version), data); err != nil {
			return err
		}
		return statefile.WriteBytes(s.Path(), data)
	})
}

// save writes p as the version after last, labelled reason: the history
// file first, then profile.json, each by atomic rename. The caller holds
// the lock.
func (s *Store) save(p *Profile, last int, reason string) (int, error) {
	p.migrate() // an entry added without a state is a candidate
	if err := p.Validate(); err != nil {
		return 0, fmt.Errorf("refuse to save an invalid profile: %w", err)
	}
	p.Version = max(p.Version, last) + 1
	p.Saved = s.now().UTC()
	p.Reason = reason
	if p.Entries == nil {
		p.Entries = []Entry{}
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("encode profile: %w", err)
	}
	// History first: a crash after it leaves an orphan the next save
	// overwrites; a crash before leaves the old version current.
	if err := statefile.WriteBytes(s.versionPath(p.Version), data); err != nil {
		return 0, err
	}
	if err := statefile.WriteBytes(s.Path(), data); err != nil {
		return 0, err
	}
	s.pruneHistory()
	return p.Version, nil
}

// lastVersion is the current file's version (0 if none). History may hold
// a higher orphan from a crashed save; it is overwritten.
func (s *Store) lastVersion() (int, error) {
	p, err := readProfile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return p.Version, nil
}

// VersionInfo describes one saved version.
type VersionInfo struct {
	Version int       `json:"version"`
	Saved   time.Time `json:"saved"`
	Reason  string    `json:"reason"`
	Entries int       `json:"entries"`
	Current bool      `json:"current"`
}

// Versions lists the saved versions, oldest first.
func (s *Store) Versions() ([]VersionInfo, error) {
	nums, err := s.historyVersions()
	if err != nil {
		return nil, err
	}
	cur, err := s.lastVersion()
	damaged := errors.Is(err, ErrDamaged)
	switch {
	case damaged && len(nums) > 0:
		cur = nums[len(nums)-1] // none is current: list them all
	case err != nil && !damaged:
		return nil, err
	}
	out := make([]VersionInfo, 0, len(nums))
	for _, v := range nums {
		if v > cur {
			continue // orphan of a crashed save
		}
		p, err := s.LoadVersion(v)
		if err != nil {
			out = append(out, VersionInfo{Version: v, Reason: "unreadable: " + err.Error()})
			continue
		}
		out = append(out, VersionInfo{Version: v, Saved: p.Saved, Reason: p.Reason, Entries: len(p.Entries), Current: v == cur && !damaged})
	}
	return out, nil
}

// LastGood is the newest history version that reads, or 0 when none does.
func (s *Store) LastGood() (int, error) {
	nums, err := s.historyVersions()
	if err != nil {
		return 0, err
	}
	for i := len(nums) - 1; i >= 0; i-- {
		if _, err := s.LoadVersion(nums[i]); err == nil {
			return nums[i], nil
		}
	}
	return 0, nil
}

// repair replaces a damaged profile.json, under the lock: the damaged file
// is set aside (profile.json.damaged-<time>, never deleted) and the
// version to's content (an empty profile when to is 0) is saved as the
// version after the newest in the history. It returns ErrUnchanged when
// profile.json is not damaged.
func (s *Store) repair(to int, reason string) (int, error) {
	var version int
	err := statefile.WithLock(s.Path(), func() error {
		if _, err := readProfile(s.Path()); !errors.Is(err, ErrDamaged) {
			return ErrUnchanged
		}
		p := &Profile{}
		if to > 0 {
			old, err := s.LoadVersion(to)
			if err != nil {
				return err
			}
			p = old
		}
		nums, err := s.historyVersions()
		if err != nil {
			return err
		}
		last := 0
		if len(nums) > 0 {
			last = nums[len(nums)-1]
		}
		aside := fmt.Sprintf("%s.damaged-%d", s.Path(), s.now().UnixNano())
		if err := os.Rename(s.Path(), aside); err != nil {
			return fmt.Errorf("set the damaged profile aside: %w", err)
		}
		version, err = s.save(p, last, fmt.Sprintf("%s (profile.json was damaged; set aside as %s)", reason, filepath.Base(aside)))
		return err
	})
	return version, err
}

func (s *Store) historyVersions() ([]int, error) {
	ents, err := os.ReadDir(s.historyDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list profile history: %w", err)
	}
	var nums []int
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "v") || !strings.HasSuffix(name, ".json") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "v"), ".json"))
		if err == nil && n > 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

func (s *Store) pruneHistory() {
	nums, err := s.historyVersions()
	if err != nil || len(nums) <= HistoryKeep {
		return
	}
	for _, v := range nums[:len(nums)-HistoryKeep] {
		_ = os.Remove(s.versionPath(v)) // best effort: an old snapshot left behind is harmless
	}
}

// Rollback makes the content of version v current again, as a new version
// (so the rollback itself can be undone). v == 0 means the version before
// the current one.
//
// When profile.json is damaged, Rollback repairs it: v == 0 means the
// newest history version that reads (the last good one), and the damaged
// file is kept beside it.
func (s *Store) Rollback(v int) (int, error) {
	if _, err := s.Load(); errors.Is(err, ErrDamaged) {
		to := v
		if to == 0 {
			good, err := s.LastGood()
			if err != nil {
				return 0, err
			}
			if good == 0 {
				return 0, fmt.Errorf("profile.json is damaged and no history version reads: `synaxi profile reset` starts afresh (the damaged file is kept): %w", ErrNotFound)
			}
			to = good
		}
		return s.repair(to, fmt.Sprintf("rollback to v%d", to))
	}
	var target int
	return s.update(func() string { return fmt.Sprintf("rollback to v%d", target) }, func(p *Profile) error {
		target = v
		if target == 0 {
			target = p.Version - 1
		}
		if target < 1 || target > p.Version {
			return fmt.Errorf("no version %d to roll back to (current is v%d; see `synaxi profile history`): %w", target, p.Version, ErrNotFound)
		}
		if target == p.Version {
			return ErrUnchanged
		}
		old, err := s.LoadVersion(target)
		if err != nil {
			return err
		}
		cur := p.Version
		*p = *old
		p.Version = cur
		return nil
	})
}

// Forget deletes the entry with id and leaves a tombstone, so the same
// observation is not learned again.
func (s *Store) Forget(id string) (int, error) { return s.forget("forget", id) }

// forget deletes the entry with id and leaves a tombstone saying why, as
// the version "verb id".
func (s *Store) forget(verb, id string) (int, error) {
	return s.Update(verb+" "+id, func(p *Profile) error {
		i := slices.IndexFunc(p.Entries, func(e Entry) bool { return e.ID == id })
		if i < 0 {
			return fmt.Errorf("entry %q: %w (see `synaxi profile show`)", id, ErrNotFound)
		}
		e := p.Entries[i]
		p.Forgotten = append(p.Forgotten, Tombstone{Dimension: e.Dimension, Text: e.Text, Scope: e.Scope, Project: e.Project, At: s.now().UTC(), Why: verb})
		p.Entries = slices.Delete(p.Entries, i, i+1)
		return nil
	})
}

// Edit replaces the text of the entry with id by the user's own wording;
// its evidence, weight and sessions stay.
func (s *Store) Edit(id, text string) (int, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, fmt.Errorf("entry %q: the new text is empty (use `synaxi profile forget` to delete it)", id)
	}
	return s.updateEntry("edit", id, func(e *Entry) bool {
		changed := e.Text != text
		e.Text = text
		return changed
	})
}

// Exclude marks the entry with id as not to be published.
func (s *Store) Exclude(id string) (int, error) { return s.setExcluded("exclude", id, true) }

// Include clears Exclude.
func (s *Store) Include(id string) (int, error) { return s.setExcluded("include", id, false) }

func (s *Store) setExcluded(verb, id string, excluded bool) (int, error) {
	return s.updateEntry(verb, id, func(e *Entry) bool {
		changed := e.Excluded != excluded
		e.Excluded = excluded
		return changed
	})
}

// updateEntry applies change to the entry with id as a new version labelled
// "verb id"; change reports whether it changed anything.
func (s *Store) updateEntry(verb, id string, change func(*Entry) bool) (int, error) {
	return s.Update(verb+" "+id, func(p *Profile) error {
		e := p.Find(id)
		if e == nil {
			return fmt.Errorf("entry %q: %w (see `synaxi profile show`)", id, ErrNotFound)
		}
		if !change(e) {
			return ErrUnchanged
		}
		return nil
	})
}

// Reset empties the profile (entries, session ledger and tombstones) as a
// new version; the history keeps what was there.
//
// A damaged profile.json is set aside and replaced by an empty profile.
func (s *Store) Reset() (int, error) {
	if _, err := s.Load(); errors.Is(err, ErrDamaged) {
		return s.repair(0, "reset")
	}
	return s.Update("reset", func(p *Profile) error {
		if len(p.Entries) == 0 && len(p.Ingested) == 0 && len(p.Forgotten) == 0 {
			return ErrUnchanged
		}
		*p = Profile{Version: p.Version}
		return nil
	})
}
