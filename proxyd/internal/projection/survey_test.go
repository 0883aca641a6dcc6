package projection

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
	"github.com/synaxi/synaxi/proxyd/internal/projection/cachesim"
)

// surveyBug is a module's marked bug: its fix needs Delta from m01.go.
var surveyBug = regexp.MustCompile(`(?m)^.*// BUG: .*$`)

// surveyFiles is e2e's survey scaled to n modules of ~6 KB, a bug in
// every bugEvery-th one (e2e/projection_test.go writeSurveyRepoN).
func surveyFiles(n, bugEvery int) map[string]string {
	files := map[string]string{}
	for i := 1; i <= n; i++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package mods\n\n// Module %02d computes its part of the survey.\n", i)
		if i == 1 {
			sb.WriteString("const Delta = 7 // the correction every broken function needs\n")
		}
		for j := 0; sb.Len() < 6000; j++ {
			if i%bugEvery == 0 && j == 20 {
				fmt.Fprintf(&sb, "func M%02dBroken(x int) int { return x - 1 } // BUG: must add Delta (m01.go)\n", i)
				continue
			}
			fmt.Fprintf(&sb, "func M%02dF%02d(x int) int { return x*%d + %d } // step %d of module %d\n", i, j, j+1, i, j, i)
		}
		files[surveyPath(i)] = sb.String()
	}
	return files
}

func surveyPath(i int) string { return fmt.Sprintf("/w/mods/m%02d.go", i) }

// surveyShown is what a request shows of the survey: each module's
// content from its Read results, with the Edits after them applied (as
// e2e's fake upstream sees it), and all its text.
func surveyShown(body []byte) (map[string]string, string) {
	reads, edits := map[string]string{}, map[string]gjson.Result{}
	content := map[string]string{}
	var all strings.Builder
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		m.Get("content").ForEach(func(_, c gjson.Result) bool {
			switch c.Get("type").String() {
			case "tool_use":
				switch c.Get("name").String() {
				case "Read":
					reads[c.Get("id").String()] = c.Get("input.file_path").String()
				case "Edit":
					edits[c.Get("id").String()] = c.Get("input")
				}
			case "tool_result":
				s := c.Get("content").String()
				if c.Get("content").IsArray() {
					s = c.Get("content.0.text").String()
				}
				id := c.Get("tool_use_id").String()
				if p, ok := reads[id]; ok && strings.Contains(s, "package mods") {
					content[p] = s
				}
				if e, ok := edits[id]; ok {
					p := e.Get("file_path").String()
					if cur, ok := content[p]; ok {
						content[p] = strings.Replace(cur, e.Get("old_string").String(), e.Get("new_string").String(), 1)
					}
				}
				all.WriteString(s)
			case "text":
				all.WriteString(c.Get("text").String())
			}
			return true
		})
		return true
	})
	return content, all.String()
}

// surveyNext is e2e's scripted agent (surveyAgentN): it fixes a visible
// bug with Delta when m01.go's content is visible (else reads m01.go
// again), reads the next module it has no trace of, runs the check, and
// stops when it passes; nil when done.
func surveyNext(body []byte, n int, lastResult string) map[string]any {
	content, all := surveyShown(body)
	for i := 1; i <= n; i++ {
		c, ok := content[surveyPath(i)]
		if !ok {
			continue
		}
		if line := surveyBug.FindString(c); line != "" {
			if !strings.Contains(content[surveyPath(1)], "const Delta = 7") {
				return map[string]any{"name": "Read", "input": map[string]any{"file_path": surveyPath(1)}}
			}
			line = line[strings.Index(line, "\t")+1:]
			fixed := strings.Replace(strings.Replace(line, "x - 1", "x + 7", 1), "// BUG: must add Delta (m01.go)", "// fixed", 1)
			return map[string]any{"name": "Edit", "input": map[string]any{"file_path": surveyPath(i), "old_string": line, "new_string": fixed}}
		}
	}
	for i := 1; i <= n; i++ {
		if _, ok := content[surveyPath(i)]; !ok && !strings.Contains(all, "Read "+surveyPath(i)) {
			return map[string]any{"name": "Read", "input": map[string]any{"file_path": surveyPath(i)}}
		}
	}
	if strings.Contains(lastResult, "ALL CHECKS PASS") {
		return nil
	}
	return map[string]any{"name": "Bash", "input": map[string]any{"command": "sh /w/check.sh"}}
}

