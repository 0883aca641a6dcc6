package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Target states in the journal.
const (
	// Active: synaxi's section is in the file as synaxi last wrote it.
	Active = "active"
	// Declined: the user removed synaxi's markers (or the file synaxi
	// wrote); synaxi writes there again only once the markers are back.
	Declined = "declined"
	// Retracted: synaxi removed its section (uninstall, an empty profile,
	// the writer turned off).
	Retracted = "retracted"
)

// MaxLog bounds the journal's event log; the newest events are kept.
const MaxLog = 2000

// Target is one file synaxi has written a section into.
type Target struct {
	Path    string `json:"path"`
	Writer  string `json:"writer"`
	Project string `json:"project"`
	// Created: the file did not exist and synaxi created it (with Front
	// before the section); CreatedDirs are the directories it made for it,
	// deepest first.
	Created     bool     `json:"created,omitempty"`
	Front       string   `json:"front,omitempty"`
	CreatedDirs []string `json:"created_dirs,omitempty"`
	// Sep is what synaxi put before a section it appended to a file, so
	// removing the section restores the file byte for byte.
	Sep     string    `json:"sep,omitempty"`
	Hash    string    `json:"hash"` // sha256 of the section body synaxi last wrote
	Version int       `json:"profile_version"`
	State   string    `json:"state"`
	Updated time.Time `json:"updated"`
	// Conflict is the hash of a hand-edited section last reported.
	Conflict string `json:"conflict,omitempty"`
}

// Event is one line of the journal's log: every write, removal, refusal.
type Event struct {
	Time    time.Time `json:"time"`
	Path    string    `json:"path"`
	Action  string    `json:"action"` // create, update, append, remove, delete, decline, conflict, narrative, retract-narrative
	Version int       `json:"profile_version"`
	Hash    string    `json:"hash,omitempty"`
	Note    string    `json:"note,omitempty"`
}

// Journal is the publication journal.
type Journal struct {
	Targets map[string]*Target `json:"targets"`
	// Narratives maps a published narrative's key to its profile version.
	Narratives map[string]int `json:"narratives"`
	Log        []Event        `json:"log"`
}

// JournalPath is the journal's file.
func JournalPath(d xdg.Dirs) string { return d.DataPath("guidance", "journal.json") }

func (j *Journal) init() {
	if j.Targets == nil {
		j.Targets = map[string]*Target{}
	}
	if j.Narratives == nil {
		j.Narratives = map[string]int{}
	}
}

func (j *Journal) log(now time.Time, path, action string, version int, hash, note string) {
	j.Log = append(j.Log, Event{Time: now.UTC(), Path: path, Action: action, Version: version, Hash: hash, Note: note})
	if n := len(j.Log); n > MaxLog {
		j.Log = append([]Event(nil), j.Log[n-MaxLog:]...)
	}
}

// withJournal runs fn on the journal under its lock and saves it after,
// even when fn reports an error, so every write fn made stays recorded. A
// journal that does not decode is an error: overwriting it would forget
// what synaxi published.
func withJournal(d xdg.Dirs, fn func(*Journal) error) error {
	path := JournalPath(d)
	return statefile.WithLock(path, func() error {
		j := &Journal{}
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("read guidance journal: %w", err)
		default:
			if err := json.Unmarshal(data, j); err != nil {
				return fmt.Errorf("guidance journal %s does not decode (%v); fix or move it away (synaxi then forgets what it published there)", path, err)
			}
		}
		j.init()
		ferr := fn(j)
		out, err := json.MarshalIndent(j, "", "  ")
		if err != nil {
			return fmt.Errorf("encode guidance journal: %w", err)
		}
		if err := statefile.WriteBytes(path, out); err != nil {
			return err
		}
		return ferr
	})
}

func hashOf(body string) string {
	h := sha256.Sum256([]byte(body))
	return hex.EncodeToString(h[:])
}
