package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/e2e/claudecli"
	"github.com/synaxi/synaxi/e2e/fakeapi"
	"github.com/synaxi/synaxi/internal/visibility"
)

// The survey task: 24 modules of about 6 KB, four of them with a marked
// bug, a check script. Its working set (about 40K tokens) far exceeds the
// 8K-token budget the proxy is configured with.
const (
	surveyModules = 24
	surveyBudget  = 8000
)

var (
	bugLine   = regexp.MustCompile(`(?m)^.*// BUG: .*$`)
	deltaLine = regexp.MustCompile(`const Delta = (\d+)`)
)

// fileText is a file's content when the request shows all of it.
func fileText(v *fakeapi.View, path string) string {
	s, ok := v.FileContent(path)
	if !ok {
		return ""
	}
	return s
}

func writeSurveyRepo(t *testing.T, dir string) { writeSurveyRepoN(t, dir, surveyModules, 6) }

// writeSurveyRepoN writes the survey with n modules, a bug in every
// bugEvery-th one.
func writeSurveyRepoN(t *testing.T, dir string, n, bugEvery int) {
	t.Helper()
	mods := filepath.Join(dir, "mods")
	require.NoError(t, os.MkdirAll(mods, 0o755))
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
		require.NoError(t, os.WriteFile(filepath.Join(mods, fmt.Sprintf("m%02d.go", i)), []byte(sb.String()), 0o644))
	}
	check := "#!/bin/sh\nif grep -l 'BUG:' \"$(dirname \"$0\")\"/mods/*.go; then echo CHECK FAILED; exit 1; fi\necho ALL CHECKS PASS\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.sh"), []byte(check), 0o755))
}

// surveyAgent is the scripted model. It acts only on what the request
// shows: it fixes any visible bug (the fix needs Delta from m01.go: when
// m01.go's content is no longer visible it reads it again, deliberately),
// reads the next module it has no trace of (neither visible content nor a
// note that it was read and dropped), runs the check once everything is
// surveyed, re-reads a module the check names, and stops when the check
// passes.
func surveyAgent(dir string, reads map[string]int, mu *sync.Mutex) fakeapi.Agent {
	return surveyAgentN(dir, surveyModules, reads, mu)
}

// surveyAgentN is surveyAgent for a survey of n modules.
func surveyAgentN(dir string, n int, reads map[string]int, mu *sync.Mutex) fakeapi.Agent {
	mods := filepath.Join(dir, "mods")
	check := "sh " + filepath.Join(dir, "check.sh")
	decide := func(v *fakeapi.View) fakeapi.Reply {
		visible := v.VisibleText()
		path := func(i int) string { return filepath.Join(mods, fmt.Sprintf("m%02d.go", i)) }
		for i := 1; i <= n; i++ {
			content, ok := v.FileContent(path(i))
			if !ok {
				continue
			}
			if line := bugLine.FindString(content); line != "" {
				delta := deltaLine.FindStringSubmatch(fileText(v, path(1)))
				if delta == nil {
					return fakeapi.Reply{Text: "I need Delta from m01.go again", ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{"file_path": path(1)}}}}
				}
				fixed := strings.Replace(strings.Replace(line, "x - 1", "x + "+delta[1], 1), "// BUG: must add Delta (m01.go)", "// fixed", 1)
				return fakeapi.Reply{Text: "Fixing the bug in " + path(i), ToolUses: []fakeapi.ToolUse{{Name: "Edit",
					Input: map[string]any{"file_path": path(i), "old_string": line, "new_string": fixed}}}}
			}
		}
		for i := 1; i <= n; i++ {
			if _, ok := v.FileContent(path(i)); ok || strings.Contains(visible, "Read "+path(i)) {
				continue
			}
			return fakeapi.Reply{Text: "Surveying " + path(i), ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{"file_path": path(i)}}}}
		}
		if last, ok := v.LastToolResult(); ok && last.Name == "Bash" && strings.Contains(last.Result, "ALL CHECKS PASS") {
			return fakeapi.Reply{Text: "ALL CHECKS PASS: surveyed every module and fixed the bugs."}
		}
		if last, ok := v.LastToolResult(); ok && last.Name == "Bash" && strings.Contains(last.Result, "CHECK FAILED") {
			for _, l := range strings.Split(last.Result, "\n") {
				if strings.HasSuffix(l, ".go") {
					return fakeapi.Reply{Text: "Re-reading " + l + " to fix it", ToolUses: []fakeapi.ToolUse{{Name: "Read", Input: map[string]any{"file_path": l}}}}
				}
			}
		}
		return fakeapi.Reply{Text: "Running the check.", ToolUses: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]any{"command": check, "description": "run the check"}}}}
	}
	return fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
		r := decide(v)
		mu.Lock()
		defer mu.Unlock()
		for _, u := range r.ToolUses {
			if u.Name == "Read" {
				reads[u.Input["file_path"].(string)]++
			}
		}
		return r
	})
}