// surveyRun is one survey session: its requests, the reads of m01.go and
// the billed-equivalent input of what was sent upstream.
type surveyRun struct {
	requests, deltaReads int
	billed               float64
}

// runSurveyMain runs the survey as a main session (a real Claude Code
// main session's system prompt and tools), the agent acting on what each
// request shows: the body as the client sends it (projected false) or as
// the engine serves it with the default configuration.
func runSurveyMain(t *testing.T, n, bugEvery int, projected bool) surveyRun {
	t.Helper()
	files := surveyFiles(n, bugEvery)
	var b map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(capturedBody(t, "main-first"), &b))
	var first []map[string]any
	require.NoError(t, json.Unmarshal(b["messages"], &first))
	first[0]["content"].([]any)[1].(map[string]any)["text"] = "Survey every module under /w/mods, fix every BUG with Delta from m01.go, then run sh /w/check.sh"
	msgs := []map[string]any{first[0]}
	eng := New(FromConfig(config.Default().Projection))
	sim := cachesim.New(0, func(b []byte) int { return len(b) / 4 })
	var run surveyRun
	last := ""
	for step := range 4 * n {
		for _, m := range msgs { // the client's breakpoint: the last block
			for _, c := range m["content"].([]any) {
				delete(c.(map[string]any), "cache_control")
			}
		}
		lc := msgs[len(msgs)-1]["content"].([]any)
		lc[len(lc)-1].(map[string]any)["cache_control"] = map[string]any{"type": "ephemeral"}
		raw, err := json.Marshal(msgs)
		require.NoError(t, err)
		b["messages"] = raw
		body, err := json.Marshal(b)
		require.NoError(t, err)
		if projected {
			r, err := eng.ProjectBody(context.Background(), body, "")
			require.NoError(t, err)
			body = r.Body
		}
		u, err := sim.Request(body, time.Time{})
		require.NoError(t, err)
		run.requests++
		run.billed += u.BilledEquivalent()
		call := surveyNext(body, n, last)
		if call == nil {
			return run
		}
		id := fmt.Sprintf("toolu_%03d", step)
		call["type"], call["id"] = "tool_use", id
		in := call["input"].(map[string]any)
		switch call["name"] {
		case "Read":
			p := in["file_path"].(string)
			if p == surveyPath(1) {
				run.deltaReads++
			}
			var sb strings.Builder
			for k, l := range strings.Split(strings.TrimSuffix(files[p], "\n"), "\n") {
				fmt.Fprintf(&sb, "%6d\t%s\n", k+1, l)
			}
			last = sb.String()
		case "Edit":
			p := in["file_path"].(string)
			files[p] = strings.Replace(files[p], in["old_string"].(string), in["new_string"].(string), 1)
			last = "The file " + p + " has been updated successfully."
		case "Bash":
			last = "ALL CHECKS PASS\n"
			for i := 1; i <= n; i++ {
				if strings.Contains(files[surveyPath(i)], "BUG:") {
					last = surveyPath(i) + "\nCHECK FAILED\n"
				}
			}
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Working."}, call}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": last}}})
	}
	t.Fatalf("the survey did not end in %d requests", run.requests)
	return run
}

// TestSurveyMainSessionKeepsTheFileItsFixesUse: e2e's 60-module, 6-bug
// survey (TestProjectionMainSessionDefault) run against the engine
// without the client: each fix copies Delta's value from m01.go, read
// once at the start. The edits name Delta, which only m01.go defines, so
// the projection keeps m01.go in view (see refer) and the agent never
// reads it again: as many requests as the unprojected session, and less
// billed input. (Before refer: 73 requests, m01.go read 6 times.) The
// survey passes through its reads (pass.go): each module read is folded
// after its next turn and no rebuild writes it (×0.385 billed; ×0.529
// before that rule, and 69 requests with it but without the hold at an
// edit's turn, when a rebuild kept a module as it was before its fix).
func TestSurveyMainSessionKeepsTheFileItsFixesUse(t *testing.T) {
	direct := runSurveyMain(t, 60, 10, false)
	routed := runSurveyMain(t, 60, 10, true)
	t.Logf("direct %+v, projected %+v: requests ×%.2f, billed ×%.3f", direct, routed,
		float64(routed.requests)/float64(direct.requests), routed.billed/direct.billed)
	assert.Equal(t, 1, direct.deltaReads)
	assert.Equal(t, 1, routed.deltaReads, "m01.go stays in view")
	assert.Equal(t, direct.requests, routed.requests)
	assert.Less(t, routed.billed, 0.42*direct.billed, "measured ×0.385")
}
