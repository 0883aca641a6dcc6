package setup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// Uninstall retracts the guidance published into a project's files, byte
// for byte, install journal or not; the learned profile stays.
func TestUninstallRetractsPublishedGuidance(t *testing.T) {
	for _, installed := range []bool{true, false} {
		t.Run(map[bool]string{true: "installed", false: "no install journal"}[installed], func(t *testing.T) {
			e := newEnv(t)
			d := xdg.Resolve()
			project := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
			agents := filepath.Join(project, "AGENTS.md")
			mine := "# House rules\n\nkeep it simple"
			require.NoError(t, os.WriteFile(agents, []byte(mine), 0o644))

			ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			text := "don't mock the database"
			profiles := store.Open(store.Dir(d))
			_, err := profiles.Update("test", func(p *store.Profile) error {
				p.Entries = append(p.Entries, store.Entry{ID: store.NewID(store.ScopeProject, project, store.Guards, text),
					Scope: store.ScopeProject, Project: project, Dimension: store.Guards, Text: text, Weight: 0.7,
					Count: 1, Sessions: []string{"s-1"}, FirstSeen: ts, LastSeen: ts,
					State: store.Confirmed, ConfirmedBy: store.ByUser, ConfirmedAt: ts,
					Evidence: []store.Evidence{{Session: "s-1", UUID: "u-1", Timestamp: ts, Quote: "no, " + text}}})
				return nil
			})
			require.NoError(t, err)
			cfg := config.Default().Guidance
			cfg.Writers = "agents,cursor"
			rep, err := publish.Publish(context.Background(), d, cfg, os.Getenv)
			require.NoError(t, err)
			require.Len(t, rep.Changed, 2)
			require.FileExists(t, filepath.Join(project, ".cursor", "rules", "synaxi.mdc"))

			if installed {
				require.NoError(t, Install(context.Background(), e.opts))
			}
			require.NoError(t, Uninstall(context.Background(), e.opts))
			got, err := os.ReadFile(agents)
			require.NoError(t, err)
			assert.Equal(t, mine, string(got))
			assert.NoDirExists(t, filepath.Join(project, ".cursor"))
			assert.Contains(t, e.out.String(), "guidance: removed synaxi's section from "+agents)
			_, err = os.Stat(publish.NarrativePath(d, publish.NarrativeKey(project)))
			assert.True(t, os.IsNotExist(err), "the SessionStart narrative is gone too")
			p, err := profiles.Load()
			require.NoError(t, err)
			assert.Len(t, p.Entries, 1, "the profile is the user's data and stays")
		})
	}
}
