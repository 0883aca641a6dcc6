// Package walk lists the source files of a repository that a map should
// cover: it honours git's ignore rules (nested .gitignore files, those above
// the root up to the work tree's top, .git/info/exclude and the global
// excludes file; see package ignore), leaves out hidden, vendored and
// testdata directories,
// never follows a symbolic link out of the root, and classifies file
// contents as generated, minified or binary so callers can skip them.
package walk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/synaxi/synaxi/mapgen/ignore"
)

// ErrOutsideRoot is returned (wrapped) for a path that resolves outside the
// project root.
var ErrOutsideRoot = errors.New("path is outside the project root")

// MaxFiles bounds one walk: a root that is really a home directory or a
// monorepo checkout of everything still answers, with the files found first
// (in path order) and a note that the walk stopped.
const MaxFiles = 100_000

// MaxDirs bounds the directories one walk reads, for the same reason: a
// root of / or a home directory holds far more folders than source files.
const MaxDirs = 50_000

// MaxFileSize is the largest file a walk returns; bigger ones are almost
// always data or bundles, not code worth mapping.
const MaxFileSize = 1 << 20

// skipDirs are directory names never descended into: vendored code and test
// fixtures that would drown the project's own structure.
var skipDirs = map[string]bool{
	"vendor":       true,
	"node_modules": true,
	"third_party":  true,
	"testdata":     true,
}

// Root is a project root: an absolute directory with symbolic links resolved.
type Root struct {
	dir   string // symlinks resolved
	given string // absolute, as given (may pass through a symlink)
}

// NewRoot resolves dir to an absolute, symlink-free directory.
func NewRoot(dir string) (Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Root{}, fmt.Errorf("resolve root %s: %w", dir, err)
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Root{}, fmt.Errorf("resolve root %s: %w", dir, err)
	}
	st, err := os.Stat(target)
	if err != nil {
		return Root{}, fmt.Errorf("resolve root %s: %w", dir, err)
	}
	if !st.IsDir() {
		return Root{}, fmt.Errorf("resolve root %s: not a directory", dir)
	}
	return Root{dir: target, given: abs}, nil
}

// Dir returns the root's absolute path.
func (r Root) Dir() string { return r.dir }

// Resolve turns p (absolute, or relative to the root) into an absolute path
// and a slash-separated path relative to the root. It refuses, with an error
// wrapping ErrOutsideRoot, any path that lies outside the root either as
// written or once symbolic links are followed.
func (r Root) Resolve(p string) (abs, rel string, err error) {
	if p == "" {
		return "", "", errors.New("empty path: give a file path relative to the project root")
	}
	abs = p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.dir, p)
	}
	abs = filepath.Clean(abs)
	if _, ok := r.relative(abs); !ok && !within(r.given, abs) {
		return "", "", fmt.Errorf("%q: %w %s; give a path inside it", p, ErrOutsideRoot, r.dir)
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: %w", p, err)
	}
	rel, ok := r.relative(target)
	if !ok {
		return "", "", fmt.Errorf("%q links to %s: %w %s; give a path inside it", p, target, ErrOutsideRoot, r.dir)
	}
	return target, rel, nil
}

// relative returns abs relative to the root in slash form, and whether abs is
// inside the root (or the root itself).
func (r Root) relative(abs string) (string, bool) {
	if !within(r.dir, abs) {
		return "", false
	}
	rel, _ := filepath.Rel(r.dir, abs)
	return filepath.ToSlash(rel), true
}

