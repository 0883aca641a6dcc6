// Package journal records every change `synaxi install` makes outside its own
// state, so `synaxi uninstall` can put each file back exactly.
//
// Before a file is first changed its original bytes (or the fact that it did
// not exist) are copied into the journal directory
// ($XDG_DATA_HOME/synaxi/install/). A file already in the journal is never
// backed up again, so running install twice keeps the true original. After
// each change the journal stores the hash of what install left behind:
// uninstall restores the original byte for byte when the file still holds
// exactly that, and otherwise undoes only synaxi's own keys and lines,
// keeping whatever the user (or Claude Code) changed since.
//
// The journal is written ahead of the change: the caller saves it after
// Backup, MkdirAll's record step or a planned CLI run and before it touches
// the file, so a journal that cannot be written stops the change instead
// of leaving one uninstall does not know about.
package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/google/renameio/v2"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Version is the journal's schema version.
const Version = 1

// Journal is everything install changed.
type Journal struct {
	V       int       `json:"v"`
	Updated time.Time `json:"updated"`

	RepoRoot  string `json:"repo_root,omitempty"`  // the checkout registered as the marketplace
	Claude    string `json:"claude,omitempty"`     // the Claude Code CLI install used
	ClaudeDir string `json:"claude_dir,omitempty"` // ~/.claude or $CLAUDE_CONFIG_DIR

	MarketplaceAdded bool `json:"marketplace_added"` // install added the synaxi marketplace
	PluginInstalled  bool `json:"plugin_installed"`  // install installed synaxi@synaxi
	Routed           bool `json:"routed"`            // settings env routes Claude Code through the proxy

	Files []*File  `json:"files"`
	Dirs  []string `json:"dirs,omitempty"` // directories install created, parents first
}

// File is one touched file.
type File struct {
	Path      string      `json:"path"`
	Existed   bool        `json:"existed"`
	Mode      fs.FileMode `json:"mode,omitempty"`
	Backup    string      `json:"backup,omitempty"` // name of the copy of the original under backups/
	Original  string      `json:"original_sha256,omitempty"`
	Installed string      `json:"installed_sha256"` // hash of what install left; "" = absent
	Changes   []string    `json:"changes"`          // what install changed, for people
	Keys      []Key       `json:"keys,omitempty"`   // JSON keys install set (settings.json)
	Lines     []string    `json:"lines,omitempty"`  // text install added (config.toml)
	Owned     bool        `json:"owned,omitempty"`  // a file synaxi owns outright (a copied binary)
}

// Key is a JSON key install set, with what it held before.
type Key struct {
	Path     []string        `json:"path"`
	Existed  bool            `json:"existed"`
	Original json.RawMessage `json:"original,omitempty"`
	// Container marks an object install created to hold other keys; undoing
	// removes it only if nothing else was put in it since.
	Container bool `json:"container,omitempty"`
}

// Dir is the journal directory.
func Dir(d xdg.Dirs) string { return d.DataPath("install") }

func path(dir string) string { return filepath.Join(dir, "journal.json") }

// Load reads the journal in dir; a missing journal is an empty one.
func Load(dir string) (*Journal, error) {
	j := &Journal{V: Version}
	err := statefile.ReadJSON(path(dir), j)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return j, nil
}

// Exists reports whether dir holds a journal.
func Exists(dir string) bool {
	_, err := os.Stat(path(dir))
	return err == nil
}

// Save writes the journal atomically.
func (j *Journal) Save(dir string) error {
	j.V = Version
	j.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode journal: %w", err)
	}
	return statefile.WriteBytes(path(dir), append(data, '\n'))
}

// Lock runs fn holding the journal's lock, so two installs never interleave.
func Lock(dir string, fn func() error) error { return statefile.WithLock(path(dir), fn) }

// Remove deletes the journal and its backups.
func Remove(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove journal %s: %w", dir, err)
	}
	return nil
}

// Find returns the entry for path, or nil.
func (j *Journal) Find(p string) *File {
	for _, f := range j.Files {
		if f.Path == p {
			return f
		}
	}
	return nil
}

