package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/synaxi/synaxi/installer/internal/claude"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/installer/internal/settings"
	"github.com/synaxi/synaxi/internal/hint"
)

// settings.json edits, shared by the status line and routing steps: each
// key is journaled with its previous value before it is set (setSettings),
// and revertKeys takes synaxi's keys out again from a file changed since.

// readSettings reads settings.json once and checks that it can be edited.
func (in *installer) readSettings() (*settings.Doc, error) {
	doc, err := settings.Read(claude.SettingsPath(in.cdir))
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("%w; nothing was changed", err), "run `synaxi install` again once it is fixed")
	}
	return doc, nil
}

// setting is one settings.json key install sets, and why (for the journal).
type setting struct {
	keys   []string
	value  any
	change string
}

// setSettings applies changes to doc (settings.json as read once) and
// writes the file once, journaling it and each key's previous value first.
// A key that already holds its value is left alone.
func (in *installer) setSettings(doc *settings.Doc, changes ...setting) error {
	path := claude.SettingsPath(in.cdir)
	var keys []journal.Key
	var notes []string
	for _, c := range changes {
		old, existed, err := doc.Get(c.keys...)
		if err != nil {
			return err
		}
		enc, _ := json.Marshal(c.value)
		if existed && jsonEqual(old, enc) {
			continue
		}
		// Record the shallowest key that did not exist: creating env.X where
		// there was no env creates env.
		for i := 1; i < len(c.keys); i++ {
			if _, ok, _ := doc.Get(c.keys[:i]...); !ok {
				keys = append(keys, journal.Key{Path: slices.Clone(c.keys[:i]), Container: true})
				break
			}
		}
		k := journal.Key{Path: c.keys, Existed: existed}
		if existed {
			k.Original = append(json.RawMessage(nil), old...)
		}
		keys = append(keys, k)
		if err := doc.Set(c.value, c.keys...); err != nil {
			return err
		}
		notes = append(notes, c.change)
	}
	if len(notes) == 0 {
		return nil
	}
	if err := in.j.MkdirAll(in.cdir, in.record); err != nil {
		return err
	}
	f, err := in.j.Backup(in.jdir, path)
	if err != nil {
		return err
	}
	for _, k := range keys {
		f.AddKey(k)
	}
	for _, n := range notes {
		f.Wrote(doc.Bytes(), n)
	}
	if err := in.record(); err != nil {
		return err
	}
	return journal.WriteFile(path, doc.Bytes(), modeOf(path))
}

// revertKeys undoes synaxi's settings.json keys in a file that was changed
// after install, keeping every other change.
func (in *installer) revertKeys(f *journal.File) error {
	src, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	doc, err := settings.Parse(f.Path, src)
	if err != nil {
		return err
	}
	// Undo in reverse order, so a key set inside an object install created
	// goes before the object.
	for i := len(f.Keys) - 1; i >= 0; i-- {
		k := f.Keys[i]
		if k.Container {
			if raw, ok, _ := doc.Get(k.Path...); ok && !jsonEqual(raw, []byte("{}")) {
				continue
			}
		}
		if k.Existed {
			if !json.Valid(k.Original) {
				return fmt.Errorf("journal value of %v is not JSON", k.Path)
			}
			err = doc.Set(json.RawMessage(k.Original), k.Path...)
		} else {
			err = doc.Delete(k.Path...)
		}
		if err != nil {
			return fmt.Errorf("%s: undo %v: %w", f.Path, k.Path, err)
		}
	}
	// What is left may be the original in another layout (Claude Code's CLI
	// re-encodes the file): then the original bytes go back.
	orig, err := f.OriginalBytes(in.jdir)
	if err != nil {
		return err
	}
	switch {
	case !f.Existed && jsonEqual(doc.Bytes(), []byte("{}")):
		if err := f.Restore(in.jdir); err != nil {
			return err
		}
		in.say("removed %s: without synaxi's keys it is empty, and it did not exist before install", f.Path)
		return nil
	case f.Existed && jsonEqual(doc.Bytes(), orig):
		if err := f.Restore(in.jdir); err != nil {
			return err
		}
		in.say("restored %s: without synaxi's keys it equals the original, so the original bytes are back", f.Path)
		return nil
	}
	if err := journal.WriteFile(f.Path, doc.Bytes(), modeOf(f.Path)); err != nil {
		return err
	}
	in.say("restored synaxi's keys in %s and kept the changes made there since install", f.Path)
	return nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func modeOf(p string) fs.FileMode {
	if fi, err := os.Stat(p); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}