// within reports whether abs is dir or below it, lexically.
func within(dir, abs string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// File is one file a walk found.
type File struct {
	Rel     string // slash-separated, relative to the root
	Abs     string
	Size    int64
	ModTime time.Time
}

// Dir is one directory a walk read, with its modification time: a file
// added, removed or renamed in it changes that time.
type Dir struct {
	Rel     string
	ModTime time.Time
}

// Result is what a walk found and what it depended on.
type Result struct {
	Files     []File   // sorted by path
	Dirs      []Dir    // every directory read, the root first
	Sources   []string // ignore files consulted (absolute paths): those above the root present or not, those in Dirs present
	Truncated bool     // stopped at MaxFiles or MaxDirs
}

// Scan returns the files under root, sorted by path, that accept admits
// (typically by extension) and that no ignore rule, skipped directory or
// outward symbolic link excludes; it also reports the directories it read and
// the ignore files it consulted, so a caller can tell later, by their
// modification times, whether a new walk could find anything different.
// getenv resolves HOME and XDG_CONFIG_HOME for git's global excludes file.
// Unreadable directories are skipped. After MaxFiles files or MaxDirs
// directories it stops and reports Truncated.
func Scan(ctx context.Context, root Root, accept func(rel string) bool, getenv func(string) string) (Result, error) {
	ic := ignore.Load(root.dir, getenv)
	w := walker{ctx: ctx, root: root, accept: accept, prefix: ic.Prefix}
	w.res.Sources = ic.Sources
	if err := w.dir("", ic.Rules); err != nil && !errors.Is(err, errFull) {
		return Result{}, err
	}
	slices.SortFunc(w.res.Files, func(a, b File) int { return strings.Compare(a.Rel, b.Rel) })
	return w.res, nil
}

var errFull = errors.New("walk: file limit reached")

type walker struct {
	ctx    context.Context
	root   Root
	accept func(string) bool
	prefix string // the root relative to the git work tree's top
	res    Result
}

// gitPath is rel as the ignore rules see it: relative to the work tree's top.
func (w *walker) gitPath(rel string) string {
	switch {
	case w.prefix == "":
		return rel
	case rel == "":
		return w.prefix
	}
	return w.prefix + "/" + rel
}

func (w *walker) dir(rel string, rules ignore.Rules) error {
	if err := w.ctx.Err(); err != nil {
		return fmt.Errorf("walk %s: %w", w.root.dir, err)
	}
	if len(w.res.Dirs) == MaxDirs {
		w.res.Truncated = true
		return errFull
	}
	abs := filepath.Join(w.root.dir, filepath.FromSlash(rel))
	st, err := os.Stat(abs)
	if err != nil {
		if rel == "" {
			return fmt.Errorf("read root %s: %w", abs, err)
		}
		return nil
	}
	w.res.Dirs = append(w.res.Dirs, Dir{Rel: rel, ModTime: st.ModTime()})
	// A .gitignore created or removed here changes this directory's time;
	// only an existing one can change without it.
	gi := filepath.Join(abs, ".gitignore")
	if data, err := os.ReadFile(gi); err == nil {
		w.res.Sources = append(w.res.Sources, gi)
		rules = rules.With(ignore.Parse(w.gitPath(rel), data))
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" {
			return fmt.Errorf("read root %s: %w", abs, err)
		}
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		childAbs := filepath.Join(abs, name)
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			// Follow a link only to a regular file inside the root; linked
			// directories are not descended (no cycles, no duplicates).
			target, err := filepath.EvalSymlinks(childAbs)
			if err != nil {
				continue
			}
			if _, inside := w.root.relative(target); !inside {
				continue
			}
			st, err := os.Stat(target)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			mode = 0
		}
		switch {
		case mode.IsDir():
			if skipDirs[name] || rules.Ignored(w.gitPath(childRel), true) {
				continue
			}
			if err := w.dir(childRel, rules); err != nil {
				return err
			}
		case mode.IsRegular():
			if !w.accept(childRel) || rules.Ignored(w.gitPath(childRel), false) {
				continue
			}
			st, err := os.Stat(childAbs)
			if err != nil || st.Size() > MaxFileSize {
				continue
			}
			if len(w.res.Files) == MaxFiles {
				w.res.Truncated = true
				return errFull
			}
			w.res.Files = append(w.res.Files, File{Rel: childRel, Abs: childAbs, Size: st.Size(), ModTime: st.ModTime()})
		}
	}
	return nil
}

// Skip reasons returned by Classify.
const (
	Binary    = "binary"
	Generated = "generated"
	Minified  = "minified"
)

// hasGeneratedLine reports whether a line reads "// Code generated … DO NOT
// EDIT." (or with "#"), the Go convention for generated files.
func hasGeneratedLine(data []byte) bool {
	marker := []byte("Code generated ")
	for i := 0; ; {
		j := bytes.Index(data[i:], marker)
		if j < 0 {
			return false
		}
		at := i + j
		i = at + len(marker)
		start := bytes.LastIndexByte(data[:at], '\n') + 1
		prefix := string(data[start:at])
		if prefix != "// " && prefix != "# " {
			continue
		}
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			end = len(data) - at
		}
		line := bytes.TrimRight(data[at:at+end], " \t\r")
		if bytes.HasSuffix(line, []byte(" DO NOT EDIT.")) {
			return true
		}
	}
}

// Classify returns why a file's content should be left out of a map ("" when
// it should not): Binary (a NUL byte in the first 8000 bytes, as git judges,
// or invalid UTF-8), Generated (a "Code generated … DO NOT EDIT." line in the
// Go convention, with // or #, or an @generated marker in the first 1 KiB) or
// Minified (over 1 KiB with a mean line length above 300 bytes).
func Classify(data []byte) string {
	head := data[:min(len(data), 8000)]
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(data) {
		return Binary
	}
	if hasGeneratedLine(data) || bytes.Contains(data[:min(len(data), 1024)], []byte("@generated")) {
		return Generated
	}
	if len(data) > 1024 && len(data)/(bytes.Count(data, []byte{'\n'})+1) > 300 {
		return Minified
	}
	return ""
}
