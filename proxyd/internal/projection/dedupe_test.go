package projection

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

func fileLines(tag string, n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%s line %d: some code", tag, i+1)
	}
	return numbered(lines)
}

func bashPair(id, cmd, out string) []obj {
	return []obj{assistant(toolUse(id, "Bash", obj{"command": cmd})), user(toolResult(id, out, false))}
}

// servedResult is the content text of the served tool_result for id.
func servedResult(t *testing.T, body []byte, id string) string {
	t.Helper()
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		for _, b := range m.Get("content").Array() {
			if b.Get("type").String() == "tool_result" && b.Get("tool_use_id").String() == id {
				return b.Get("content").String()
			}
		}
	}
	t.Fatalf("no tool_result for %s", id)
	return ""
}

// projectSeq projects every prefix ending in a user message, as a running
// proxy sees the conversation, checks each request (valid, same bytes from
// a fresh engine, previous prefix re-served except the sanctioned re-fold)
// and returns the last one.
func projectSeq(t *testing.T, cfg Config, msgs []obj) *Result {
	t.Helper()
	warm := New(cfg)
	var prev []byte
	var res *Result
	for n := 2; n <= len(msgs); n++ {
		if msgs[n-1]["role"] != "user" {
			continue
		}
		r, err := warm.ProjectBody(context.Background(), reqBody(msgs[:n]), "")
		require.NoError(t, err)
		require.NoError(t, validate.Request(r.Body), "request %d", n)
		require.Equal(t, string(project(t, cfg, msgs[:n]).Body), string(r.Body), "request %d: a fresh engine serves the same bytes", n)
		if prev != nil && !r.Reprojected {
			require.Equal(t, -1, validate.PrefixBreak(prev, r.Body), "request %d: unsanctioned prefix change", n)
		}
		prev, res = r.Body, r
	}
	return res
}

func TestIdenticalRereadBecomesReferenceAtRefold(t *testing.T) {
	content := fileLines("a", 80)
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", content)...)
	msgs = append(msgs, bashPair("toolu_2", "go vet ./...", "ok")...)
	msgs = append(msgs, readPair("toolu_3", "/w/a.go", content)...)

	// The current turn is served in full.
	cur := projectSeq(t, Config{AlwaysEngage: true}, msgs)
	assert.Equal(t, content, servedResult(t, cur.Body, "toolu_3"))

	// At the re-fold it becomes a reference naming the earlier result.
	msgs = append(msgs, bashPair("toolu_4", "go test ./...", "ok")...)
	res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
	ref := servedResult(t, res.Body, "toolu_3")
	assert.Contains(t, ref, "byte-identical")
	assert.Contains(t, ref, "toolu_1")
	assert.Contains(t, ref, "Read /w/a.go")
	assert.Equal(t, content, servedResult(t, res.Body, "toolu_1"), "the earlier copy is served verbatim")
	assert.Equal(t, 1, strings.Count(string(res.Body), "a line 80: some code"), "the content is served once")
	f := res.Visibility.Files["/w/a.go"]
	require.NotEmpty(t, f.Visible)
	assert.Equal(t, 1, f.Visible[0].Start)
	assert.Equal(t, 80, f.Visible[0].End)
	assert.False(t, f.Evicted)

	// Identical command output is referenced the same way.
	out := strings.Repeat("PASS some/package 0.01s\n", 20) // under the output cap
	msgs = append(msgs, bashPair("toolu_5", "go test ./...", out)...)
	msgs = append(msgs, bashPair("toolu_6", "go test ./...", out)...)
	msgs = append(msgs, bashPair("toolu_7", "git status", "clean")...)
	res = projectSeq(t, Config{AlwaysEngage: true}, msgs)
	assert.Contains(t, servedResult(t, res.Body, "toolu_6"), "tool_use_id toolu_5")
	assert.Equal(t, out, servedResult(t, res.Body, "toolu_5"))
}

func TestChangedResultIsNotReferenced(t *testing.T) {
	before, after := fileLines("a", 80), fileLines("b", 80)
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", before)...)
	msgs = append(msgs, readPair("toolu_2", "/w/a.go", after)...)
	msgs = append(msgs, readPair("toolu_3", "/w/a.go", before)...) // changed back: the latest copy differs
	msgs = append(msgs, readPair("toolu_4", "/w/b.go", before)...) // same text, another file
	msgs = append(msgs, bashPair("toolu_5", "go test ./...", "ok")...)
	res := projectSeq(t, Config{AlwaysEngage: true}, msgs)
	assert.Equal(t, after, servedResult(t, res.Body, "toolu_2"))
	assert.Equal(t, before, servedResult(t, res.Body, "toolu_3"))
	assert.Equal(t, before, servedResult(t, res.Body, "toolu_4"))
}

