// Package statefile reads and writes synaxi's shared state files safely when
// many processes touch them at once.
//
// Whole-file documents are replaced atomically (a temporary file in the same
// directory, fsync, rename), so a reader never sees a torn file and a process
// killed mid-write leaves the previous version intact. Read-modify-write
// cycles and appends to JSONL files hold an advisory lock on a sidecar
// "<name>.lock" file, never on the file being renamed, so no update is lost.
// Readers take no lock. Files are created 0600 and directories 0700.
package statefile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/synaxi/synaxi/internal/xdg"
)

// FileMode is the mode of every state file synaxi creates.
const FileMode = 0o600

// LockTimeout bounds how long a writer waits for another writer's lock.
// Critical sections are short (no network inside), so waiting this long means
// something is wrong; the caller gets ErrLockTimeout and can fail open.
var LockTimeout = 10 * time.Second

// ErrLockTimeout reports that the sidecar lock could not be taken in time.
var ErrLockTimeout = errors.New("statefile: lock timeout")

// LockPath is the sidecar lock file that guards path.
func LockPath(path string) string { return path + ".lock" }

// WithLock runs fn while holding the exclusive sidecar lock of path. The
// directory of path is created if needed.
func WithLock(path string, fn func() error) error {
	if err := xdg.Ensure(filepath.Dir(path)); err != nil {
		return err
	}
	lk := flock.New(LockPath(path), flock.SetPermissions(FileMode))
	if err := lock(lk, LockTimeout); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer lk.Unlock()
	return fn()
}

// lock takes lk within timeout. A free lock is taken without waiting; a
// held one is waited for with a blocking flock(2) in a goroutine, so the
// kernel hands the lock over the moment its holder releases it (polling
// would add up to a poll interval per handover, which under contention
// caps throughput at one update per interval). On timeout the goroutine
// keeps waiting and releases the lock as soon as it gets it.
func lock(lk *flock.Flock, timeout time.Duration) error {
	ok, err := lk.TryLock()
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- lk.Lock() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		go func() {
			if err := <-done; err == nil {
				lk.Unlock()
			}
		}()
		return ErrLockTimeout
	}
}

// Option changes how a write is made durable.
type Option int

// NoSync skips the fsync before the rename, for the hooks' hot path. The
// replace stays atomic: readers never see a torn file, and a process killed
// mid-write (kill -9, a hook timeout) leaves the previous version intact.
// Only a power loss or kernel crash can lose the latest update, which for
// the no-reread records and counters costs one allowed re-read or one
// uncounted denial, while two fsyncs per tool call would cost milliseconds
// on every Read and Bash call.
const NoSync Option = 1

func noSync(opts []Option) bool {
	for _, o := range opts {
		if o == NoSync {
			return true
		}
	}
	return false
}

// WriteBytes atomically replaces path with data. It does not lock; call it
// inside WithLock when other writers may race.
func WriteBytes(path string, data []byte, opts ...Option) error {
	if err := xdg.Ensure(filepath.Dir(path)); err != nil {
		return err
	}
	if noSync(opts) {
		return replace(path, data)
	}
	// The temporary file goes beside path: renameio would otherwise probe
	// os.TempDir() on every write (two extra files) and, when it shares a
	// file system with path, stage state there, where a killed writer
	// leaves it behind.
	if err := renameio.WriteFile(path, data, FileMode, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// replace writes data to a temporary file beside path, named as renameio
// names its own (so IsTemp and PruneTemps know it), and renames it over
// path, without fsync.
func replace(path string, data []byte) error {
	dir, base := filepath.Split(path)
	var f *os.File
	for attempt := 0; f == nil; attempt++ {
		tmp := filepath.Join(dir, "."+base+strconv.FormatInt(rand.Int64(), 10))
		var err error
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
		if err != nil && (!errors.Is(err, fs.ErrExist) || attempt == 100) {
			return fmt.Errorf("write %s: %w", path, err)
		}
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

// ReadJSON decodes the JSON document at path into v. A missing file leaves v
// untouched and returns an error for which errors.Is(err, fs.ErrNotExist)
// holds.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read state %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode state %s: %w", path, err)
	}
	return nil
}

// WriteJSON atomically replaces path with the JSON encoding of v, under the
// sidecar lock.
func WriteJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode state %s: %w", path, err)
	}
	return WithLock(path, func() error { return WriteBytes(path, data) })
}

// Update is a locked read-modify-write of the JSON document at path. The
// current document (or the zero value when the file is missing or does not
// decode) is passed to fn; when fn returns nil the result is written back
// atomically (without fsync with NoSync). Returning ErrSkip from fn leaves
// the file as it was.
func Update[T any](path string, fn func(*T) error, opts ...Option) error {
	return WithLock(path, func() error {
		var v T
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			// A file we cannot read is not replaced: that would lose it.
			return fmt.Errorf("read state %s: %w", path, err)
		case json.Unmarshal(data, &v) != nil:
			// A corrupt document (never written by us: writes are atomic) is
			// replaced rather than wedging every future update.
			var zero T
			v = zero
		}
		if err := fn(&v); err != nil {
			if errors.Is(err, ErrSkip) {
				return nil
			}
			return err
		}
		data, err = json.Marshal(&v)
		if err != nil {
			return fmt.Errorf("encode state %s: %w", path, err)
		}
		return WriteBytes(path, data, opts...)
	})
}

// ErrSkip, returned by an Update callback, ends the update without writing.
var ErrSkip = errors.New("statefile: skip write")

// AppendJSONL appends each value as one JSON line to path under the sidecar
// lock. All lines go out in a single write, so a concurrent reader sees each
// line whole or not at all.
func AppendJSONL(path string, values ...any) error {
	var buf bytes.Buffer
	for _, v := range values {
		line, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode line for %s: %w", path, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return AppendLines(path, buf.Bytes())
}

// AppendLines appends raw newline-terminated bytes to path under the lock.
func AppendLines(path string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	return WithLock(path, func() error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("append %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", path, err)
		}
		return nil
	})
}

// ScanJSONL calls fn with each complete line of the JSONL file at path that
// decodes as JSON, and returns how many lines it skipped as malformed or
// torn (a final line without its newline). A missing file is not an error.
// Lines may be of any length.
func ScanJSONL(path string, fn func(line []byte) error) (skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			line = bytes.TrimSpace(line)
			switch {
			case len(line) == 0:
			case !complete || !json.Valid(line):
				skipped++
			default:
				if err := fn(line); err != nil {
					return skipped, err
				}
			}
		}
		if rerr == io.EOF {
			return skipped, nil
		}
		if rerr != nil {
			return skipped, fmt.Errorf("read %s: %w", path, rerr)
		}
	}
}