type surveyRun struct {
	requests, invalid int
	raw               int64
	billed            float64
	hit               float64
	stdout            string
	deltaReads        int  // reads of m01.go
	dropped           bool // a served request named results the projection dropped
	visible, evicted  int  // files the last visibility export shows visible and evicted
	synthetic         bool // a served request re-emitted the world as synthetic exchanges
	fake              *fakeapi.Server
	env               *claudecli.Env
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

var buildProxyOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "synaxi-proxyd-e2e")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "synaxi-proxyd")
	cmd := exec.Command("go", "build", "-o", bin, "./proxyd/cmd/synaxi-proxyd")
	cmd.Dir = claudecli.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build synaxi-proxyd: %v\n%s", err, out)
	}
	return bin, nil
})

// runSurvey runs the real client as the worker, through the real proxy,
// against the fake upstream.
func runSurvey(t *testing.T, project, plugin bool) surveyRun {
	return runSurveyVia(t, project, plugin, nil, nil)
}

// surveyRoute starts what the client's requests go through to the fake
// upstream, with the proxy's environment env and serve flags, and returns
// the base URL the client is given and a log to show on failure.
type surveyRoute func(t *testing.T, env []string, upstream string, flags []string) (base, logPath string)

// surveyExtra adds to a survey run: tools the worker may use beside the
// core ones, the proxy's environment, and files written into the work
// directory before the run (path relative to it → content).
type surveyExtra struct {
	tools []string
	env   []string
	files map[string]string
}

