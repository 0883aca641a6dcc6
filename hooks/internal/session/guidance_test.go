package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/store"
)

// A starting session learns that candidates wait in one line, once a day,
// and never what they say; a resumed one and a subagent get no notice.
func TestGuidanceNoticeOfCandidates(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	cfg := config.Default().Guidance
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.Local)
	_, err := store.Open(store.Dir(d)).Update("ingest s1", func(p *store.Profile) error {
		store.Merge(p, store.Batch{Session: "s1", Project: repo, At: at, Observations: []store.Observation{{
			Dimension: store.Guards, Text: "never use tabs", Confidence: 0.6,
			Evidence: []store.Evidence{{Session: "s1", UUID: "u1", Timestamp: at, Quote: "never use tabs"}}}}})
		return nil
	})
	require.NoError(t, err)

	resume := &hookio.Input{Common: hookio.Common{Cwd: repo}, Source: "resume"}
	text, notice, err := Guidance(d, cfg, resume, at)
	require.NoError(t, err)
	assert.Empty(t, text+notice, "a resumed session has it already")
	text, err = SubagentGuidance(d, cfg, &hookio.Input{Common: hookio.Common{Cwd: repo}})
	require.NoError(t, err)
	assert.Empty(t, text)

	start := &hookio.Input{Common: hookio.Common{Cwd: repo}, Source: "startup"}
	text, notice, err = Guidance(d, cfg, start, at)
	require.NoError(t, err)
	assert.Empty(t, text, "no rule is confirmed")
	assert.Equal(t, "synaxi learned 1 thing it may apply from now on — /synaxi:review", notice)
	_, notice, err = Guidance(d, cfg, start, at.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, notice, "at most once a day")
	_, notice, err = Guidance(d, cfg, start, at.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Contains(t, notice, "/synaxi:review")

	cfg.SessionStart = false
	text, notice, err = Guidance(d, cfg, start, at.Add(48*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, text+notice, "guidance.session_start = false says nothing")
}
