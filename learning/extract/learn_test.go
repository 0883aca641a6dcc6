package extract

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synaxi/synaxi/learning/read"
	"github.com/synaxi/synaxi/learning/screen"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/learning/redact"
	"github.com/synaxi/synaxi/learning/store"
)

// sharedFixtures finds shared/fixtures/claude-code-sessions above the
// working directory (beside a checkout or a worktree), or at
// $SYNAXI_FIXTURES.
func sharedFixtures(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("SYNAXI_FIXTURES"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		p := filepath.Join(dir, "shared", "fixtures", "claude-code-sessions")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skip("shared/fixtures not found above the checkout; set SYNAXI_FIXTURES")
		}
		dir = filepath.Dir(dir)
	}
}

// fixtureFiles is every transcript kept in this repository plus every one
// of the shared fixtures, subagents and m-claude included.
func fixtureFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, root := range []string{"testdata", "../../internal/transcript/testdata", sharedFixtures(t)} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return err
		})
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, len(files), 14)
	return files
}

// humanTurns re-reads a transcript independently of Doc and returns each
// human-typed record's scrubbed text by uuid.
func humanTurns(t *testing.T, path string) map[string]string {
	r, err := transcript.Open(path)
	require.NoError(t, err)
	defer r.Close()
	out := map[string]string{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if text, ok := transcript.HumanText(rec); ok {
			out[rec.UUID] = redact.Text(text)
		}
	}
}

func TestEveryQuoteIsInAHumanTurn(t *testing.T) {
	total := 0
	for _, f := range fixtureFiles(t) {
		t.Run(f, func(t *testing.T) {
			d, err := read.Read(f, 0)
			require.NoError(t, err)
			obs, err := Embedded{}.Extract(context.Background(), d, nil)
			require.NoError(t, err)
			kept, rejected := Validate(d, obs)
			assert.Empty(t, rejected, "the embedded extractor only quotes human turns")
			human := humanTurns(t, f)
			for _, o := range kept {
				for _, ev := range o.Evidence {
					text, ok := human[ev.UUID]
					require.True(t, ok, "quote %q cites %s, which is not a human-typed turn", ev.Quote, ev.UUID)
					assert.Contains(t, text, ev.Quote)
					assert.Equal(t, d.Session, ev.Session)
					total++
				}
			}
			if strings.Contains(f, "/subagents/") {
				assert.Empty(t, kept, "a subagent transcript has no human turns")
			}
		})
	}
	assert.Positive(t, total)
}

// readOnce reads and extracts a fixture once per test binary.
var readOnce = func() func(t *testing.T, path string) (*read.Doc, []store.Observation) {
	type done struct {
		d    *read.Doc
		kept []store.Observation
	}
	cache := map[string]done{}
	return func(t *testing.T, path string) (*read.Doc, []store.Observation) {
		if c, ok := cache[path]; ok {
			return c.d, c.kept
		}
		d, err := read.Read(path, 0)
		require.NoError(t, err)
		obs, err := Embedded{}.Extract(context.Background(), d, nil)
		require.NoError(t, err)
		kept, _ := Validate(d, obs)
		cache[path] = done{d, kept}
		return d, kept
	}
}()

