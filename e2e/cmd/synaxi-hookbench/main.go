// Command synaxi-hookbench times synaxi's no-reread hook the way Claude Code
// runs it, beside a bare shell spawn measured in the same run.
//
//	synaxi-hookbench -plugin DIR [-n 200] [-files 500]
//
// DIR is a plugin root holding hooks/hooks.json, the launcher bin/synaxi-run
// and a built bin/synaxi-noreread. The hook's command line is taken from
// hooks.json (the PreToolUse and PostToolUse entries matching Read and
// Bash), with ${CLAUDE_PLUGIN_ROOT} substituted, and spawned with the
// hook's JSON written to its stdin and its stdout and stderr read through
// pipes, as Claude Code does, for a session with a 1 MB transcript. A
// session that has read -files files is seeded first through the post hook (at least two per round, so every
// timed re-read is a first re-read). Each round spawns, in a shuffled
// order: `sh -c true` (the floor any command hook pays), the hook binary
// directly, the hooks.json command line for a denied re-read, for an
// allowed Bash test run and for recording a first Read (PostToolUse), and
// with -floor an empty Go program twice: alone (the floor any Go process
// pays) and as the hooks.json command line runs it, through a copy of the
// launcher in a plugin root of its own (the floor any Go hook launched the
// way synaxi's are pays). The report is Markdown on stdout: p50 and p99
// wall time of each, and the ratio of its p50 to the bare spawn's and to
// the launched floor's.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synaxi-hookbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	plugin := fs.String("plugin", "", "plugin root with hooks/hooks.json, bin/synaxi-run and bin/synaxi-noreread")
	rounds := fs.Int("n", 200, "measured rounds")
	files := fs.Int("files", 500, "files the seeded session has read (at least 2 per round)")
	floor := fs.String("floor", "", "an empty Go program to time as well: the least any Go hook costs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *plugin == "" || *rounds < 1 || *files < 1 {
		fmt.Fprintln(stderr, "usage: synaxi-hookbench -plugin DIR [-n ROUNDS] [-files N]")
		return 2
	}
	rep, err := bench(ctx, *plugin, *floor, *rounds, *files, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "synaxi-hookbench:", err)
		return 1
	}
	rep.write(stdout)
	return 0
}

// hookCmd is a command line from hooks.json.
type hookCmd struct {
	command string
	args    []string
}

// hooksFile is the part of hooks.json read here.
type hooksFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// lookup returns the command hook of event whose matcher lists tool and
// whose command line names the no-reread hook.
func (h *hooksFile) lookup(event, tool, root string) (hookCmd, error) {
	sub := func(s string) string { return strings.ReplaceAll(s, "${CLAUDE_PLUGIN_ROOT}", root) }
	for _, m := range h.Hooks[event] {
		if !slices.Contains(strings.Split(m.Matcher, "|"), tool) {
			continue
		}
		for _, hk := range m.Hooks {
			line := hk.Command + " " + strings.Join(hk.Args, " ")
			if hk.Type != "command" || !strings.Contains(line, "synaxi-noreread") {
				continue
			}
			c := hookCmd{command: sub(hk.Command)}
			for _, a := range hk.Args {
				c.args = append(c.args, sub(a))
			}
			return c, nil
		}
	}
	return hookCmd{}, fmt.Errorf("hooks.json has no %s command hook for %s running synaxi-noreread", event, tool)
}

// rig is the plugin, a work tree and isolated state for the hook.
type rig struct {
	root      string
	pre, post hookCmd
	work      string
	env       []string
}

