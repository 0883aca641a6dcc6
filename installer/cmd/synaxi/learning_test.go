package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/queue"
)

// mClaude is the repository's copy of the m-claude fixture.
const mClaude = "../../../learning/extract/testdata/m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl"

func learningHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	for _, v := range []string{"STATE", "DATA", "CONFIG", "CACHE"} {
		t.Setenv("XDG_"+v+"_HOME", filepath.Join(home, strings.ToLower(v)))
	}
	return home
}

// claudeProject lays a transcript out as Claude Code does: the m-claude
// session rewritten to run in repo, under ~/.claude/projects/<enc>/.
func claudeProject(t *testing.T, home, repo, session string) string {
	data, err := os.ReadFile(mClaude)
	require.NoError(t, err)
	data = bytes.ReplaceAll(data, []byte("c76e5be5-ffd2-4901-a935-885527c83a61"), []byte(session))
	cwd, _ := json.Marshal(repo)
	data = bytes.ReplaceAll(data, []byte(`"cwd":"C:\\Users\\Mischa"`), []byte(`"cwd":`+string(cwd)))
	dir := filepath.Join(home, ".claude", "projects", strings.ReplaceAll(repo, "/", "-"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, session, "subagents"), 0o700))
	p := filepath.Join(dir, session+".jsonl")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	// A subagent transcript is never read as a session of its own.
	require.NoError(t, os.WriteFile(filepath.Join(dir, session, "subagents", "agent-x.jsonl"), []byte("{}\n"), 0o600))
	return p
}

