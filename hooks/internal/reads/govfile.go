package reads

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/statefile"
)

// The governor's file, governor.json, is written on every PostToolUse, so
// it is updated in place under flock(2) on the file itself: one open, where
// a sidecar lock and an atomic replace cost three files and a rename. A
// reader takes the shared lock, so it never sees a write half done. A
// writer killed mid-write leaves a document that does not decode, which
// counts as a fresh state: the loop counts start over and a held stop is
// dropped, which only ever lets a call through.

// readGovernorBytes reads the governor's file under the shared lock; the
// pre hook looks up the one value it needs in it (gjson) rather than
// decoding the whole state.
func readGovernorBytes(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return nil, fmt.Errorf("lock %s: %w", file, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return data, nil
}

// updateGovernor applies fn to a context's governor state under the file's
// lock and writes it back when fn reports a change. Without create, a
// context with no file is left alone (fn is not called).
func updateGovernor(file string, create bool, fn func(st *governor.State) bool) error {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(file, flags, statefile.FileMode)
	if create && errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(file), 0o700); err == nil {
			f, err = os.OpenFile(file, flags, statefile.FileMode)
		}
	}
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("open %s: %w", file, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", file, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	var st governor.State
	if len(data) > 0 {
		st, _ = decodeState(data) // torn or foreign: start afresh
	}
	if !fn(&st) {
		return nil
	}
	out, err := encodeState(&st)
	if err != nil {
		return fmt.Errorf("encode %s: %w", file, err)
	}
	if _, err := f.WriteAt(out, 0); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := f.Truncate(int64(len(out))); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
