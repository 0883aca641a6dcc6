package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

type rig struct {
	d       xdg.Dirs
	store   *store.Store
	project string // a repository root
	cfg     config.Guidance
}

func newRig(t *testing.T) *rig {
	root := t.TempDir()
	project := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	cfg := config.Default().Guidance
	cfg.Writers = "agents,cursor,copilot,gemini"
	return &rig{d: d, store: store.Open(store.Dir(d)), project: project, cfg: cfg}
}

func (r *rig) add(t *testing.T, es ...store.Entry) int {
	t.Helper()
	v, err := r.store.Update("test", func(p *store.Profile) error {
		p.Entries = append(p.Entries, es...)
		return nil
	})
	require.NoError(t, err)
	return v
}

func (r *rig) publish(t *testing.T) *Report {
	t.Helper()
	rep, err := Publish(context.Background(), r.d, r.cfg, func(string) string { return "" })
	require.NoError(t, err)
	return rep
}

func (r *rig) path(rel string) string { return filepath.Join(r.project, rel) }

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func (r *rig) mockGuard() store.Entry {
	return entry(store.ScopeProject, r.project, store.Guards, "don't mock the database", 0.8, "no, don't mock the database here")
}

func TestPublishWritesSectionsAndRollbackRetractsThem(t *testing.T) {
	r := newRig(t)
	handWritten := "# Agents\r\n\r\nUse the Makefile.\r\n"
	require.NoError(t, os.WriteFile(r.path("AGENTS.md"), []byte(handWritten), 0o640))
	require.NoError(t, os.MkdirAll(r.path(".github"), 0o755))
	copilot := "Prefer small PRs." // no final newline
	require.NoError(t, os.WriteFile(r.path(".github/copilot-instructions.md"), []byte(copilot), 0o644))

	r.add(t, r.mockGuard())
	rep := r.publish(t)
	assert.Empty(t, rep.Problems)
	assert.Len(t, rep.Changed, 4)
	locks, err := filepath.Glob(filepath.Join(filepath.Dir(NarrativePath(r.d, "x")), "*.lock"))
	require.NoError(t, err)
	assert.Empty(t, locks, "narratives are written under the journal's lock, with no sidecar locks of their own")
	assert.Equal(t, 1, rep.Narratives, "the project's; the global scope has nothing yet")

	agents := read(t, r.path("AGENTS.md"))
	assert.True(t, strings.HasPrefix(agents, handWritten+"\r\n"+BeginMarker+"\r\n"), agents)
	assert.Contains(t, agents, "NEVER mock the database.")
	assert.Contains(t, agents, `"no, don't mock the database here"`)
	fi, err := os.Stat(r.path("AGENTS.md"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the file keeps its mode")

	mdc := read(t, r.path(".cursor/rules/synaxi.mdc"))
	assert.True(t, strings.HasPrefix(mdc, "---\ndescription: "), "cursor rules carry frontmatter: %s", mdc)
	assert.Contains(t, mdc, "alwaysApply: true\n---\n"+BeginMarker)
	assert.True(t, strings.HasPrefix(read(t, r.path(".github/copilot-instructions.md")), copilot+"\n\n"+BeginMarker))
	assert.FileExists(t, r.path(".gemini/styleguide.md"))

	// Publishing the same version again writes nothing.
	rep = r.publish(t)
	assert.Empty(t, rep.Changed)

	// A second entry updates the sections in place.
	r.add(t, entry(store.ScopeGlobal, "", store.Workflow, "run make lint before every commit", 0.5, "always run make lint before you commit"))
	rep = r.publish(t)
	assert.Len(t, rep.Changed, 4)
	agents = read(t, r.path("AGENTS.md"))
	assert.Contains(t, agents, "ALWAYS run make lint before every commit.")
	assert.Equal(t, 1, strings.Count(agents, BeginMarker))

	// Roll back to before the first entry: everything goes, byte for byte.
	_, err = r.store.Reset()
	require.NoError(t, err)
	rep = r.publish(t)
	assert.Empty(t, rep.Problems)
	assert.Equal(t, handWritten, read(t, r.path("AGENTS.md")))
	assert.Equal(t, copilot, read(t, r.path(".github/copilot-instructions.md")))
	assert.NoFileExists(t, r.path(".cursor/rules/synaxi.mdc"))
	assert.NoDirExists(t, r.path(".cursor"), "directories synaxi made go too")
	assert.NoDirExists(t, r.path(".gemini"))
	assert.DirExists(t, r.path(".github"), "the user's directory stays")
	assert.Equal(t, 0, rep.Narratives)
	_, err = os.Stat(NarrativePath(r.d, NarrativeKey(r.project)))
	assert.True(t, os.IsNotExist(err), "the published narrative is retracted")

	j, err := readJournal(r.d)
	require.NoError(t, err)
	actions := map[string]int{}
	for _, ev := range j.Log {
		actions[ev.Action]++
	}
	assert.Equal(t, map[string]int{"append": 2, "create": 2, "update": 4, "remove": 2, "delete": 2, "narrative": 3, "retract-narrative": 2}, actions)
}

func TestPublishRollbackToAVersionKeepsOnlyWhatItSays(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents"
	r.add(t, entry(store.ScopeProject, r.project, store.Workflow, "use make for every build", 0.5, "use make, always"))
	v2 := r.add(t, r.mockGuard())
	r.publish(t)
	assert.Contains(t, read(t, r.path("AGENTS.md")), "NEVER mock the database")
	_, err := r.store.Rollback(v2 - 1)
	require.NoError(t, err)
	r.publish(t)
	agents := read(t, r.path("AGENTS.md"))
	assert.NotContains(t, agents, "mock the database")
	assert.Contains(t, agents, "ALWAYS use make for every build.")
	s, err := ForSession(r.d, r.cfg, filepath.Join(r.project, "sub", "dir"))
	require.NoError(t, err)
	assert.NotContains(t, s, "mock the database")
	assert.Contains(t, s, "use make, always")
}

func TestUserRemovedMarkersOrEditedTheSection(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents,gemini"
	r.add(t, r.mockGuard())
	r.publish(t)

	// The user deletes synaxi's section, markers and all, and writes their
	// own text: synaxi does not put it back.
	mine := "# My own rules only\n"
	require.NoError(t, os.WriteFile(r.path("AGENTS.md"), []byte(mine), 0o644))
	// And edits the text inside gemini's markers.
	g := read(t, r.path(".gemini/styleguide.md"))
	edited := strings.Replace(g, "NEVER mock", "NEVER EVER mock", 1)
	require.NoError(t, os.WriteFile(r.path(".gemini/styleguide.md"), []byte(edited), 0o644))

	r.add(t, entry(store.ScopeGlobal, "", store.Workflow, "run make lint before every commit", 0.5, "always run make lint before you commit"))
	rep := r.publish(t)
	assert.Equal(t, mine, read(t, r.path("AGENTS.md")), "never recreated over the user's text")
	assert.Equal(t, edited, read(t, r.path(".gemini/styleguide.md")), "a hand-edited section is left alone")
	require.Len(t, rep.Problems, 2)
	assert.Contains(t, rep.Problems[0].String(), "markers were removed")
	assert.Contains(t, rep.Problems[1].String(), "edited since synaxi wrote it")

	// Retract (uninstall) leaves both alone too.
	rep, err := Retract(r.d)
	require.NoError(t, err)
	assert.Equal(t, mine, read(t, r.path("AGENTS.md")))
	assert.Equal(t, edited, read(t, r.path(".gemini/styleguide.md")))
	require.Len(t, rep.Problems, 1, "the edited section")
	j, err := readJournal(r.d)
	require.NoError(t, err)
	conflicts := 0
	for _, ev := range j.Log {
		if ev.Action == "conflict" {
			conflicts++
		}
	}
	assert.Equal(t, 1, conflicts, "one edit is logged once, however often it is found")

	// Putting the markers back hands the section to synaxi again.
	require.NoError(t, os.WriteFile(r.path("AGENTS.md"), []byte(mine+"\n"+BeginMarker+"\n"+EndMarker+"\n\nfooter\n"), 0o644))
	rep = r.publish(t)
	assert.Equal(t, []string{r.path("AGENTS.md")}, rep.Changed)
	agents := read(t, r.path("AGENTS.md"))
	assert.True(t, strings.HasPrefix(agents, mine+"\n"+BeginMarker+"\n# What synaxi learned"), agents)
	assert.True(t, strings.HasSuffix(agents, EndMarker+"\n\nfooter\n"))
	assert.Contains(t, agents, "run make lint")
}

func TestUnbalancedMarkersAreReportedNotFixed(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents"
	broken := "intro\n" + BeginMarker + "\nno end marker\n"
	require.NoError(t, os.WriteFile(r.path("AGENTS.md"), []byte(broken), 0o644))
	r.add(t, r.mockGuard())
	rep := r.publish(t)
	assert.Equal(t, broken, read(t, r.path("AGENTS.md")))
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0].Msg, "without an end marker")
}