func TestIngestAndProfileCommands(t *testing.T) {
	home := learningHome(t)
	repoA, repoB := filepath.Join(home, "a"), filepath.Join(home, "b")
	for _, r := range []string{repoA, repoB} {
		require.NoError(t, os.MkdirAll(filepath.Join(r, ".git"), 0o700))
	}
	claudeProject(t, home, repoA, "sess-a")
	claudeProject(t, home, repoB, "sess-b")

	code, out, errs := runCLI(t, "profile", "show")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "nothing learned yet")

	// --dry-run shows what would be learned and saves nothing.
	code, out, errs = runCLI(t, "ingest", "--dry-run", "--project", repoA)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "sess-a\tguards: never commit without signing\n\t  “never commit without signing.” (message ")
	assert.Contains(t, out, "dry run: nothing saved")
	_, out, _ = runCLI(t, "profile", "history")
	assert.Contains(t, out, "no profile versions yet")

	// --project reads only that repository's sessions.
	require.NoError(t, os.MkdirAll(filepath.Join(repoA, "sub"), 0o700))
	code, out, errs = runCLI(t, "ingest", "--project", filepath.Join(repoA, "sub"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "1 transcript(s): 1 learned from")
	code, out, _ = runCLI(t, "profile", "export", "--json")
	require.Equal(t, 0, code)
	var exp struct {
		Version int
		Entries []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &exp))
	require.NotEmpty(t, exp.Entries)
	var signing map[string]any
	for _, e := range exp.Entries {
		for _, k := range []string{"scope", "dimension", "text", "weight", "count", "evidence"} {
			assert.Contains(t, e, k)
		}
		ev := e["evidence"].([]any)[0].(map[string]any)
		for _, k := range []string{"session", "uuid", "quote"} {
			assert.NotEmpty(t, ev[k])
		}
		if e["text"] == "never commit without signing" {
			signing = e
		}
	}
	require.NotNil(t, signing)
	assert.Equal(t, "project", signing["scope"])
	assert.Equal(t, repoA, signing["project"])

	// What was learned is a candidate: no session receives it yet.
	d := xdg.Resolve()
	text, err := publish.ForSession(d, config.Default().Guidance, repoA)
	require.NoError(t, err)
	assert.NotContains(t, text, "never commit without signing")
	assert.Equal(t, "candidate", signing["state"])

	// review --json lists it with its quote and the assistant message it
	// answered; accept publishes it, and the guidance cites the quote.
	code, out, errs = runCLI(t, "profile", "review", "--json")
	require.Equal(t, 0, code, errs)
	var list struct {
		Candidates []struct {
			ID, Text string
			Quotes   []struct{ Quote, Answered string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	idA := ""
	for _, c := range list.Candidates {
		if c.Text == "never commit without signing" {
			idA = c.ID
			require.NotEmpty(t, c.Quotes)
			assert.Equal(t, "never commit without signing.", c.Quotes[0].Quote)
			assert.NotEmpty(t, c.Quotes[0].Answered, "the assistant message the quote answered")
		}
	}
	require.NotEmpty(t, idA)
	code, out, errs = runCLI(t, "profile", "accept", idA)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(accept "+idA+")")
	text, err = publish.ForSession(d, config.Default().Guidance, repoA)
	require.NoError(t, err)
	assert.Contains(t, text, "never commit without signing.")
	code, out, _ = runCLI(t, "profile", "accept", idA)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "already accepted")

	// --all adds repo B: the same guard is a candidate there, not a
	// global rule (promotion takes the user); accept --global makes it one.
	code, out, errs = runCLI(t, "ingest", "--all")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "2 transcript(s): 1 learned from", "repo A's session is unchanged")
	code, out, _ = runCLI(t, "profile", "show")
	require.Equal(t, 0, code)
	assert.Regexp(t, `\S+\s+`+regexp.QuoteMeta(repoB)+` \(candidate\)\s+guards\s+\S+\s+1\s+never commit without signing`, out)
	text, _ = publish.ForSession(d, config.Default().Guidance, repoB)
	assert.NotContains(t, text, "never commit without signing")
	idB := strings.Fields(lineContaining(out, repoB+" (candidate)"))[0]
	code, _, errs = runCLI(t, "profile", "accept", "--global", idB)
	require.Equal(t, 0, code, errs)
	code, out, _ = runCLI(t, "profile", "show")
	require.Equal(t, 0, code)
	assert.Regexp(t, `\S+\s+global\s+guards\s+\S+\s+1\s+never commit without signing`, out)
	id := strings.Fields(lineContaining(out, "global"))[0]
	text, _ = publish.ForSession(d, config.Default().Guidance, filepath.Join(home, "elsewhere"))
	assert.Contains(t, text, "never commit without signing.", "a global rule applies in every repository")

	code, out, _ = runCLI(t, "profile", "history")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "v4 (current)", "listing candidates (review --json) marks them shown without a new version")
	assert.Contains(t, out, "ingest sess-b")
	assert.Contains(t, out, "accept "+idB+" as global")

	// exclude hides it from guidance, include brings it back.
	code, _, errs = runCLI(t, "profile", "exclude", id)
	require.Equal(t, 0, code, errs)
	text, _ = publish.ForSession(d, config.Default().Guidance, repoB)
	assert.NotContains(t, text, "never commit without signing.")
	code, _, _ = runCLI(t, "profile", "include", id)
	require.Equal(t, 0, code)
	text, _ = publish.ForSession(d, config.Default().Guidance, repoB)
	assert.Contains(t, text, "never commit without signing.")

	// edit puts it in the user's words; the quote stays.
	code, _, errs = runCLI(t, "profile", "edit", id, "never", "commit", "unsigned")
	require.Equal(t, 0, code, errs)
	_, out, _ = runCLI(t, "profile", "show")
	assert.Contains(t, lineContaining(out, id), "never commit unsigned")
	assert.Contains(t, out, "“never commit without signing.”")

	// rollback to v1: the acceptances and repo B's learning are gone again.
	code, out, _ = runCLI(t, "profile", "rollback", "1")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "(rollback)")
	text, _ = publish.ForSession(d, config.Default().Guidance, repoA)
	assert.NotContains(t, text, "never commit without signing.")

	// reject drops the candidate for good: reading the session again does
	// not learn it back.
	code, _, errs = runCLI(t, "profile", "reject", idA)
	require.Equal(t, 0, code, errs)
	code, out, errs = runCLI(t, "ingest", "--force", "--project", repoA)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(0 observations kept, 0 rejected as ungrounded, 1 you had rejected before)", "a rejected observation is not counted as kept")
	code, out, _ = runCLI(t, "profile", "show")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "never commit without signing")

	// forget deletes and reset empties; both are versions.
	code, out, _ = runCLI(t, "profile", "show")
	require.Equal(t, 0, code)
	if fields := strings.Fields(lineContaining(out, "(candidate)")); len(fields) > 0 {
		code, _, _ = runCLI(t, "profile", "forget", fields[0])
		require.Equal(t, 0, code)
	}
	code, _, _ = runCLI(t, "profile", "reset")
	require.Equal(t, 0, code)
	code, out, _ = runCLI(t, "profile", "export")
	require.Equal(t, 0, code)
	assert.Regexp(t, `^# synaxi profile v\d+\n$`, out)

	for _, bad := range [][]string{{"profile", "forget"}, {"profile", "edit", "x"}, {"profile", "rollback", "x"}, {"profile", "frob"}, {"profile"},
		{"profile", "accept"}, {"profile", "reject", "a", "b"}, {"profile", "review", "--frob"}} {
		code, _, _ = runCLI(t, bad...)
		assert.Equal(t, 2, code, bad)
	}
	code, _, errs = runCLI(t, "profile", "forget", "nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "synaxi profile show")
	code, _, errs = runCLI(t, "profile", "accept", "nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "synaxi profile review --json")
	for _, help := range [][]string{{"profile", "--help"}, {"profile", "-h"}, {"profile", "help"}} {
		code, out, _ = runCLI(t, help...)
		assert.Equal(t, 0, code, help)
		assert.Contains(t, out, "review [--json]", help)
	}
	code, out, _ = runCLI(t, "--help")
	assert.Equal(t, 0, code)
	for _, cmd := range []string{"review", "accept [--global] ID", "reject ID"} {
		assert.Contains(t, out, cmd, "synaxi --help lists the review commands")
	}
	code, _, errs = runCLI(t, "profile", "review")
	assert.Equal(t, 1, code, "no terminal in a test")
	assert.Contains(t, errs, "needs a terminal")
}

func lineContaining(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func TestIngestFilesAndDeadLettersInStatus(t *testing.T) {
	home := learningHome(t)
	q := queue.Open(xdg.Resolve().StatePath("ingest"))
	missing := filepath.Join(home, "gone.jsonl")
	j, err := q.Add(queue.Job{Session: "gone", Transcript: missing})
	require.NoError(t, err)
	_, err = q.Fail(j, os.ErrNotExist, true, 5, 0, j.Added)
	require.NoError(t, err)

	waiting, err := q.Add(queue.Job{Session: "waiting", Transcript: missing})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(q.Dir(), "drain.log"), []byte("old line\nconfig: ingest.extractor: must be embedded\n"), 0o600))
	code, out, _ := runCLI(t, "status")
	assert.Contains(t, out, "1 queued (0 retrying), 1 dead letter(s)")
	assert.Regexp(t, `last drain +config: ingest.extractor: must be embedded`, out)
	require.NoError(t, q.Done(waiting))
	assert.Contains(t, out, "session gone after 1 try: file does not exist (fix it, then `synaxi ingest "+missing+"`)")
	_ = code

	code, _, errs := runCLI(t, "ingest", missing)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "transcript does not exist")

	data, err := os.ReadFile(mClaude)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(missing, data, 0o600))
	code, out, errs = runCLI(t, "ingest", missing)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "1 transcript(s): 1 learned from")
	_, out, _ = runCLI(t, "status")
	assert.Contains(t, out, "0 dead letter(s)", "a fixed dead letter is cleared")
	assert.Regexp(t, `profile +v1: 1 entries from 1 sessions`, out)
	assert.Regexp(t, `review +1 candidate\(s\) wait for you; none is published before you accept it: `+"`synaxi profile review`", out)

	code, _, _ = runCLI(t, "ingest", "--all", missing)
	assert.Equal(t, 2, code)
}