func TestLabelledCorrectionsAreCaptured(t *testing.T) {
	fixtures := sharedFixtures(t)
	f, err := os.Open("testdata/fixtures.tsv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 4, line)
		lineNo, err := strconv.Atoi(cols[1])
		require.NoError(t, err)
		n++
		t.Run(fmt.Sprintf("%s:%d", filepath.Base(cols[0]), lineNo), func(t *testing.T) {
			d, kept := readOnce(t, filepath.Join(fixtures, cols[0]))
			for _, o := range kept {
				for _, ev := range o.Evidence {
					if d.Turn(ev.UUID).Line != lineNo {
						continue
					}
					if cols[2] == "-" && (ev.Quote == cols[3] || !strings.Contains(cols[3], " ")) {
						t.Errorf("learned %s %q from line %d, which says nothing durable", o.Dimension, o.Text, lineNo)
						return
					}
					if cols[2] != "-" && ev.Quote == cols[3] {
						assert.Equal(t, cols[2], o.Dimension)
						return
					}
				}
			}
			if cols[2] != "-" {
				t.Errorf("not captured: %q (line %d)", cols[3], lineNo)
			} else {
				turn := false
				for _, tr := range d.Turns {
					turn = turn || (tr.Line == lineNo && strings.Contains(tr.Text, cols[3]))
				}
				assert.True(t, turn, "line %d is a human turn saying %q", lineNo, cols[3])
			}
		})
	}
	assert.GreaterOrEqual(t, n, 12)
}

