package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

// FileMaxChars bounds the guidance written into another agent's file.
const FileMaxChars = 20000

// Report is what Publish or Retract did.
type Report struct {
	ProfileVersion int
	Narratives     int       // published narratives (global and per project)
	Changed        []string  // files written, created, or whose section was removed
	Problems       []Problem // files left alone, and why
	Rejected       []string  // model renderings rejected, and why (deterministic text used); also in Problems
}

// Narrative is a published guidance, bound to its profile version; the
// SessionStart hook reads it.
type Narrative struct {
	Key       string    `json:"key"`
	Published time.Time `json:"published"`
	Guidance  *Guidance `json:"guidance"`
	// ConfirmedOnly marks a narrative made from confirmed entries only. A
	// narrative written before the lifecycle lacks it and is never served:
	// it may carry entries the user has not accepted.
	ConfirmedOnly bool `json:"confirmed_only"`
}

// NarrativeKey names the narrative of a project ("" for global-only).
func NarrativeKey(project string) string {
	if project == "" {
		return "global"
	}
	h := sha256.Sum256([]byte(project))
	return "project-" + hex.EncodeToString(h[:8])
}

// NarrativePath is the file of a published narrative.
func NarrativePath(d xdg.Dirs, key string) string {
	return d.DataPath("guidance", "published", key+".json")
}

// Projects lists the repository roots the profile has entries for, sorted.
func Projects(p *store.Profile) []string {
	var out []string
	for _, e := range p.Entries {
		if e.Scope == store.ScopeProject && e.Project != "" && !slices.Contains(out, e.Project) {
			out = append(out, e.Project)
		}
	}
	slices.Sort(out)
	return out
}

// SynthesizeAll builds the guidance of the global scope and of every
// project, rendering with the model when cfg asks for it (network, so it
// runs outside any lock).
func SynthesizeAll(ctx context.Context, cfg config.Guidance, p *store.Profile, getenv func(string) string) []*Guidance {
	var out []*Guidance
	for _, project := range append([]string{""}, Projects(p)...) {
		entries := p.Published(project)
		g := Synthesize(p.Version, project, entries)
		if cfg.Renderer == Model && !g.Empty() {
			if m, err := RenderWithModel(ctx, cfg, g, entries, getenv); err != nil {
				g.Rejected = err.Error()
			} else {
				g = m
			}
		}
		out = append(out, g)
	}
	return out
}

// Publish is what every profile change calls afterwards (the SessionEnd
// drain after each update; `synaxi profile rollback|forget|exclude|include|
// reset`): it synthesizes the current profile's guidance and publishes it
// where cfg says, retracting what the current version no longer says. It
// reads the profile from store.Dir(d), takes the journal's lock only for
// the file writes, and is safe to run from several processes at once. A
// file it must leave alone is a Problem in the report, not an error.
func Publish(ctx context.Context, d xdg.Dirs, cfg config.Guidance, getenv func(string) string) (*Report, error) {
	writers, err := ParseWriters(cfg.Writers)
	if err != nil {
		return nil, fmt.Errorf("guidance.writers: %w", err)
	}
	// Synthesis runs outside the lock (the model renderer is a network
	// call), so the profile can move on meanwhile: then the newer version
	// is synthesized again rather than an older one written over it.
	for try := 1; ; try++ {
		p, err := store.Open(store.Dir(d)).Load()
		if err != nil {
			return nil, err
		}
		rep, err := publishProfile(ctx, d, cfg, writers, p, getenv)
		if errors.Is(err, errStale) && try < 3 {
			continue
		}
		if errors.Is(err, errStale) {
			// Still moving: the process that saved the newest version
			// publishes it.
			return rep, nil
		}
		return rep, err
	}
}

// errStale reports that the profile changed after it was synthesized.
var errStale = errors.New("profile changed during publication")

