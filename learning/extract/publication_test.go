package extract_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/extract"
	"github.com/synaxi/synaxi/learning/pipeline"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// TestLabelledSetPublishedWithoutAcceptance is issue 19's publication
// precision: with learning.publish = "reinforced", the embedded extractor
// over the hand-labelled development set (shared/fixtures/learning) puts
// nothing into SessionStart that a labeller marked task, question, pasted
// or other. Every entry published without the user's acceptance must rest
// only on quotes of turns labelled durable. The set is read twice: as it
// is (each session in its own repository) and as if all its sessions were
// one repository's, which gives reinforcement across sessions its widest
// chance. -v prints how many candidates there were and how many were
// published.
func TestLabelledSetPublishedWithoutAcceptance(t *testing.T) {
	dir := filepath.Join(filepath.Dir(extract.SharedFixtures(t)), "learning")
	files, label := extract.Labelled(t, dir)
	for _, tc := range []struct{ name, project string }{{"own repositories", ""}, {"one repository", "/repo"}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
			profiles := store.Open(store.Dir(d))
			learn := &pipeline.Pipeline{Store: profiles, Reinforced: true}
			for _, f := range files {
				_, err := learn.Ingest(context.Background(), filepath.Join(dir, f), pipeline.Options{Project: tc.project})
				require.NoError(t, err, f)
			}
			p, err := profiles.Load()
			require.NoError(t, err)
			published, wrong := 0, 0
			for _, project := range append([]string{""}, publish.Projects(p)...) {
				for _, e := range p.Published(project) {
					if project != "" && e.Scope == store.ScopeGlobal {
						continue // counted with the global scope
					}
					published++
					for _, ev := range e.Evidence {
						if label[ev.UUID] != "durable" {
							wrong++
							t.Errorf("published without acceptance from a turn labelled %q: %s %q (quote %q)", label[ev.UUID], e.Dimension, e.Text, ev.Quote)
						}
					}
				}
			}
			_, err = publish.Publish(context.Background(), d, config.Default().Guidance, func(string) string { return "" })
			require.NoError(t, err)
			for _, project := range publish.Projects(p) {
				text, err := publish.ForSession(d, config.Default().Guidance, project)
				require.NoError(t, err)
				for _, e := range p.Entries {
					if e.State == store.Candidate {
						assert.NotContains(t, text, "["+e.ID+"]", "a candidate reached SessionStart")
					}
				}
			}
			t.Logf("%s: %d entries learned, %d published without acceptance, %d of them resting on a non-durable turn",
				tc.name, len(p.Entries), published, wrong)
		})
	}
}
