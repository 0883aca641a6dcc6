package trim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// DefaultTTL is how long a staged block waits for /clear.
const DefaultTTL = time.Hour

// Stage is a block waiting for the next /clear in its project: the file
// $XDG_STATE_HOME/synaxi/trim/<project>.json.
type Stage struct {
	Project    string    `json:"project"`    // the session's cwd
	Session    string    `json:"session_id"` // the session it was cut from
	Transcript string    `json:"transcript"`
	Created    time.Time `json:"created"`
	Expires    time.Time `json:"expires"`
	Block      string    `json:"block"`
	Tokens     int       `json:"tokens"` // estimated (internal/tokens)
}

// StagePath is the stage file of a project.
func StagePath(d xdg.Dirs, project string) string {
	return d.StatePath("trim", statefile.SafeName(filepath.Clean(project))+".json")
}

// Save stages st, replacing what its project had staged.
func Save(d xdg.Dirs, st *Stage) error {
	if st.Project == "" {
		return errors.New("stage a trim: no project directory")
	}
	return statefile.WriteJSON(StagePath(d, st.Project), st)
}

// Take returns the block staged for project and removes it, so it is
// given once; an expired stage is removed and nil returned. Nothing staged:
// nil, nil.
func Take(d xdg.Dirs, project string, now time.Time) (*Stage, error) {
	if project == "" {
		return nil, nil
	}
	path := StagePath(d, project)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the common case: no lock file made
	}
	var st *Stage
	err := statefile.WithLock(path, func() error {
		var s Stage
		err := statefile.ReadJSON(path, &s)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("remove staged trim: %w", rerr)
		}
		if err != nil || !now.Before(s.Expires) || s.Block == "" {
			return nil // unreadable or expired: removed, not given
		}
		st = &s
		return nil
	})
	return st, err
}

// Cancel removes what project has staged; it reports whether there was a
// stage.
func Cancel(d xdg.Dirs, project string) (bool, error) {
	path := StagePath(d, project)
	var had bool
	err := statefile.WithLock(path, func() error {
		err := os.Remove(path)
		had = err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove staged trim: %w", err)
		}
		return nil
	})
	return had, err
}

// Prune removes the stage files (and their lock files) of every project
// untouched for longer than age: stages nobody cleared for.
func Prune(d xdg.Dirs, age time.Duration, now time.Time) int {
	return statefile.PruneStale(d.StatePath("trim"), age, now, func(fs.DirEntry) bool { return true })
}
