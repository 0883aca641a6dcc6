package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/tokens"
	"github.com/synaxi/synaxi/internal/transcript"
	"github.com/synaxi/synaxi/internal/trim"
)

var (
	panelFiles = flag.String("panel", "", "comma-separated transcripts: measure trim against Claude Code's summary at each compaction")
	panelOut   = flag.String("panel-out", "", "with -panel: write the Markdown table here")
)

// nextRequests is how many main-chain requests after a compaction are
// looked at.
const nextRequests = 30

// point is one real compaction: what trim would have carried from the
// records before it, what Claude Code's summary carried, and what the
// next requests used.
type point struct {
	file, session string
	line          int    // the summary record's line
	before        int64  // prompt tokens of the last request before it
	trimmed       string // the block trim renders from the records before
	summary       string // Claude Code's compaction summary
	requests      int    // requests looked at (≤ nextRequests)
	compactor     int64  // prompt tokens of Claude Code's compaction request (its acompact agent file), 0 unknown
	empty         bool   // nothing of the summarized conversation is in this file
	files         itemUse
	commands      itemUse
	instructions  itemUse
}

// itemUse counts items used after the compaction: all of them, those seen
// before it (the only ones either side could carry), and of those the ones
// each side carried.
type itemUse struct{ used, before, trim, summary int }

func (u *itemUse) add(o itemUse) {
	u.used += o.used
	u.before += o.before
	u.trim += o.trim
	u.summary += o.summary
}

// compactionPoints measures every compaction of the transcript at path.
func compactionPoints(t *testing.T, path string) []point {
	t.Helper()
	recs := readAll(t, path)
	var out []point
	for i, rec := range recs {
		if !rec.IsCompactSummary || rec.IsSidechain {
			continue
		}
		out = append(out, measure(path, recs, i))
	}
	// Spotter's sessions keep the compaction request in
	// <session>/subagents/agent-acompact-*.jsonl, one per compaction.
	agents, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-acompact-*.jsonl"))
	if len(agents) == 1 && len(out) == 1 {
		for _, rec := range readAll(t, agents[0]) {
			if rec.Message != nil {
				out[0].compactor = max(out[0].compactor, rec.Message.Usage.PromptTokens())
			}
		}
	}
	return out
}

func readAll(t *testing.T, path string) []*transcript.Record {
	r, err := transcript.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var recs []*transcript.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		require.NoError(t, err)
		recs = append(recs, rec)
	}
}

// measure builds the point of the summary at recs[at]. The records before
// it are what trim reads (a compact_boundary record just before it is
// Claude Code's own and changes nothing), with the typed turns as `synaxi
// trim` takes them (typedTurns).
func measure(path string, recs []*transcript.Record, at int) point {
	typedOf := typedTurns(path, io.Discard)
	c := trim.NewCollector(typedOf)
	seenFiles, seenCmds := map[string]bool{}, map[string]bool{}
	var typed []string
	for _, rec := range recs[:at] {
		c.Add(rec)
		if rec.IsSidechain || rec.AgentID != "" {
			continue
		}
		for _, u := range toolUses(rec) {
			if p := u.path; p != "" {
				seenFiles[p] = true
			}
			if k := trim.CommandKey(u.command); k != "" {
				seenCmds[k] = true
			}
		}
		if text, ok := transcript.HumanText(rec); ok && text != "" {
			if typedOf != nil {
				text, ok = typedOf(rec, text)
			}
			if ok && text != "" {
				typed = append(typed, text)
			}
		}
	}
	set := c.Set()
	p := point{file: filepath.Base(path), session: recs[at].SessionID, line: recs[at].Line,
		before: set.ContextNow, trimmed: trim.Render(set, 0), summary: summaryText(recs[at]), empty: set.ToolCalls == 0}

	ids := map[string]bool{}
	usedFiles, usedCmds := map[string]bool{}, map[string]bool{}
	var fileOrder, cmdOrder []string
	for _, rec := range recs[at+1:] {
		if rec.Type != transcript.TypeAssistant || rec.IsSidechain || rec.AgentID != "" || rec.Message == nil {
			continue
		}
		id := rec.Message.ID
		if id == "" {
			id = rec.UUID
		}
		if !ids[id] {
			if len(ids) == nextRequests {
				break
			}
			ids[id] = true
		}
		for _, u := range toolUses(rec) {
			if u.path != "" && !usedFiles[u.path] {
				usedFiles[u.path] = true
				fileOrder = append(fileOrder, u.path)
			}
			if k := trim.CommandKey(u.command); k != "" && !usedCmds[k] {
				usedCmds[k] = true
				cmdOrder = append(cmdOrder, k)
			}
		}
	}
	p.requests = len(ids)
	for _, f := range fileOrder {
		p.files.add(score(seenFiles[f], p, func(text string) bool { return mentionsFile(text, f, set.Cwd) }))
	}
	for _, k := range cmdOrder {
		p.commands.add(score(seenCmds[k], p, func(text string) bool { return standsAlone(text, k) }))
	}
	for _, ins := range typed {
		words := contentWords(ins)
		if len(words) == 0 {
			continue
		}
		p.instructions.add(score(true, p, func(text string) bool { return covers(text, words) }))
	}
	return p
}

