package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/renameio/v2"
)

// Writer is one opt-in destination of the guidance in a project.
type Writer struct {
	Name string // the name in guidance.writers
	Rel  string // path under the repository root
	// Front is what a file synaxi creates starts with (Cursor's rule
	// frontmatter); it is never written into an existing file.
	Front string
}

// Writers lists every writer guidance.writers can name.
var Writers = []Writer{
	{Name: "agents", Rel: "AGENTS.md"},
	{Name: "cursor", Rel: filepath.Join(".cursor", "rules", "synaxi.mdc"),
		Front: "---\ndescription: Guidance synaxi learned from your past sessions\nalwaysApply: true\n---\n"},
	{Name: "copilot", Rel: filepath.Join(".github", "copilot-instructions.md")},
	{Name: "gemini", Rel: filepath.Join(".gemini", "styleguide.md")},
}

// WriterNames lists the writer names, for documentation and errors.
func WriterNames() []string {
	var out []string
	for _, w := range Writers {
		out = append(out, w.Name)
	}
	return out
}

// ParseWriters checks a guidance.writers value: a comma-separated list of
// writer names, or empty for none.
func ParseWriters(s string) ([]Writer, error) {
	var out []Writer
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(Writers, func(w Writer) bool { return w.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown writer %q (want a comma-separated list of %s)", name, strings.Join(WriterNames(), ", "))
		}
		if !slices.ContainsFunc(out, func(w Writer) bool { return w.Name == name }) {
			out = append(out, Writers[i])
		}
	}
	return out, nil
}

// Problem is a file synaxi left alone, and why.
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg }

// canon is a section body as it reads back from a file: LF line breaks,
// each line ended.
func canon(body string) string {
	lines := splitLines(body)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// fileOps holds what one publication or retraction did.
type fileOps struct {
	j        *Journal
	now      time.Time
	changed  []string
	problems []Problem
}

func (o *fileOps) problem(path, format string, a ...any) {
	o.problems = append(o.problems, Problem{Path: path, Msg: fmt.Sprintf(format, a...)})
}

// write puts body into w's file under root as synaxi's section, following
// the rules in the package doc. An empty body retracts the section.
func (o *fileOps) write(w Writer, root, body string, version int) {
	path := filepath.Join(root, w.Rel)
	rec := o.j.Targets[path]
	if body == "" {
		if rec != nil && rec.State == Active {
			o.retract(rec, version, "the profile has nothing to publish")
		}
		return
	}
	body = canon(body)
	real, src, err := readTarget(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rec != nil && rec.State != Retracted {
			if rec.State == Active {
				rec.State, rec.Updated = Declined, o.now
				o.j.log(o.now, path, "decline", version, "", "the file was deleted")
			}
			o.problem(path, "the file synaxi wrote was deleted; synaxi does not recreate it (create it with synaxi's two marker lines to have it written again)")
			return
		}
		o.create(w, path, root, body, version)
		return
	case err != nil:
		o.problem(path, "%v", err)
		return
	}
	sp, found, err := findSection(src)
	if err != nil {
		o.problem(path, "%v; synaxi leaves the file alone until that is fixed", err)
		return
	}
	if !found {
		if rec != nil && rec.State != Retracted {
			if rec.State == Active {
				rec.State, rec.Updated = Declined, o.now
				o.j.log(o.now, path, "decline", version, "", "synaxi's markers were removed")
			}
			o.problem(path, "synaxi's markers were removed, so synaxi leaves the file alone; put the two marker lines back where the section should go to have it written again")
			return
		}
		out, sep := appendSection(src, body)
		if err := writeFile(real, out); err != nil {
			o.problem(path, "%v", err)
			return
		}
		o.j.Targets[path] = &Target{Path: path, Writer: w.Name, Project: root, Sep: sep, Hash: hashOf(body),
			Version: version, State: Active, Updated: o.now}
		o.j.log(o.now, path, "append", version, hashOf(body), "")
		o.changed = append(o.changed, path)
		return
	}
	have := sectionBody(src, sp)
	if rec != nil && rec.State == Active && hashOf(have) != rec.Hash {
		o.conflict(rec, version, hashOf(have), "the section was edited by hand")
		o.problem(path, "the text between synaxi's markers was edited since synaxi wrote it; synaxi leaves it alone (move your text outside the markers, or delete what is between them, to have synaxi write there again)")
		return
	}
	if rec == nil || rec.State != Active {
		// Markers the user put there (or put back): the section is
		// synaxi's from now on; the rest of the file stays theirs.
		rec = &Target{Path: path, Writer: w.Name, Project: root}
		o.j.Targets[path] = rec
	}
	if have == body {
		rec.State, rec.Hash = Active, hashOf(body)
		return
	}
	if err := writeFile(real, replaceSection(src, sp, body)); err != nil {
		o.problem(path, "%v", err)
		return
	}
	rec.Hash, rec.Version, rec.State, rec.Updated, rec.Conflict = hashOf(body), version, Active, o.now, ""
	o.j.log(o.now, path, "update", version, rec.Hash, "")
	o.changed = append(o.changed, path)
}

// conflict logs a hand-edited section once per edit, not on every
// publication that finds it.
func (o *fileOps) conflict(rec *Target, version int, have, note string) {
	if rec.Conflict == have {
		return
	}
	rec.Conflict = have
	o.j.log(o.now, rec.Path, "conflict", version, have, note)
}

// create makes a new file holding w.Front and the section.
func (o *fileOps) create(w Writer, path, root, body string, version int) {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		o.problem(path, "the project %s is not a directory here; nothing written", root)
		return
	}
	dirs, err := mkdirs(filepath.Dir(path))
	if err != nil {
		o.problem(path, "%v", err)
		return
	}
	data := append([]byte(w.Front), sectionBytes(body, "\n", true)...)
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		o.problem(path, "write: %v", err)
		return
	}
	o.j.Targets[path] = &Target{Path: path, Writer: w.Name, Project: root, Created: true, Front: w.Front,
		CreatedDirs: dirs, Hash: hashOf(body), Version: version, State: Active, Updated: o.now}
	o.j.log(o.now, path, "create", version, hashOf(body), "")
	o.changed = append(o.changed, path)
}