func TestSymlinkedAgentsFileStaysALink(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents"
	require.NoError(t, os.WriteFile(r.path("CLAUDE.md"), []byte("# shared\n"), 0o644))
	require.NoError(t, os.Symlink("CLAUDE.md", r.path("AGENTS.md")))
	r.add(t, r.mockGuard())
	r.publish(t)
	target, err := os.Readlink(r.path("AGENTS.md"))
	require.NoError(t, err)
	assert.Equal(t, "CLAUDE.md", target)
	assert.Contains(t, read(t, r.path("CLAUDE.md")), "NEVER mock the database")
	_, err = Retract(r.d)
	require.NoError(t, err)
	assert.Equal(t, "# shared\n", read(t, r.path("CLAUDE.md")))
	_, err = os.Readlink(r.path("AGENTS.md"))
	assert.NoError(t, err)
}

func TestWriterTurnedOffIsRetracted(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents,copilot"
	r.add(t, r.mockGuard())
	r.publish(t)
	require.FileExists(t, r.path(".github/copilot-instructions.md"))
	r.cfg.Writers = "agents"
	rep := r.publish(t)
	assert.Equal(t, []string{r.path(".github/copilot-instructions.md")}, rep.Changed)
	assert.NoFileExists(t, r.path(".github/copilot-instructions.md"))
	assert.FileExists(t, r.path("AGENTS.md"))
}