// runSurveyVia is runSurvey through route (nil: one synaxi-proxyd), with
// the fake's agent wrapped by wrap (nil: as it is) and at most one extra.
func runSurveyVia(t *testing.T, project, plugin bool, route surveyRoute, wrap func(fakeapi.Agent) fakeapi.Agent, extra ...surveyExtra) surveyRun {
	var ex surveyExtra
	if len(extra) > 0 {
		ex = extra[0]
	}
	env := claudecli.NewEnv(t, "")
	if plugin {
		env.InstallPlugin(t)
	}
	writeSurveyRepo(t, env.Work)
	for p, content := range ex.files {
		path := filepath.Join(env.Work, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	var mu sync.Mutex
	reads := map[string]int{}
	agent := surveyAgent(env.Work, reads, &mu)
	if wrap != nil {
		agent = wrap(agent)
	}
	fake := fakeapi.New(fakeapi.Options{Agent: agent})
	t.Cleanup(fake.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var flags []string
	if !project {
		flags = append(flags, "--disable-projection")
	}
	if route == nil {
		route = func(t *testing.T, env []string, upstream string, flags []string) (string, string) {
			return startProxy(t, env, upstream, flags...)
		}
	}
	base, logPath := route(t, append(append(env.Environ(), fmt.Sprintf("SYNAXI_PROJECTION_BUDGET_TOKENS=%d", surveyBudget)), ex.env...), fake.URL(), flags)
	env.BaseURL = base

	body, err := os.ReadFile(filepath.Join(claudecli.RepoRoot(), "plugin", "agents", "synaxi-worker.md"))
	require.NoError(t, err)
	prompt := string(body)
	if _, rest, ok := strings.Cut(strings.TrimPrefix(prompt, "---\n"), "\n---\n"); ok {
		prompt = rest // the markdown body is the agent's system prompt
	}
	agents, _ := json.Marshal(map[string]any{"synaxi-worker": map[string]any{
		"description": "Autonomous coder.", "prompt": prompt,
		"tools": append([]string{"Read", "Write", "Edit", "Bash", "Grep", "Glob"}, ex.tools...)}})
	task := surveyTask(env.Work)
	args := []string{"-p", "--agents", string(agents), "--agent", "synaxi-worker"}
	if plugin {
		// The plugin's own worker, with its hooks (the no-reread hook reads
		// the proxy's visibility export).
		args = []string{"-p", "--agent", "synaxi:synaxi-worker"}
	}
	res, err := env.Run(ctx, append(args, "--permission-mode", "bypassPermissions", task)...)
	require.NoError(t, err)
	logText, _ := os.ReadFile(logPath)
	require.Equal(t, 0, res.ExitCode, "stdout:\n%s\nstderr:\n%s\nproxy:\n%s", res.Stdout, res.Stderr, logText)

	run := surveyRun{stdout: res.Stdout, fake: fake, env: env}
	mu.Lock()
	for p, n := range reads {
		if strings.HasSuffix(p, "m01.go") {
			run.deltaReads = n
		} else {
			assert.Equal(t, 1, n, "%s read more than once: a loop", p)
		}
	}
	mu.Unlock()
	for _, r := range fake.MessagesRequests() {
		if r.Side {
			continue
		}
		run.requests++
		if r.Invalid != "" {
			run.invalid++
			t.Logf("invalid request: %s", r.Invalid)
		}
		run.raw += r.Usage.TotalInput()
		run.dropped = run.dropped || strings.Contains(string(r.Body), "were dropped from it")
		run.synthetic = run.synthetic || strings.Contains(string(r.Body), `"toolu_syn`)
	}
	exports, _ := filepath.Glob(filepath.Join(env.StateDir(), "visibility", "*.json"))
	for _, p := range exports {
		var ex visibility.Export
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &ex))
		for path, f := range ex.Files {
			require.True(t, strings.HasPrefix(path, env.Work), path)
			if f.Evicted {
				run.evicted++
			} else if len(f.Visible) > 0 {
				run.visible++
			}
		}
	}
	if dir := os.Getenv("SYNAXI_RECORD_DIR"); dir != "" && !project {
		recordBodies(t, filepath.Join(dir, "worker-survey.jsonl.gz"), fake.MessagesRequests())
	}
	stats := fake.CacheStats()
	run.billed, run.hit = stats.BilledEquivalent(), stats.HitRatio()
	assertSurveyFixed(t, env.Work, surveyModules)
	return run
}

// assertSurveyFixed checks that no module of the survey in work keeps its
// bug on disk.
func assertSurveyFixed(t *testing.T, work string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		b, err := os.ReadFile(filepath.Join(work, "mods", fmt.Sprintf("m%02d.go", i)))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "BUG:", "module %d fixed on disk", i)
	}
}

// TestProjectionSurveyThroughRealClient: with the working set far over the
// budget, the scripted agent finishes the same task with projection on as
// with it off, with no loop, at most 1.3× the requests, and fewer raw and
// billed input tokens.
func TestProjectionSurveyThroughRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	off := runSurvey(t, false, false)
	on := runSurvey(t, true, false)
	t.Logf("off: %d requests, raw %d, billed-equivalent %.0f, hit %.3f, m01 reads %d", off.requests, off.raw, off.billed, off.hit, off.deltaReads)
	t.Logf("on:  %d requests, raw %d, billed-equivalent %.0f, hit %.3f, m01 reads %d", on.requests, on.raw, on.billed, on.hit, on.deltaReads)
	assert.Equal(t, 1, off.deltaReads)
	assert.LessOrEqual(t, on.deltaReads, 5, "m01.go re-read at most once per bug, deliberately")
	for _, r := range []surveyRun{off, on} {
		assert.Contains(t, r.stdout, "ALL CHECKS PASS")
		assert.Zero(t, r.invalid)
	}
	assert.True(t, on.synthetic && on.dropped, "the working set exceeded the budget: the world was re-emitted and evicted")
	assert.False(t, off.synthetic || off.dropped, "projection off serves the client's bytes")
	assert.Positive(t, on.evicted, "the visibility export names evicted files, so the no-reread hook allows re-reading them")
	assert.Positive(t, on.visible, "and the files still in view")
	assert.Zero(t, off.evicted+off.visible, "nothing is exported when nothing is projected")
	assert.LessOrEqual(t, float64(on.requests), 1.3*float64(off.requests), "no loop: at most 1.3× the requests")
	// The projection engages only once it predicts a saving (about half
	// way through this 30-request task), so it must cost less than the
	// direct run, not a fixed factor less.
	assert.Less(t, on.raw, off.raw, "fewer raw input tokens")
	assert.Less(t, on.billed, off.billed, "never costs more: less billed-equivalent input")
}