// Backup records path's current bytes before its first change and returns
// its entry. A path already in the journal is not backed up again.
func (j *Journal) Backup(dir, p string) (*File, error) {
	if f := j.Find(p); f != nil {
		return f, nil
	}
	f := &File{Path: p}
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("back up %s: %w", p, err)
	default:
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("back up %s: %w", p, err)
		}
		f.Existed, f.Mode, f.Original = true, fi.Mode().Perm(), Hash(data)
		f.Backup = strconv.Itoa(len(j.Files)) + "-" + filepath.Base(p)
		if err := statefile.WriteBytes(filepath.Join(dir, "backups", f.Backup), data); err != nil {
			return nil, err
		}
	}
	f.Installed = f.Original
	j.Files = append(j.Files, f)
	return f, nil
}

// OriginalBytes returns the bytes the file held before install (nil if it was absent).
func (f *File) OriginalBytes(dir string) ([]byte, error) {
	if !f.Existed {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "backups", f.Backup))
	if err != nil {
		return nil, fmt.Errorf("read backup of %s: %w", f.Path, err)
	}
	if Hash(data) != f.Original {
		return nil, fmt.Errorf("backup of %s is damaged (hash mismatch); restore it by hand from %s", f.Path, filepath.Join(dir, "backups", f.Backup))
	}
	return data, nil
}

// Note records a change for people and remembers what the file now holds
// (read back from disk, for a change another program made).
func (f *File) Note(change string) error {
	f.addChange(change)
	return f.Seal()
}

// Wrote records a change made by writing data to the file: what the file
// will hold is known without reading it back, so it is recorded before the
// write.
func (f *File) Wrote(data []byte, change string) {
	f.addChange(change)
	f.Installed = Hash(data)
}

func (f *File) addChange(change string) {
	if change != "" && !slices.Contains(f.Changes, change) {
		f.Changes = append(f.Changes, change)
	}
}

// Seal remembers the file's current bytes as what install left behind.
func (f *File) Seal() error {
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Installed = ""
	case err != nil:
		return fmt.Errorf("hash %s: %w", f.Path, err)
	default:
		f.Installed = Hash(data)
	}
	return nil
}

// Unchanged reports whether the file still holds what install left.
func (f *File) Unchanged() bool {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f.Installed == ""
	}
	return err == nil && Hash(data) == f.Installed
}

// AddKey remembers a JSON key install set, the first time only.
func (f *File) AddKey(k Key) {
	for _, have := range f.Keys {
		if slices.Equal(have.Path, k.Path) {
			return
		}
	}
	f.Keys = append(f.Keys, k)
}

// Restore puts the original bytes back (with the original mode), or removes
// the file if it did not exist before install.
func (f *File) Restore(dir string) error {
	if !f.Existed {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", f.Path, err)
		}
		return nil
	}
	data, err := f.OriginalBytes(dir)
	if err != nil {
		return err
	}
	return WriteFile(f.Path, data, f.Mode)
}

// WriteFile atomically replaces path with data, creating it with mode.
func WriteFile(p string, data []byte, mode fs.FileMode) error {
	if mode == 0 {
		mode = 0o600
	}
	if err := renameio.WriteFile(p, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// MkdirAll creates dir and its missing parents (mode 0700). It records each
// directory it will create, so uninstall can remove it again, and calls
// record (which saves the journal) before creating any.
func (j *Journal) MkdirAll(dir string, record func() error) error {
	missing := Missing(dir)
	if len(missing) == 0 {
		return nil
	}
	j.AddDirs(missing...)
	if err := record(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// Missing lists dir and those of its parents that do not exist, parents
// first.
func Missing(dir string) []string {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	return missing
}

// AddDirs records directories install created (parents first), once each.
func (j *Journal) AddDirs(dirs ...string) {
	for _, d := range dirs {
		if !slices.Contains(j.Dirs, d) {
			j.Dirs = append(j.Dirs, d)
		}
	}
}

// RemoveDirs removes the directories install created, deepest first, where
// they are empty. A directory that holds something else now stays.
func (j *Journal) RemoveDirs() (kept []string) {
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		if err := os.Remove(j.Dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			kept = append(kept, j.Dirs[i])
		}
	}
	return kept
}

// Hash is the hex SHA-256 of data.
func Hash(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