func TestDefaultWritesNoProjectFile(t *testing.T) {
	r := newRig(t)
	r.cfg = config.Default().Guidance
	r.add(t, r.mockGuard())
	rep := r.publish(t)
	assert.Empty(t, rep.Changed)
	entries, err := os.ReadDir(r.project)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only .git: nothing written into the user's files")
	s, err := ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.Contains(t, s, "NEVER mock the database.")

	r.cfg.SessionStart = false
	s, err = ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.Empty(t, s)
}

func TestForSessionScopes(t *testing.T) {
	r := newRig(t)
	other := filepath.Join(filepath.Dir(r.project), "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	r.add(t, r.mockGuard(), entry(store.ScopeGlobal, "", store.Communication, "answer in short paragraphs", 0.6, "shorter answers please"))
	s, err := ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.Contains(t, s, "NEVER mock the database", "before any publication the current profile is synthesized")
	r.publish(t)
	s, err = ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.Contains(t, s, "NEVER mock the database")
	assert.Contains(t, s, "answer in short paragraphs")
	s, err = ForSession(r.d, r.cfg, other)
	require.NoError(t, err)
	assert.NotContains(t, s, "mock the database", "another project gets only global entries")
	assert.Contains(t, s, "answer in short paragraphs")

	// A stale narrative (the profile changed, publication did not run) is
	// never served.
	_, err = r.store.Reset()
	require.NoError(t, err)
	s, err = ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.Empty(t, s)

	r.cfg.MaxChars = 500
	r.add(t, r.mockGuard())
	r.publish(t)
	s, err = ForSession(r.d, r.cfg, r.project)
	require.NoError(t, err)
	assert.LessOrEqual(t, len([]rune(s)), 500)
}

func TestProjectRoot(t *testing.T) {
	r := newRig(t)
	sub := filepath.Join(r.project, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	assert.Equal(t, r.project, store.ProjectRoot(sub))
	assert.Equal(t, r.project, store.ProjectRoot(r.project))
	plain := t.TempDir()
	assert.Equal(t, plain, store.ProjectRoot(plain), "no repository: the directory itself")
	assert.Equal(t, "", store.ProjectRoot(""))
	assert.Equal(t, `C:\Users\me\repo`, store.ProjectRoot(`C:\Users\me\repo`), "a Windows cwd read on Linux is not joined to ours")
	assert.Equal(t, "rel/dir", store.ProjectRoot("rel/./dir"))
}

func TestWritersMatchConfig(t *testing.T) {
	assert.Equal(t, config.GuidanceWriters, WriterNames())
	_, err := ParseWriters("agents, bogus")
	assert.ErrorContains(t, err, `unknown writer "bogus"`)
	ws, err := ParseWriters(" cursor,agents,cursor ")
	require.NoError(t, err)
	assert.Len(t, ws, 2)
}

// A publication whose profile version was overtaken while it synthesized
// writes nothing over the newer one; Publish then publishes the newest.
func TestStalePublicationWritesNothing(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents"
	r.add(t, r.mockGuard())
	old, err := r.store.Load()
	require.NoError(t, err)
	_, err = r.store.Reset()
	require.NoError(t, err)
	ws, err := ParseWriters(r.cfg.Writers)
	require.NoError(t, err)
	_, err = publishProfile(context.Background(), r.d, r.cfg, ws, old, os.Getenv)
	require.ErrorIs(t, err, errStale)
	assert.NoFileExists(t, r.path("AGENTS.md"))
	_, err = os.Stat(NarrativePath(r.d, NarrativeKey(r.project)))
	assert.True(t, os.IsNotExist(err))

	r.add(t, r.mockGuard())
	rep := r.publish(t)
	assert.Equal(t, []string{r.path("AGENTS.md")}, rep.Changed)
}

// Profile changes and publications racing from many workers leave one
// section holding the newest version's guidance and a journal that decodes.
func TestConcurrentPublications(t *testing.T) {
	r := newRig(t)
	r.cfg.Writers = "agents"
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := entry(store.ScopeProject, r.project, store.Guards, fmt.Sprintf("never break rule %d", i), 0.5, fmt.Sprintf("never break rule %d", i))
			_, err := r.store.Update("race", func(p *store.Profile) error {
				p.Entries = append(p.Entries, e)
				return nil
			})
			assert.NoError(t, err)
			_, err = Publish(context.Background(), r.d, r.cfg, os.Getenv)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	agents := read(t, r.path("AGENTS.md"))
	assert.Equal(t, 1, strings.Count(agents, BeginMarker))
	for i := range 8 {
		assert.Contains(t, agents, fmt.Sprintf("NEVER break rule %d.", i), "the newest version has every entry")
	}
	j, err := readJournal(r.d)
	require.NoError(t, err)
	assert.Equal(t, Active, j.Targets[r.path("AGENTS.md")].State)
	p, err := r.store.Load()
	require.NoError(t, err)
	assert.Equal(t, p.Version, j.Targets[r.path("AGENTS.md")].Version)
}

// readJournal loads the journal (tests) without locking (it is replaced
// atomically). A journal never written is empty.
func readJournal(d xdg.Dirs) (*Journal, error) {
	j := &Journal{}
	if err := statefile.ReadJSON(JournalPath(d), j); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	j.init()
	return j, nil
}
