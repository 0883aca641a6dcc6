package trim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestStageTakenOnce(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	st := &Stage{Project: "/w/p", Session: "s1", Created: now, Expires: now.Add(time.Hour), Block: "# block", Tokens: 3}
	require.NoError(t, Save(d, st))
	fi, err := os.Stat(StagePath(d, "/w/p/"))
	require.NoError(t, err, "the project path is cleaned")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	other, err := Take(d, "/w/other", now)
	require.NoError(t, err)
	assert.Nil(t, other, "another project's start gets nothing")

	got, err := Take(d, "/w/p", now.Add(time.Minute))
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "# block", got.Block)
	again, err := Take(d, "/w/p", now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Nil(t, again, "given once")
}

func TestStageExpired(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	require.NoError(t, Save(d, &Stage{Project: "/w/p", Expires: now.Add(time.Hour), Block: "x"}))
	got, err := Take(d, "/w/p", now.Add(time.Hour))
	require.NoError(t, err)
	assert.Nil(t, got)
	assert.NoFileExists(t, StagePath(d, "/w/p"), "an expired stage is removed")

	require.NoError(t, Save(d, &Stage{Project: "/w/p", Expires: now.Add(time.Hour), Block: "x"}))
	had, err := Cancel(d, "/w/p")
	require.NoError(t, err)
	assert.True(t, had)
	had, err = Cancel(d, "/w/p")
	require.NoError(t, err)
	assert.False(t, had)
	assert.Equal(t, 0, Prune(d, time.Hour, now), "the lock file is fresh")
	assert.Equal(t, 1, Prune(d, time.Hour, time.Now().Add(2*time.Hour)), "the stale lock file goes")
	entries, _ := os.ReadDir(filepath.Dir(StagePath(d, "/w/p")))
	assert.Empty(t, entries)
}

// FuzzCollect feeds arbitrary transcript bytes through the collector and
// the renderer: no panic, and the same input gives the same block.
func FuzzCollect(f *testing.F) {
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"fix it"}}` + "\n"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"/x","offset":-5,"limit":9e99}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a"}]},"toolUseResult":{"file":{"numLines":"x"}}}` + "\n"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e","name":"Edit","input":{"file_path":"/x"}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"e"}]},"toolUseResult":{"structuredPatch":[{"newStart":-3,"newLines":-9}]}}` + "\n"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"q","name":"AskUserQuestion","input":{}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"q"}]},"toolUseResult":{"questions":[{"question":"a.b*?"}],"answers":{"a.b*?":"yes"}}}` + "\n"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"b","name":"Bash","input":{"command":"cd x &&"}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"b","is_error":true,"content":"\n\n"}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		collect := func() string {
			set, err := Collect(transcript.NewReader(strings.NewReader(string(data))), nil)
			require.NoError(t, err)
			return Render(set, 3000)
		}
		assert.Equal(t, collect(), collect())
	})
}