// score counts one used item: carried by a side when it was seen before
// the compaction and that side's text holds it.
func score(before bool, p point, holds func(string) bool) itemUse {
	u := itemUse{used: 1}
	if !before {
		return u
	}
	u.before = 1
	if holds(p.trimmed) {
		u.trim = 1
	}
	if holds(p.summary) {
		u.summary = 1
	}
	return u
}

type toolUse struct{ path, command string }

// toolUses lists the file paths and shell commands of rec's tool calls.
func toolUses(rec *transcript.Record) []toolUse {
	if rec.Type != transcript.TypeAssistant || rec.Message == nil {
		return nil
	}
	var out []toolUse
	for _, b := range rec.Message.Blocks() {
		if b.Type != "tool_use" {
			continue
		}
		in := gjson.ParseBytes(b.Input)
		switch b.Name {
		case "Read", "Edit", "MultiEdit", "Write", "NotebookEdit":
			p := in.Get("file_path").String()
			if p == "" {
				p = in.Get("notebook_path").String()
			}
			out = append(out, toolUse{path: p})
		case "Bash":
			out = append(out, toolUse{command: in.Get("command").String()})
		}
	}
	return out
}

func summaryText(rec *transcript.Record) string {
	var parts []string
	for _, b := range rec.Message.Blocks() {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// mentionsFile reports whether text names the file: its path relative to
// cwd, or its base name standing alone.
func mentionsFile(text, path, cwd string) bool {
	if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") && strings.Contains(text, rel) {
		return true
	}
	return standsAlone(text, filepath.Base(path))
}

// standsAlone reports whether text holds s not inside a longer name (a
// period may follow it: the end of a sentence).
func standsAlone(text, base string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], base)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(base)
		if (j == 0 || !nameChar(text[j-1])) && (end == len(text) || !nameChar(text[end]) || text[end] == '.') {
			return true
		}
		i = j + 1
	}
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

var word = regexp.MustCompile(`[\pL\pN_]{4,}`)