func newRig(plugin string) (*rig, func(), error) {
	root, err := filepath.Abs(plugin)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("read hooks.json: %w", err)
	}
	var hf hooksFile
	if err := json.Unmarshal(data, &hf); err != nil {
		return nil, nil, fmt.Errorf("decode hooks.json: %w", err)
	}
	r := &rig{root: root}
	if r.pre, err = hf.lookup("PreToolUse", "Read", root); err != nil {
		return nil, nil, err
	}
	if r.post, err = hf.lookup("PostToolUse", "Read", root); err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "synaxi-noreread")); err != nil {
		return nil, nil, fmt.Errorf("no built hook: %w (run make build)", err)
	}
	tmp, err := os.MkdirTemp("", "synaxi-hookbench")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	r.work = filepath.Join(tmp, "work")
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := writeTranscript(filepath.Join(r.work, "t.jsonl")); err != nil {
		cleanup()
		return nil, nil, err
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "SYNAXI_") || strings.HasPrefix(k, "CLAUDE") {
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env, "HOME="+filepath.Join(tmp, "home"), "XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "CLAUDE_PLUGIN_ROOT="+root, "CLAUDECODE=1")
	return r, cleanup, nil
}

// writeTranscript writes the session's transcript, which the post hook
// reads the end of (the governor's context size): about 1 MB of turns, each
// an assistant record with usage and a tool call, then its tool result.
func writeTranscript(path string) error {
	var b strings.Builder
	result := strings.Repeat("\tif err := run(ctx); err != nil { return err }\n", 120)
	for i := range 150 {
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","message":{"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/w/f%d.go"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":%d,"cache_creation_input_tokens":900,"output_tokens":120}}}`+"\n", i, i, i, 20000+i*700)
		raw, _ := json.Marshal(result)
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%s}]}}`+"\n", i, i, raw)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// input is a hook's stdin as Claude Code writes it.
func (r *rig) input(event, tool string, toolInput map[string]any) []byte {
	raw, _ := json.Marshal(map[string]any{"session_id": "0b4c7d52-hookbench", "transcript_path": filepath.Join(r.work, "t.jsonl"),
		"cwd": r.work, "permission_mode": "default", "hook_event_name": event, "tool_name": tool,
		"tool_input": toolInput, "tool_use_id": "toolu_01HookBench"})
	return raw
}

// sample is one spawn's wall time and CPU time (user and system, of the
// process and what it exec'd: the launcher's sh and the hook it became).
type sample struct{ wall, cpu time.Duration }

// spawn runs one process with stdin and returns its times and stdout.
func (r *rig) spawn(ctx context.Context, c hookCmd, stdin []byte) (sample, string, error) {
	cmd := exec.CommandContext(ctx, c.command, c.args...)
	cmd.Env, cmd.Dir = r.env, r.work
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := sample{wall: time.Since(start)}
	if err != nil {
		return d, "", fmt.Errorf("%s %s: %w: %s", c.command, strings.Join(c.args, " "), err, errb.Bytes())
	}
	d.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return d, out.String(), nil
}