// publishProfile publishes profile p; it writes nothing and returns
// errStale if p is no longer the current version once the journal's lock
// is held.
func publishProfile(ctx context.Context, d xdg.Dirs, cfg config.Guidance, writers []Writer, p *store.Profile, getenv func(string) string) (*Report, error) {
	docs := SynthesizeAll(ctx, cfg, p, getenv)
	rep := &Report{ProfileVersion: p.Version}
	for _, g := range docs {
		if g.Rejected != "" {
			scope := "global guidance"
			if g.Project != "" {
				scope = "guidance for " + g.Project
			}
			rep.Rejected = append(rep.Rejected, fmt.Sprintf("%s: %s", scope, g.Rejected))
			rep.Problems = append(rep.Problems, Problem{Path: scope,
				Msg: "the model renderer's answer was not used (" + g.Rejected + "); the deterministic text is published"})
		}
	}
	err := withJournal(d, func(j *Journal) error {
		if v, err := currentVersion(d); err != nil {
			return err
		} else if v != p.Version {
			return errStale
		}
		ops := &fileOps{j: j, now: time.Now()}
		keys := map[string]bool{}
		projects := map[string]bool{}
		for _, g := range docs {
			key := NarrativeKey(g.Project)
			if !g.Empty() && cfg.SessionStart {
				// The journal's lock covers the narratives: no sidecar
				// lock of their own.
				data, err := json.Marshal(&Narrative{Key: key, Published: ops.now.UTC(), Guidance: g, ConfirmedOnly: true})
				if err != nil {
					return fmt.Errorf("encode narrative: %w", err)
				}
				if err := statefile.WriteBytes(NarrativePath(d, key), data); err != nil {
					return err
				}
				keys[key] = true
				if j.Narratives[key] != g.ProfileVersion {
					j.log(ops.now, NarrativePath(d, key), "narrative", g.ProfileVersion, "", g.Renderer)
				}
				j.Narratives[key] = g.ProfileVersion
				rep.Narratives++
			}
			if g.Project == "" {
				continue
			}
			projects[g.Project] = true
			body := Render(g, FileMaxChars)
			for _, w := range writers {
				ops.write(w, g.Project, body, p.Version)
			}
		}
		for key := range j.Narratives {
			if !keys[key] {
				if err := retractNarrative(d, j, key, p.Version, ops.now); err != nil {
					return err
				}
			}
		}
		for _, path := range sortedTargets(j) {
			rec := j.Targets[path]
			if rec.State != Active {
				continue
			}
			switch {
			case !slices.ContainsFunc(writers, func(w Writer) bool { return w.Name == rec.Writer }):
				ops.retract(rec, p.Version, "the writer is no longer in guidance.writers")
			case !projects[rec.Project]:
				ops.retract(rec, p.Version, "the profile has no entries for this project")
			}
		}
		rep.Changed, rep.Problems = ops.changed, append(rep.Problems, ops.problems...)
		return nil
	})
	if err != nil {
		return rep, err
	}
	return rep, nil
}

// Retract removes everything the journal says synaxi published: every
// active section (left alone, as a Problem, where the user edited it), the
// files and directories synaxi created for them, and the published
// narratives. `synaxi uninstall` calls it.
func Retract(d xdg.Dirs) (*Report, error) {
	rep := &Report{}
	if _, err := os.Stat(JournalPath(d)); errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	err := withJournal(d, func(j *Journal) error {
		ops := &fileOps{j: j, now: time.Now()}
		for _, path := range sortedTargets(j) {
			if rec := j.Targets[path]; rec.State == Active {
				ops.retract(rec, rec.Version, "retract")
			}
		}
		for key, v := range j.Narratives {
			if err := retractNarrative(d, j, key, v, ops.now); err != nil {
				return err
			}
		}
		rep.Changed, rep.Problems = ops.changed, ops.problems
		return nil
	})
	return rep, err
}

func retractNarrative(d xdg.Dirs, j *Journal, key string, version int, now time.Time) error {
	path := NarrativePath(d, key)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	delete(j.Narratives, key)
	j.log(now, path, "retract-narrative", version, "", "")
	return nil
}

func sortedTargets(j *Journal) []string {
	var out []string
	for p := range j.Targets {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ForSession returns the guidance a session starting in cwd receives as
// additional context, within cfg.MaxChars: the published narrative of
// cwd's project, else the global one. A narrative from another profile
// version than the current one (publication failed or has not run yet
// since a change) is not served: the current profile is synthesized
// deterministically instead, so rolled-back entries never reappear.
// Nothing is written. "" means there is nothing to say.
func ForSession(d xdg.Dirs, cfg config.Guidance, cwd string) (string, error) {
	if !cfg.SessionStart {
		return "", nil
	}
	g, err := Current(d, store.ProjectRoot(cwd))
	if err != nil || g == nil {
		return "", err
	}
	// The cap counts characters; Claude Code's 10,000 also holds for
	// bytes here (hookio clips there), so text heavy in multi-byte
	// characters is rendered smaller rather than clipped mid-item.
	limit := cfg.MaxChars
	out := Render(g, limit)
	for len(out) > hookio.MaxText && limit > 500 {
		limit = limit * 8 / 10
		out = Render(g, limit)
	}
	return out, nil
}

// Current returns the guidance for project at the current profile version:
// the published narrative when it is current, else a fresh deterministic
// synthesis. nil means the profile has nothing for it.
func Current(d xdg.Dirs, project string) (*Guidance, error) {
	version, err := currentVersion(d)
	if err != nil {
		return nil, err
	}
	if version == 0 {
		return nil, nil
	}
	// Publish writes every scope's narrative at one version: when the
	// global one is current and the project has none at that version, the
	// project has no entries of its own.
	for _, key := range []string{NarrativeKey(project), NarrativeKey("")} {
		var n Narrative
		if statefile.ReadJSON(NarrativePath(d, key), &n) == nil && n.Guidance != nil && n.ConfirmedOnly &&
			n.Guidance.ProfileVersion == version && (n.Guidance.Project == project || n.Guidance.Project == "") {
			return n.Guidance, nil
		}
	}
	p, err := store.Open(store.Dir(d)).Load()
	if err != nil {
		return nil, err
	}
	g := Synthesize(p.Version, project, p.Published(project))
	if g.Empty() {
		return nil, nil
	}
	return g, nil
}

// currentVersion reads only the profile's version field.
func currentVersion(d xdg.Dirs) (int, error) {
	path := store.Open(store.Dir(d)).Path()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read profile: %w", err)
	}
	return int(gjson.GetBytes(data, "version").Int()), nil
}