// contentWords are the distinct words of at least four letters of s,
// lower-cased.
func contentWords(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range word.FindAllString(strings.ToLower(s), -1) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// covers reports whether text holds at least 60% of words: an instruction
// counts as carried when most of its words are there, verbatim or in a
// paraphrase that keeps them.
func covers(text string, words []string) bool {
	lower := strings.ToLower(text)
	n := 0
	for _, w := range words {
		if strings.Contains(lower, w) {
			n++
		}
	}
	return n*10 >= len(words)*6
}

// table renders points as the bench section's table, with a total row.
func table(points []point) string {
	var b strings.Builder
	b.WriteString("| session | summary at line | context before | compaction request | requests | files used (seen before): trim / summary | commands used (seen before): trim / summary | typed turns: trim / summary | tokens: trim / summary |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- |\n")
	var tf, tc, ti itemUse
	var tt, ts, n int
	var left []string
	for _, p := range points {
		if p.empty {
			left = append(left, fmt.Sprintf("%s line %d", short(p.file), p.line))
			continue
		}
		n++
		tkT, tkS := tokens.Estimate(p.trimmed), tokens.Estimate(p.summary)
		comp := "—"
		if p.compactor > 0 {
			comp = fmt.Sprint(p.compactor)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %s | %s | %s | %d / %d |\n", short(p.file), p.line, p.before, comp, p.requests,
			cell(p.files, true), cell(p.commands, true), cell(p.instructions, false), tkT, tkS)
		tf.add(p.files)
		tc.add(p.commands)
		ti.add(p.instructions)
		tt += tkT
		ts += tkS
	}
	fmt.Fprintf(&b, "| **all %d** | | | | | %s | %s | %s | %d / %d |\n", n, cell(tf, true), cell(tc, true), cell(ti, false), tt, ts)
	if len(left) > 0 {
		fmt.Fprintf(&b, "\nLeft out (the conversation its summary covers is in an earlier file, so there is nothing before it to trim): %s.\n", strings.Join(left, ", "))
	}
	return b.String()
}

func cell(u itemUse, withUsed bool) string {
	if withUsed {
		return fmt.Sprintf("%d (%d): %d / %d", u.used, u.before, u.trim, u.summary)
	}
	return fmt.Sprintf("%d: %d / %d", u.before, u.trim, u.summary)
}

func short(name string) string {
	name = strings.TrimSuffix(name, ".jsonl")
	if len(name) > 8 && name[8] == '-' {
		return name[:8]
	}
	return name
}

// TestCompactionPanel writes the bench section's table for the
// transcripts -panel names (scripts/bench.d/trim-panel.sh). It lives
// beside `synaxi trim` because it measures what that command stages: the
// typed turns through the learning loop's reader.
func TestCompactionPanel(t *testing.T) {
	if *panelFiles == "" {
		t.Skip("no -panel transcripts")
	}
	var points []point
	for _, f := range strings.Split(*panelFiles, ",") {
		ps := compactionPoints(t, f)
		require.NotEmpty(t, ps, "%s has no compaction", f)
		points = append(points, ps...)
	}
	out := table(points)
	if *panelOut == "" {
		t.Log("\n" + out)
		return
	}
	require.NoError(t, os.WriteFile(*panelOut, []byte(out), 0o600))
}

// The repository's copy of a real 2.1.39 session (internal/transcript's
// testdata) compacted once: the figures of its point are a golden file,
// so a change to what trim carries shows in review.
func TestCompactionPointOfRealSession(t *testing.T) {
	path := "../../../internal/transcript/testdata/claude-code-sessions/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
	points := compactionPoints(t, path)
	require.Len(t, points, 1)
	p := points[0]
	assert.Equal(t, nextRequests, p.requests)
	assert.Positive(t, p.files.before)
	got := table(points)
	golden := "testdata/trim-panel-258c7280.md"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o600))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to write it")
	assert.Equal(t, string(want), got)
	assert.True(t, slices.Contains(strings.Split(p.trimmed, "\n"), "## Standing directives"))
}

func TestPanelMatching(t *testing.T) {
	assert.True(t, mentionsFile("Modified annotation.ex (added source)", "/w/lib/annotation.ex", "/w"))
	assert.True(t, mentionsFile("- lib/annotation.ex: 3-9", "/w/lib/annotation.ex", "/w"))
	assert.True(t, mentionsFile("see annotation.ex.", "/w/lib/annotation.ex", "/w"))
	assert.False(t, mentionsFile("annotation_ref.ex and my_annotation.ex", "/w/lib/annotation.ex", "/w"))
	assert.True(t, standsAlone("ran `mix test` twice", "mix test"))
	assert.False(t, standsAlone("the files and tools", "ls"))
	words := contentWords("Never commit without signing, not the SSH key")
	assert.Equal(t, []string{"never", "commit", "without", "signing"}, words)
	assert.True(t, covers("The user said: never commit without signing", words))
	assert.False(t, covers("commit it", words))
}