func TestEvictedCopyIsNotReferenced(t *testing.T) {
	big := fileLines("big", 300)
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/big.go", big)...)
	for i := range 60 {
		id := fmt.Sprintf("toolu_o%02d", i)
		msgs = append(msgs, readPair(id, fmt.Sprintf("/w/other%02d.go", i), fileLines(id, 200))...)
	}
	mid := project(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, msgs)
	require.True(t, mid.Visibility.Files["/w/big.go"].Evicted, "the setup evicts the first read")
	// The re-read's curated form is taken at the next request; when that
	// request happens to re-project, it folds the re-read instead, so a
	// command or two before the re-read moves the re-projection.
	var res *Result
	for pad := range 3 {
		seq := slices.Clone(msgs)
		for i := range pad {
			seq = append(seq, bashPair(fmt.Sprintf("toolu_pad%d", i), "git status", "clean")...)
		}
		seq = append(seq, readPair("toolu_again", "/w/big.go", big)...)
		// The next call names the file: the re-read is not one the
		// session passes through (pass.go).
		seq = append(seq, assistant(toolUse("toolu_next", "Read", obj{"file_path": "/w/big.go", "offset": 1, "limit": 5})),
			user(toolResult("toolu_next", fileLines("big", 5), false)))
		if res = projectSeq(t, Config{BudgetTokens: 8000, AlwaysEngage: true}, seq); !res.Reprojected {
			break
		}
	}
	require.False(t, res.Reprojected)
	assert.Equal(t, big, servedResult(t, res.Body, "toolu_again"), "no copy is served, so the re-read stays in full")
}

func TestSnapshotCopyIsReferencedBySyntheticID(t *testing.T) {
	content := fileLines("a", 60)
	msgs := []obj{user(text("goal"))}
	msgs = append(msgs, readPair("toolu_1", "/w/a.go", content)...)
	// One command's changing output grows the tail until a re-projection
	// pays; the world (a.go and that command) fits the budget, so a.go
	// survives into the snapshot. The re-projection is the last request,
	// so the next two do not re-project again.
	cfg := Config{BudgetTokens: 8000, AlwaysEngage: true}
	var mid *Result
	for i := 0; mid == nil || !mid.Reprojected; i++ {
		require.Less(t, i, 200, "no re-projection")
		msgs = append(msgs, bashPair(fmt.Sprintf("toolu_b%03d", i), "go test ./...", fmt.Sprintf("run %d\n%s", i, fileLines(fmt.Sprint(i), 30)))...)
		mid = project(t, cfg, msgs)
	}
	assert.NotContains(t, string(mid.Body), `"toolu_1"`, "the first read was folded into the snapshot")
	msgs = append(msgs, readPair("toolu_3", "/w/a.go", content)...)
	msgs = append(msgs, bashPair("toolu_4", "git status", "clean")...)
	res := projectSeq(t, cfg, msgs)
	require.Equal(t, reprojections(mid), reprojections(res), "no re-projection since")
	got := servedResult(t, res.Body, "toolu_3")
	assert.Contains(t, got, "byte-identical")
	assert.Contains(t, got, "toolu_syn", "the copy it names is the snapshot's")
	assert.Equal(t, 1, strings.Count(string(res.Body), "a line 60: some code"), "served once, in the snapshot")
	assert.Equal(t, 60, res.Visibility.Files["/w/a.go"].Visible[0].End)
}

func reprojections(r *Result) string {
	_, after, _ := strings.Cut(r.Stats.Note, "reprojections=")
	n, _, _ := strings.Cut(after, " ")
	return n
}

func TestCallLabel(t *testing.T) {
	for _, tc := range []struct{ tool, input, want string }{
		{"Read", `{"file_path":"/w/a#b.go"}`, "Read /w/a#b.go"},
		{"Read", `{"file_path":"/w/a.go","offset":10,"limit":20}`, "Read /w/a.go (offset 10, limit 20)"},
		{"Read", `{"file_path":"/w/a.go","limit":20}`, "Read /w/a.go (offset none, limit 20)"},
		{"Bash", `{"command":"go test ./..."}`, "Bash `go test ./...`"},
		{"Grep", `{"pattern":"func"}`, `Grep {"pattern":"func"}`},
	} {
		assert.Equal(t, tc.want, callLabel(tc.tool, gjson.Parse(tc.input)))
	}
}