// session builds a transcript from (type, text) pairs; "user" is a typed
// turn, "assistant" text, "bash" a tool call, "fail" a failing result,
// "raw" a whole JSON line.
func session(t *testing.T, id, cwd string, parts ...[2]string) string {
	t.Helper()
	var b strings.Builder
	ts := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i, p := range parts {
		ts = ts.Add(time.Minute)
		common := fmt.Sprintf(`"uuid":"u%d","sessionId":%q,"cwd":%q,"timestamp":%q`, i, id, cwd, ts.Format(time.RFC3339Nano))
		text, _ := json.Marshal(p[1])
		switch p[0] {
		case "user":
			fmt.Fprintf(&b, `{"type":"user",%s,"message":{"role":"user","content":%s}}`+"\n", common, text)
		case "assistant":
			fmt.Fprintf(&b, `{"type":"assistant",%s,"message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`+"\n", common, text)
		case "bash":
			fmt.Fprintf(&b, `{"type":"assistant",%s,"message":{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":%s}}]}}`+"\n", common, i, text)
		case "fail":
			fmt.Fprintf(&b, `{"type":"user",%s,"toolUseResult":"x","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","is_error":true,"content":%s}]}}`+"\n", common, i-1, text)
		case "raw":
			b.WriteString(p[1] + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), id+".jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

func extract(t *testing.T, path string) ([]store.Observation, *read.Doc) {
	t.Helper()
	d, err := read.Read(path, 0)
	require.NoError(t, err)
	obs, err := Embedded{}.Extract(context.Background(), d, nil)
	require.NoError(t, err)
	kept, _ := Validate(d, obs)
	return kept, d
}

func TestEmbeddedRules(t *testing.T) {
	tests := []struct {
		typed, dim, text string
	}{
		{"no, use pnpm instead of npm", store.Workflow, "use pnpm instead of npm"},
		{"don't add comments to every function", store.Guards, "don't add comments to every function"},
		{"stop running the whole test suite after each edit", store.Guards, "stop running the whole test suite after each edit"},
		{"you forgot to run the linter again", store.AIFailures, "you forgot to run the linter again"},
		{"we use tabs, not spaces", store.CodeStyle, "we use tabs, not spaces"},
		{"from now on, answer in English", store.Guards, "from now on, answer in English"},
		{"I prefer early returns over nested ifs", store.CodeStyle, "I prefer early returns over nested ifs"},
		{"please keep answers short, I prefer concise replies", store.Communication, "please keep answers short, I prefer concise replies"},
		{"I'm a senior Go developer", store.Expertise, "I'm a senior Go developer"},
		{"nein, bitte keine Kommentare im Code", store.Guards, "bitte keine Kommentare im Code"},
		{"jamais de force push sur main", store.Guards, "jamais de force push sur main"},
		{"nunca hagas commit sin tests", store.Guards, "nunca hagas commit sin tests"},
		{"no, don't mock the database in the tests", store.Guards, "don't mock the database in the tests"},
		{"nope, stop force pushing my branches", store.Guards, "stop force pushing my branches"},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			kept, _ := extract(t, session(t, "s1", "/repo", [2]string{"bash", "git push"}, [2]string{"user", tt.typed}))
			require.NotEmpty(t, kept)
			assert.Equal(t, tt.dim, kept[0].Dimension)
			assert.Equal(t, tt.text, kept[0].Text)
			assert.Equal(t, "after the assistant ran git push", kept[0].Evidence[0].Context)
		})
	}
}

func TestRepeatedToolFailures(t *testing.T) {
	kept, _ := extract(t, session(t, "s1", "/repo",
		[2]string{"bash", "make"}, [2]string{"fail", "error 1"},
		[2]string{"bash", "make"}, [2]string{"fail", "error 1"},
		[2]string{"bash", "make"}, [2]string{"fail", "error 1"},
		[2]string{"user", "stop, read the Makefile first"}))
	dims := map[string]string{}
	for _, o := range kept {
		dims[o.Dimension] = o.Text
	}
	assert.Equal(t, "kept retrying failing Bash calls instead of stopping to rethink", dims[store.AIFailures])
	assert.NotContains(t, dims, store.Guards, "reading the Makefile first is this task's next step, not a rule")
}

// One-off orders, questions, hedges and menu answers teach nothing, even
// right after an action and even when they look like rules.
func TestOneOffTurnsTeachNothing(t *testing.T) {
	for _, typed := range []string{
		"that's wrong, the port is 8080",
		"don't push yet, I want to review first",
		"skip the tests for now",
		"stop the server",
		"don't touch that file",
		"no, stop",
		"I think we should investigate the login bug before touching the UI.",
		"use docker compose to start it this time",
		"run the migration script",
		"sign the commit and run the pre-commit hooks",
		"run the tests and the linter",
		"perfect",
		"2",
		"did the tests pass?",
	} {
		t.Run(typed, func(t *testing.T) {
			kept, _ := extract(t, session(t, "s1", "/repo", [2]string{"bash", "git push"}, [2]string{"user", typed}))
			assert.Empty(t, kept)
		})
	}
}

func TestTriggersNotApprovals(t *testing.T) {
	kept, _ := extract(t, session(t, "s1", "/repo",
		[2]string{"bash", "go test ./..."}, [2]string{"user", "perfect"},
		[2]string{"bash", "git push --force"}, [2]string{"user", "NO, never force push"},
		[2]string{"user", "perfect"}, // nothing happened before it: nothing learned
	))
	var got []string
	for _, o := range kept {
		got = append(got, o.Dimension+": "+o.Text)
	}
	assert.Equal(t, []string{
		// A bare "perfect" is not learned: it says nothing the next
		// session could act on.
		"guards: never force push",
		"triggers: reacts strongly when the assistant runs git push",
	}, got)
}

var update = flag.Bool("update", false, "rewrite the golden files")

// TestMClaudeGolden pins what the embedded extractor learns from the
// m-claude fixture; run with -update after an intended change and review
// the diff.
func TestMClaudeGolden(t *testing.T) {
	kept, d := extract(t, "testdata/m-claude/c76e5be5-ffd2-4901-a935-885527c83a61.jsonl")
	type row struct {
		Line      int    `json:"line"`
		Dimension string `json:"dimension"`
		Text      string `json:"text"`
		Quote     string `json:"quote"`
		Context   string `json:"context,omitempty"`
	}
	var rows []row
	for _, o := range kept {
		ev := o.Evidence[0]
		rows = append(rows, row{d.Turn(ev.UUID).Line, o.Dimension, o.Text, ev.Quote, ev.Context})
	}
	got, err := json.MarshalIndent(rows, "", "  ")
	require.NoError(t, err)
	golden := "testdata/m-claude.golden.json"
	if *update {
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run the test with -update to create it")
	assert.Equal(t, string(want), string(got)+"\n")
}

// Peers' memory pollution: rules mined from the client's own injected turns.
func TestInjectedTurnsTeachNothing(t *testing.T) {
	injected := []string{
		`<system-reminder>never use tabs, always run the linter</system-reminder>`,
		`<command-name>/review</command-name><command-args>never commit on friday</command-args>`,
		`<local-command-stdout>always use pnpm</local-command-stdout>`,
		`<task-notification><summary>Don't touch the schema</summary></task-notification>`,
		`<teammate-message teammate_id="x">never push to main</teammate-message>`,
		`<user-prompt-submit-hook>always answer in French</user-prompt-submit-hook>`,
		`This session is being continued from a previous conversation. The user said: never use mocks.`,
		`[Request interrupted by user for tool use] never do that`,
	}
	parts := [][2]string{}
	for _, s := range injected {
		parts = append(parts, [2]string{"user", s})
	}
	parts = append(parts,
		[2]string{"raw", `{"type":"user","uuid":"m","isMeta":true,"message":{"role":"user","content":"never skip tests"}}`},
		[2]string{"raw", `{"type":"user","uuid":"c","isCompactSummary":true,"message":{"role":"user","content":"always use docker"}}`},
		[2]string{"raw", `{"type":"user","uuid":"sc","isSidechain":true,"message":{"role":"user","content":"never use tabs"}}`},
		[2]string{"raw", `{"type":"user","uuid":"tr","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"always use tabs"}]}}`},
		[2]string{"assistant", "I will never use tabs. Always run the tests."},
	)
	kept, d := extract(t, session(t, "s1", "/repo", parts...))
	assert.Empty(t, d.Turns)
	assert.Empty(t, kept)
}

// Peers' memory pollution: a dead-end hypothesis is not saved as a fact.
func TestHypothesesAreNotFacts(t *testing.T) {
	kept, d := extract(t, session(t, "s1", "/repo",
		[2]string{"user", "maybe the bug is in the parser, never mind the cache"},
		[2]string{"user", "should we always use the cache?"},
		[2]string{"user", "it might be the tokenizer, so always check it first"},
	))
	assert.Empty(t, kept)
	// A model that proposes one is rejected too.
	_, rej := Validate(d, []store.Observation{{Dimension: store.Values, Text: "the bug is in the parser",
		Evidence: []store.Evidence{{UUID: "u0", Quote: "maybe the bug is in the parser"}}}})
	require.Len(t, rej, 1)
	assert.Contains(t, rej[0].Reason, "hypothesis")
}

func TestValidateRejectsUngrounded(t *testing.T) {
	_, d := extract(t, session(t, "sess", "/repo",
		[2]string{"assistant", "never use tabs"},
		[2]string{"user", "no, use pnpm instead of npm"}))
	cases := map[string]store.Observation{
		"quote from assistant": {Dimension: store.Guards, Text: "never use tabs", Evidence: []store.Evidence{{UUID: "u0", Quote: "never use tabs"}}},
		"quote not in turn":    {Dimension: store.Guards, Text: "never use yarn", Evidence: []store.Evidence{{UUID: "u1", Quote: "never use yarn"}}},
		"no evidence":          {Dimension: store.Workflow, Text: "uses pnpm"},
		"unknown dimension":    {Dimension: "mood", Text: "x", Evidence: []store.Evidence{{UUID: "u1", Quote: "use pnpm"}}},
		"guard off its quote":  {Dimension: store.Guards, Text: "deploy fridays only", Evidence: []store.Evidence{{UUID: "u1", Quote: "use pnpm"}}},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			kept, rej := Validate(d, []store.Observation{o})
			assert.Empty(t, kept)
			assert.Len(t, rej, 1)
		})
	}
	kept, _ := Validate(d, []store.Observation{{Dimension: store.Workflow, Text: "uses pnpm",
		Evidence: []store.Evidence{{Session: "forged", UUID: "u1", Quote: "use pnpm", Timestamp: time.Unix(0, 0)}}}})
	require.Len(t, kept, 1)
	assert.Equal(t, "sess", kept[0].Evidence[0].Session, "session comes from the transcript")
	assert.Equal(t, d.Turns[0].Timestamp, kept[0].Evidence[0].Timestamp)
}

