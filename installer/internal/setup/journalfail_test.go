package setup

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/fakes"
	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/internal/xdg"
)

// TestJournalFailureLeavesNoUnrecordedChange makes the journal unwritable
// from its nth save on, for every n up to a run that needs no failure. Each
// failed install must stop with the journal's error, and uninstall (from
// whatever journal reached the disk) must give back the home directory
// byte for byte: a change the journal could not hold was never made.
func TestJournalFailureLeavesNoUnrecordedChange(t *testing.T) {
	errFull := errors.New("no space left on device")
	for n := 1; ; n++ {
		saves := 0
		saveJournal = func(j *journal.Journal, dir string) error {
			saves++
			if saves >= n {
				return errFull
			}
			return j.Save(dir)
		}
		e := newEnv(t)
		require.NoError(t, os.MkdirAll(e.claudeDir, 0o755))
		// A gateway in settings: --route also writes proxy.upstream.
		settingsFile := "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo mine\"},\n  \"model\": \"opus\",\n  \"env\": {\"ANTHROPIC_BASE_URL\": \"https://gateway.corp.example\"}\n}\n"
		require.NoError(t, os.WriteFile(filepath.Join(e.claudeDir, "settings.json"), []byte(settingsFile), 0o644))
		journalDir := filepath.Join(".local", "share", "synaxi", "install")
		before := e.snapshot(t, journalDir)

		e.opts.Route = true
		err := Install(context.Background(), e.opts)
		saveJournal = (*journal.Journal).Save
		if err == nil {
			assert.Less(t, n, 40, "install saves its journal a bounded number of times")
			require.Greater(t, n, 10, "every step was tried with a failing journal")
			t.Logf("install saves its journal %d times; each one failed in turn", n-1)
			return
		}
		require.ErrorIs(t, err, errFull, "n=%d: %s", n, e.out.String())
		assert.Contains(t, err.Error(), "record the change in the install journal")

		e.out.Reset()
		err = Uninstall(context.Background(), e.opts)
		require.NoError(t, err, "n=%d: %s", n, e.out.String())
		after := e.snapshot(t, journalDir)
		require.Equal(t, before, after, "n=%d: uninstall after a journal failure leaves something behind\n%s", n, e.out.String())
	}
}

type env struct {
	home, claudeDir string
	opts            Options
	out             *bytes.Buffer
}

// newEnv is a home of its own with the XDG directories under it (state
// elsewhere), stand-ins for the built binaries and a synaxi checkout.
func newEnv(t *testing.T) *env {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("SYNAXI_CLAUDE", "")
	for k, v := range map[string]string{"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_CACHE_HOME": ".cache"} {
		t.Setenv(k, filepath.Join(home, v))
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	build, repo := filepath.Join(work, "build"), filepath.Join(work, "repo")
	require.NoError(t, fakes.BinSource(build, Binaries))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".claude-plugin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".claude-plugin", "marketplace.json"), []byte(`{"name":"synaxi"}`), 0o644))
	e := &env{home: home, claudeDir: filepath.Join(home, ".claude"), out: &bytes.Buffer{}}
	e.opts = Options{BinSource: build, RepoRoot: repo, Out: e.out}
	t.Cleanup(func() { fakes.StopProxy(xdg.Resolve()) })
	return e
}

// snapshot maps every file and directory under HOME, but those under
// skip, to its bytes.
func (e *env) snapshot(t *testing.T, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.home, p)
		switch {
		case rel == skip || strings.HasPrefix(rel, skip+string(filepath.Separator)):
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		case d.IsDir() && rel != ".":
			out[rel+"/"] = ""
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