// seed writes files and records them as read through the post hook.
func (r *rig) seed(ctx context.Context, n int) ([]string, error) {
	line := "\tif err := doSomething(ctx, value); err != nil { return fmt.Errorf(\"wrap: %w\", err) }\n"
	paths := make([]string, n)
	for i := range paths {
		dir := filepath.Join(r.work, fmt.Sprintf("pkg%02d", i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("file_%03d.go", i))
		body := strings.Repeat(line, (2+i*37%20)*1024/len(line))
		if err := os.WriteFile(paths[i], []byte(body), 0o644); err != nil {
			return nil, err
		}
		in := r.input("PostToolUse", "Read", map[string]any{"file_path": paths[i]})
		if _, _, err := r.spawn(ctx, r.post, in); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// row is one measured kind of spawn.
type row struct {
	name string
	durs []sample
}

func (w *row) pct(p float64) time.Duration {
	s := make([]time.Duration, len(w.durs))
	for i, d := range w.durs {
		s[i] = d.wall
	}
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// cpu is the mean CPU time of a spawn.
func (w *row) cpu() time.Duration {
	var sum time.Duration
	for _, d := range w.durs {
		sum += d.cpu
	}
	return sum / time.Duration(len(w.durs))
}

type report struct {
	rounds, files int
	bare          *row
	floor         *row // the hooks.json line exec'ing an empty Go program; nil without -floor
	rows          []*row
	denied        int
}

// floorRoot is a plugin root beside the rig's whose hook is the empty
// program: the same hooks.json line and launcher, exec'ing prog.
func (r *rig) floorRoot(prog string) (hookCmd, error) {
	root := filepath.Join(filepath.Dir(r.work), "floor-plugin")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return hookCmd{}, err
	}
	for _, f := range []struct{ from, to string }{
		{filepath.Join(r.root, "bin", "synaxi-run"), filepath.Join(root, "bin", "synaxi-run")},
		{prog, filepath.Join(root, "bin", "synaxi-noreread")},
	} {
		data, err := os.ReadFile(f.from)
		if err != nil {
			return hookCmd{}, fmt.Errorf("floor plugin: %w", err)
		}
		if err := os.WriteFile(f.to, data, 0o755); err != nil {
			return hookCmd{}, fmt.Errorf("floor plugin: %w", err)
		}
	}
	c := hookCmd{command: r.pre.command}
	for _, a := range r.pre.args {
		c.args = append(c.args, strings.ReplaceAll(a, r.root, root))
	}
	return c, nil
}

// fresh writes n files no hook has seen, for the PostToolUse row.
func (r *rig) fresh(n int) ([]string, error) {
	dir := filepath.Join(r.work, "fresh")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("new_%03d.go", i))
		if err := os.WriteFile(paths[i], []byte(strings.Repeat("x := compute(y)\n", 200+i)), 0o644); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

func bench(ctx context.Context, plugin, floor string, rounds, files int, progress io.Writer) (*report, error) {
	r, cleanup, err := newRig(plugin)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	const warmup = 10
	// Each re-read names a file read once and not re-read since, so every
	// one is judged the same way (a denial; a repeat would pass on its grant).
	files = max(files, 2*(rounds+warmup))
	fmt.Fprintf(progress, "seeding a session that has read %d files\n", files)
	paths, err := r.seed(ctx, files)
	if err != nil {
		return nil, err
	}
	bare := hookCmd{command: "sh", args: []string{"-c", "true"}}
	order := []int{0, 1, 2, 3, 4}
	direct := hookCmd{command: filepath.Join(r.root, "bin", "synaxi-noreread"), args: []string{"pre"}}
	rep := &report{rounds: rounds, files: files, bare: &row{name: "bare spawn: `sh -c true`"}}
	rereadDirect := &row{name: "hook binary alone, PreToolUse Read re-read (denied)"}
	rereadHook := &row{name: "hooks.json command line via the launcher, PreToolUse Read re-read (denied)"}
	bashHook := &row{name: "hooks.json command line via the launcher, PreToolUse Bash test run (allowed)"}
	postHook := &row{name: "hooks.json command line via the launcher, PostToolUse Read of a new file (recorded)"}
	rep.rows = []*row{rereadDirect, rereadHook, bashHook, postHook}
	floorRow := &row{name: "an empty Go program (`func main() {}`)"}
	var launched hookCmd
	if floor != "" {
		if launched, err = r.floorRoot(floor); err != nil {
			return nil, err
		}
		rep.floor = &row{name: "the hooks.json command line via the launcher, exec'ing an empty Go program"}
		rep.rows = append([]*row{floorRow, rep.floor}, rep.rows...)
		order = append(order, 5, 6)
	}
	news, err := r.fresh(rounds + warmup)
	if err != nil {
		return nil, err
	}

	next := 0
	reread := func() []byte {
		p := paths[next%len(paths)]
		next++
		return r.input("PreToolUse", "Read", map[string]any{"file_path": p})
	}
	bash := r.input("PreToolUse", "Bash", map[string]any{"command": "pytest tests/test_api.py -x 2>&1 | tail -40", "description": "run tests"})
	for i := -warmup; i < rounds; i++ {
		rand.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, k := range order {
			var (
				d   sample
				out string
				err error
				to  *row
			)
			switch k {
			case 0:
				d, _, err = r.spawn(ctx, bare, bash)
				to = rep.bare
			case 1:
				d, out, err = r.spawn(ctx, direct, reread())
				to = rereadDirect
			case 2:
				d, out, err = r.spawn(ctx, r.pre, reread())
				to = rereadHook
			case 3:
				d, out, err = r.spawn(ctx, r.pre, bash)
				to = bashHook
				if out != "" {
					err = errors.New("the hook answered a test run; it must allow it silently")
				}
			case 4:
				d, out, err = r.spawn(ctx, r.post, r.postRead(news[i+warmup]))
				to = postHook
				if out != "" {
					err = fmt.Errorf("the post hook answered a first read (stdout %q); it must record it silently", out)
				}
			case 5:
				d, _, err = r.spawn(ctx, hookCmd{command: floor}, bash)
				to = floorRow
			case 6:
				d, _, err = r.spawn(ctx, launched, bash)
				to = rep.floor
			}
			if err != nil {
				return nil, err
			}
			if (k == 1 || k == 2) && i >= 0 {
				if !strings.Contains(out, `"deny"`) {
					return nil, fmt.Errorf("a re-read of an unchanged file was not denied (stdout %q): the bench would not time the real path", out)
				}
				rep.denied++
			}
			if i >= 0 {
				to.durs = append(to.durs, d)
			}
		}
	}
	return rep, nil
}

// postRead is PostToolUse for a whole-file Read of path, with the tool's
// response as Claude Code sends it (the content the model saw).
func (r *rig) postRead(path string) []byte {
	data, _ := os.ReadFile(path)
	n := strings.Count(string(data), "\n")
	raw, _ := json.Marshal(map[string]any{"session_id": "0b4c7d52-hookbench", "transcript_path": filepath.Join(r.work, "t.jsonl"),
		"cwd": r.work, "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Read",
		"tool_input": map[string]any{"file_path": path}, "tool_use_id": "toolu_01HookBenchPost",
		"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": string(data),
			"numLines": n, "startLine": 1, "totalLines": n}}})
	return raw
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func (rep *report) write(w io.Writer) {
	ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2f×", float64(a)/float64(b)) }
	p50 := func(r *row) time.Duration { return r.pct(0.5) }
	cpu := (*row).cpu
	if rep.floor == nil {
		fmt.Fprintln(w, "| spawn | p50 ms | p99 ms | p50 ÷ bare p50 | CPU ms (mean) | CPU ÷ bare CPU |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	} else {
		fmt.Fprintln(w, "| spawn | p50 ms | p99 ms | p50 ÷ bare p50 | p50 ÷ launched floor p50 | CPU ms (mean) | CPU ÷ bare CPU | CPU ÷ launched floor CPU |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	}
	for _, r := range append([]*row{rep.bare}, rep.rows...) {
		cols := []string{r.name, ms(p50(r)), ms(r.pct(0.99)), ratio(p50(r), p50(rep.bare))}
		if rep.floor != nil {
			cols = append(cols, ratio(p50(r), p50(rep.floor)))
		}
		cols = append(cols, ms(cpu(r)), ratio(cpu(r), cpu(rep.bare)))
		if rep.floor != nil {
			cols = append(cols, ratio(cpu(r), cpu(rep.floor)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
	}
	fmt.Fprintf(w, "\n%d rounds (after 10 warm-up rounds), each spawning every row once in a shuffled order; "+
		"the session had read %d files; %d re-reads were denied as expected. CPU is user plus system time of the "+
		"spawned process (with what it exec'd), which a loaded machine inflates far less than wall time.\n", rep.rounds, rep.files, rep.denied)
}