func TestDangerousCandidatesAreFlagged(t *testing.T) {
	kept, c := screen.Candidates([]store.Observation{
		{Dimension: store.Guards, Text: "always run rm -rf build before testing", Evidence: []store.Evidence{{Quote: "always run rm -rf build before testing"}}},
		{Dimension: store.Guards, Text: "never force push", Evidence: []store.Evidence{{Quote: "never force push"}}},
	})
	require.Len(t, kept, 2)
	assert.Equal(t, 1, c.DangerousFlagged)
	assert.Equal(t, []store.Flag{{Kind: store.FlagDangerous, Reason: "recursive delete"}}, kept[0].Flags, "the rm -rf rule is flagged")
	assert.Empty(t, kept[1].Flags, "a prohibition of force pushing is a safe rule")
}

func TestBadTranscripts(t *testing.T) {
	dir := t.TempDir()
	good := session(t, "s1", "/repo", [2]string{"user", "hello"}, [2]string{"user", "never use tabs"})
	data, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), read.ErrMissing},
		{"truncated", write("trunc.jsonl", data[:len(data)-20]), read.ErrTruncated},
		{"binary", write("bin.jsonl", []byte("\x7fELF\x00\x01\x02garbage\n")), read.ErrBinary},
		{"not json", write("text.jsonl", []byte("hello\nworld\n")), read.ErrEmpty},
		{"empty", write("empty.jsonl", nil), read.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read.Read(tt.path, 0)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.path)
		})
	}
	_, err := read.Read(good, 10)
	require.ErrorIs(t, err, read.ErrTooLarge)
	assert.Contains(t, err.Error(), "ingest.max_transcript_mb")
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"type":"user","uuid":"a","message":{"role":"user","content":"no, never use tabs"}}` + "\n"))
	f.Add([]byte("\x00\x01"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"git push"}}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, in, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := read.Read(p, 1<<20)
		if err != nil {
			return
		}
		obs, _ := Embedded{}.Extract(context.Background(), d, nil)
		kept, _ := Validate(d, obs)
		for _, o := range kept {
			for _, ev := range o.Evidence {
				if !d.Grounded(ev.UUID, ev.Quote) {
					t.Fatalf("ungrounded quote kept: %q", ev.Quote)
				}
			}
		}
	})
}

// A statement the user repeats from an earlier session reinforces what was
// learned there, even without a marker; nothing is learned from it when
// nothing was, or when the only evidence is this same session.
func TestRepeatedAcrossSessions(t *testing.T) {
	known := []store.Entry{{ID: "w1", Scope: store.ScopeGlobal, Dimension: store.Workflow,
		Text: "run pre-commit actions, gitleaks", Evidence: []store.Evidence{{Session: "earlier", Quote: "run pre-commit actions, gitleaks"}}}}
	path := session(t, "s2", "/repo", [2]string{"bash", "ls"}, [2]string{"user", "run the pre-commit actions and gitleaks"})
	d, err := read.Read(path, 0)
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		known []store.Entry
		want  int
	}{
		{"learned before", known, 1},
		{"never learned", nil, 0},
		{"only this session", []store.Entry{{ID: "w1", Dimension: store.Workflow, Text: known[0].Text,
			Evidence: []store.Evidence{{Session: "s2", Quote: "x"}}}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := Embedded{}.Extract(context.Background(), d, tt.known)
			require.NoError(t, err)
			kept, _ := Validate(d, obs)
			require.Len(t, kept, tt.want)
			if tt.want == 1 {
				assert.Equal(t, store.Workflow, kept[0].Dimension)
				assert.Equal(t, "run pre-commit actions, gitleaks", kept[0].Text)
				assert.Equal(t, "run the pre-commit actions and gitleaks", kept[0].Evidence[0].Quote)
			}
		})
	}
}
