package setup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/installer/internal/journal"
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
		settingsFile := "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo mine\"},\n  \"model\": \"opus\"\n}\n"
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
		for _, d := range []string{".local/share/synaxi/", ".local/share/", ".local/"} {
			if _, ok := before[d]; !ok {
				delete(after, d)
			}
		}
		require.Equal(t, before, after, "n=%d: uninstall after a journal failure leaves something behind\n%s", n, e.out.String())
	}
}