// retract removes synaxi's section from rec's file, and the file and the
// directories synaxi created when nothing else is left in them.
func (o *fileOps) retract(rec *Target, version int, why string) {
	path := rec.Path
	real, src, err := readTarget(path)
	if errors.Is(err, fs.ErrNotExist) {
		rec.State, rec.Updated = Retracted, o.now
		return
	}
	if err != nil {
		o.problem(path, "%v", err)
		return
	}
	sp, found, err := findSection(src)
	if err != nil {
		o.problem(path, "%v; remove synaxi's section by hand", err)
		return
	}
	if !found {
		rec.State, rec.Updated = Retracted, o.now
		return
	}
	have := sectionBody(src, sp)
	if hashOf(have) != rec.Hash {
		o.conflict(rec, version, hashOf(have), "not retracted: the section was edited by hand")
		o.problem(path, "the text between synaxi's markers was edited since synaxi wrote it; synaxi leaves it for you to remove")
		return
	}
	out := removeSection(src, sp, rec.Sep)
	if rec.Created && string(out) == rec.Front {
		if err := os.Remove(real); err != nil {
			o.problem(path, "remove: %v", err)
			return
		}
		for _, d := range rec.CreatedDirs {
			_ = os.Remove(d) // only if empty: other files keep it
		}
		o.j.log(o.now, path, "delete", version, "", why)
	} else {
		if err := writeFile(real, out); err != nil {
			o.problem(path, "%v", err)
			return
		}
		o.j.log(o.now, path, "remove", version, "", why)
	}
	rec.State, rec.Updated, rec.Version = Retracted, o.now, version
	o.changed = append(o.changed, path)
}

// readTarget reads a file through any symlink (AGENTS.md is often one) and
// returns the real path a write must replace, so the link survives.
func readTarget(path string) (real string, src []byte, err error) {
	real, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, err
	}
	src, err = os.ReadFile(real)
	if err != nil {
		return "", nil, fmt.Errorf("read: %w", err)
	}
	return real, src, nil
}

// writeFile atomically replaces an existing file, keeping its mode.
func writeFile(path string, data []byte) error {
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// mkdirs creates dir and missing parents (0755: they are the project's
// directories, like .github) and returns the ones it created, deepest
// first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return missing, nil
}