// recordBodies stores the client's request bodies (as the fake received
// them through a pass-through proxy), one JSON line each, gzipped: the
// recorded worker conversation the projection's golden test replays.
func recordBodies(t *testing.T, path string, reqs []*fakeapi.Request) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	zw := gzip.NewWriter(f)
	for _, r := range reqs {
		if r.Side {
			continue
		}
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, r.Body))
		compact.WriteByte('\n')
		_, err := zw.Write(compact.Bytes())
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
}

// TestProjectionSurveyWithPluginHooks runs the survey as the installed
// plugin's worker, hooks included: the no-reread hook must allow the
// deliberate re-reads of what the projection evicted (it reads the proxy's
// visibility export), so the run stays loop-free.
func TestProjectionSurveyWithPluginHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	on := runSurvey(t, true, true)
	t.Logf("plugin, projection on: %d requests, raw %d, billed-equivalent %.0f, hit %.3f, m01 reads %d",
		on.requests, on.raw, on.billed, on.hit, on.deltaReads)
	assert.Contains(t, on.stdout, "ALL CHECKS PASS")
	assert.Zero(t, on.invalid)
	assert.True(t, on.synthetic && on.dropped)
	assert.LessOrEqual(t, on.requests, 39, "at most 1.3× the 30 requests the task takes without projection")
	assert.LessOrEqual(t, on.deltaReads, 5)
}

// TestProjectionStubbedToolThroughRealClient: with tool stubs on, the
// worker's Skill tool (never called yet) is served as a stub from the
// conversation's first request (before the projection engages as after);
// the scripted agent calls it from the stub in the first request that
// shows one, the real client runs the skill, the next request serves
// Skill's full schema, and the task finishes.
func TestProjectionStubbedToolThroughRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real client")
	}
	const skill = "survey-notes"
	var mu sync.Mutex
	called := ""
	wrap := func(next fakeapi.Agent) fakeapi.Agent {
		return fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
			mu.Lock()
			defer mu.Unlock()
			desc := toolDescription(v.Body, "Skill")
			if called == "" && strings.Contains(desc, "Shortened:") {
				called = desc
				return fakeapi.Reply{Text: "Loading the survey notes skill.", ToolUses: []fakeapi.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skill}}}}
			}
			return next.Respond(v)
		})
	}
	run := runSurveyVia(t, true, false, nil, wrap, surveyExtra{
		tools: []string{"Skill"},
		env:   []string{"SYNAXI_PROJECTION_STUB_TOOLS=1"},
		files: map[string]string{".claude/skills/" + skill + "/SKILL.md": "---\nname: " + skill + "\ndescription: How to report the survey.\n---\nReport the survey in one line: the modules read and the bugs fixed.\n"},
	})
	require.NotEmpty(t, called, "the projection served Skill as a stub and the agent called it")
	t.Logf("stub served: %q", called)
	answered, failed, full := false, "", false
	for _, r := range run.fake.MessagesRequests() {
		if r.Side {
			continue
		}
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		ids := map[string]bool{}
		for _, m := range body.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				ToolUseID string          `json:"tool_use_id"`
				IsError   bool            `json:"is_error"`
				Content   json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue // a string content
			}
			for _, b := range blocks {
				switch {
				case b.Type == "tool_use" && b.Name == "Skill":
					ids[b.ID] = true
				case b.Type == "tool_result" && ids[b.ToolUseID]:
					answered = true
					if b.IsError {
						failed = string(b.Content)
					}
					desc := toolDescription(r.Body, "Skill")
					full = full || (desc != "" && !strings.Contains(desc, "Shortened:"))
				}
			}
		}
	}
	require.True(t, answered, "the client answered the Skill call")
	assert.Empty(t, failed, "the skill ran")
	assert.True(t, full, "a request after the call serves Skill's full schema")
	assert.Contains(t, run.stdout, "ALL CHECKS PASS")
	assert.Zero(t, run.invalid)
}

// toolDescription is the description of the tool called name in a
// request body, "" when it has none (or the body does not decode).
func toolDescription(body []byte, name string) string {
	var req struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	for _, tool := range req.Tools {
		if tool.Name == name {
			return tool.Description
		}
	}
	return ""
}
