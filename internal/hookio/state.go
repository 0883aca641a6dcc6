package hookio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/synaxi/synaxi/internal/statefile"
)

// UpdateQuick is statefile.Update for the hooks' hot path: a locked
// read-modify-write whose new version replaces the file atomically (a
// temporary file in the same directory, then rename), but without fsync.
//
// Readers never see a torn file and a process killed mid-write (kill -9,
// a hook timeout) leaves the previous version intact, exactly as with
// statefile.Update; only a power loss can lose the latest update. For the
// no-reread records that loss allows one re-read, while two fsyncs per tool
// call would cost several milliseconds on every Read and Bash call.
// Returning statefile.ErrSkip from fn leaves the file as it was.
func UpdateQuick[T any](path string, fn func(*T) error) error {
	return statefile.WithLock(path, func() error {
		var v T
		if data, err := os.ReadFile(path); err == nil {
			if json.Unmarshal(data, &v) != nil {
				var zero T
				v = zero // a corrupt document is replaced, never wedges updates
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read state %s: %w", path, err)
		}
		if err := fn(&v); err != nil {
			if errors.Is(err, statefile.ErrSkip) {
				return nil
			}
			return err
		}
		data, err := json.Marshal(&v)
		if err != nil {
			return fmt.Errorf("encode state %s: %w", path, err)
		}
		return replace(path, data)
	})
}

// WriteQuick atomically replaces path with the JSON encoding of v, without
// fsync and without taking the lock: call it inside statefile.WithLock when
// other writers may race (see UpdateQuick for what "quick" gives up).
func WriteQuick(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode state %s: %w", path, err)
	}
	return replace(path, data)
}

// replace writes data to a temporary file beside path and renames it over
// path.
func replace(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
