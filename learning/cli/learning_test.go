package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/queue"
	"github.com/synaxi/synaxi/learning/screen"
	"github.com/synaxi/synaxi/learning/store"
)

const mClaude = "../extract/testdata/m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl"

func TestSessionsOldestFirstWithoutSubagents(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "-repo")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "s1", "subagents"), 0o700))
	for i, name := range []string{"new.jsonl", "old.jsonl", "agent-a1.jsonl", "s1/subagents/agent-b.jsonl"} {
		p := filepath.Join(proj, name)
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
		mt := time.Now().Add(-time.Duration(i) * time.Hour)
		require.NoError(t, os.Chtimes(p, mt, mt))
	}
	got, err := Sessions(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(proj, "old.jsonl"), filepath.Join(proj, "new.jsonl")}, got)
}

func TestProgressBarOnATerminal(t *testing.T) {
	defer func(d time.Duration) { barThrottle = d }(barThrottle)
	barThrottle = 0 // draw every step, however fast the machine
	root := t.TempDir()
	data, err := os.ReadFile(mClaude)
	require.NoError(t, err)
	var files []string
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(root, n+".jsonl")
		require.NoError(t, os.WriteFile(p, bytes.ReplaceAll(data, []byte("c76e5be5-ffd2-4901-a935-885527c83a61"), []byte(n)), 0o600))
		files = append(files, p)
	}
	var out, errb bytes.Buffer
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data"), Config: filepath.Join(root, "config")}
	e := Env{Dirs: d, Config: config.Default(), Getenv: func(string) string { return "" }, Out: &out, Err: &errb, Terminal: true}
	sum, err := Ingest(context.Background(), e, IngestOptions{Files: files})
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Learned)
	assert.Contains(t, errb.String(), "(2/3)")
	assert.Contains(t, out.String(), "3 transcript(s): 3 learned from")

	errb.Reset()
	e.Terminal = false
	_, err = Ingest(context.Background(), e, IngestOptions{Files: files})
	require.NoError(t, err)
	assert.Empty(t, errb.String(), "no bar when stderr is not a terminal")
}

func TestStatusListsTheNewestDeadLetters(t *testing.T) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data")}
	q := queue.Open(d.StatePath("ingest"))
	for i := range 13 {
		j, err := q.Add(queue.Job{Session: fmt.Sprintf("s%02d", i), Transcript: "/gone.jsonl"})
		require.NoError(t, err)
		_, err = q.Fail(j, errors.New("transcript does not exist"), true, 5, time.Second, time.Now())
		require.NoError(t, err)
	}
	j, err := q.Add(queue.Job{Session: "later", Transcript: "/x.jsonl"})
	require.NoError(t, err)
	_, err = q.Fail(j, errors.New("endpoint down"), false, 5, time.Hour, time.Now())
	require.NoError(t, err)
	var out bytes.Buffer
	Status(&out, Env{Dirs: d, Config: config.Default()})
	assert.Contains(t, out.String(), "1 queued (1 retrying), 13 dead letter(s); next retry due ")
	assert.Contains(t, out.String(), "3 older ones not listed")
	assert.NotContains(t, out.String(), "session s02 ")
	assert.Contains(t, out.String(), "session s03 ")
	assert.Contains(t, out.String(), "session s12 ")
}

func TestStatusCountsTheGatesDrops(t *testing.T) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data")}
	var out bytes.Buffer
	Status(&out, Env{Dirs: d, Config: config.Default()})
	assert.NotContains(t, out.String(), "safety gate", "nothing dropped, nothing said")
	require.NoError(t, xdg.Ensure(d.StatePath("ingest")))
	require.NoError(t, screen.AddCounts(d.StatePath("ingest", screen.CountsFile), screen.Counts{SecretsDropped: 2}, time.Now()))
	require.NoError(t, screen.AddCounts(d.StatePath("ingest", screen.CountsFile), screen.Counts{SecretsDropped: 1}, time.Now()))
	out.Reset()
	Status(&out, Env{Dirs: d, Config: config.Default()})
	assert.Regexp(t, `safety gate\s+3 candidate\(s\) dropped whole for carrying a secret \(never stored\), 0 flagged dangerous`, out.String())
}

// Every prune is reported (issue 24: the profile emptied and nothing said
// so).
func TestStatusReportsPrunes(t *testing.T) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data")}
	e := Env{Dirs: d, Config: config.Default()}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	_, err := e.store().Update("test", func(p *store.Profile) error {
		p.Pruned = []store.Pruned{{ID: "abc", Dimension: store.Workflow, Text: "run the linter", Project: "/a", At: at, Why: "faded"}}
		return nil
	})
	require.NoError(t, err)
	var out bytes.Buffer
	Status(&out, e)
	assert.Contains(t, out.String(), "1 candidate(s) pruned after you had seen them")
	assert.Contains(t, out.String(), "“run the linter” (faded)")
}

// A damaged profile.json: status names the command, and `synaxi profile
// rollback` restores the last good version; history lists the versions.
func TestRollbackRestoresADamagedProfile(t *testing.T) {
	root := t.TempDir()
	d := xdg.Dirs{State: filepath.Join(root, "state"), Data: filepath.Join(root, "data")}
	var out, errb bytes.Buffer
	e := Env{Dirs: d, Config: config.Default(), Getenv: func(string) string { return "" }, Out: &out, Err: &errb}
	_, err := e.store().Update("first", func(p *store.Profile) error {
		p.Pruned = []store.Pruned{{ID: "abc", Text: "run the linter", Why: "faded"}}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(e.store().Path(), []byte("{torn"), 0o600))
	Status(&out, e)
	assert.Contains(t, out.String(), "`synaxi profile rollback` restores v1, the last good version")
	out.Reset()
	require.NoError(t, History(e))
	assert.Contains(t, out.String(), "first")
	out.Reset()
	require.NoError(t, Change(context.Background(), e, "rollback", nil))
	assert.Contains(t, out.String(), "profile v2 (rollback)")
	p, err := e.store().Load()
	require.NoError(t, err)
	assert.Len(t, p.Pruned, 1, "the last good version's content is back")
}
