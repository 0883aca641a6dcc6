package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/internal/governor"

	"github.com/synaxi/synaxi/hooks/internal/reads"
)

// sweep is the thresholds each rule is counted at besides the default.
var sweep = map[governor.Rule][]int{
	governor.Repeat:    {2, 3, 4, 5},
	governor.Unchanged: {2, 3, 4},
	governor.Revert:    {1, 2, 3},
	governor.Reread:    {2, 3, 4},
	governor.Stall:     {20, 30, 40, 50, 60},
}

// replayed is one context of one file, replayed at the defaults.
type replayed struct {
	file string
	ctx  *governor.Context
}

// panel is a replay of every file at the default thresholds, and the
// fires of each rule at each threshold of the sweep.
type panel struct {
	files    []string
	contexts []replayed
	// below is the replay one step below every default, to judge what the
	// defaults leave out.
	below []replayed
	// swept[rule][threshold] = fires of that rule alone, and the contexts
	// they fell in.
	swept map[governor.Rule]map[int][2]int
}

func replayPanel(files []string) (*panel, error) {
	p := &panel{files: files, swept: map[governor.Rule]map[int][2]int{}}
	for _, f := range files {
		cs, err := replayFile(f, governor.Defaults)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			p.contexts = append(p.contexts, replayed{file: f, ctx: c})
		}
		if cs, err = replayFile(f, Below); err != nil {
			return nil, err
		}
		for _, c := range cs {
			p.below = append(p.below, replayed{file: f, ctx: c})
		}
	}
	for rule, values := range sweep {
		p.swept[rule] = map[int][2]int{}
		for _, v := range values {
			th := only(rule, v)
			fires, ctxs := 0, 0
			for _, f := range files {
				cs, err := replayFile(f, th)
				if err != nil {
					return nil, err
				}
				for _, c := range cs {
					fires += c.Fires
					if c.Fires > 0 {
						ctxs++
					}
				}
			}
			p.swept[rule][v] = [2]int{fires, ctxs}
		}
	}
	return p, nil
}

// Below is one step below every default threshold.
var Below = governor.Thresholds{Repeat: governor.Defaults.Repeat - 1, Unchanged: governor.Defaults.Unchanged - 1,
	Revert: governor.Defaults.Revert - 1, Reread: governor.Defaults.Reread - 1,
	StallCalls: governor.Defaults.StallCalls - 10, StallTokens: governor.Defaults.StallTokens}

// only is the thresholds with one rule on, at v (stall keeps its token
// growth).
func only(rule governor.Rule, v int) governor.Thresholds {
	var th governor.Thresholds
	switch rule {
	case governor.Repeat:
		th.Repeat = v
	case governor.Unchanged:
		th.Unchanged = v
	case governor.Revert:
		th.Revert = v
	case governor.Reread:
		th.Reread = v
	case governor.Stall:
		th.StallCalls, th.StallTokens = v, governor.Defaults.StallTokens
	}
	return th
}

func replayFile(path string, th governor.Thresholds) ([]*governor.Context, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	cs, err := governor.Replay(f, reads.ShellEdits, th)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// name is a transcript's name in the tables: its folder and base name,
// shortened.
func name(path string) string {
	dir := filepath.Base(filepath.Dir(path))
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(base) == 36 { // a session id
		base = base[:8]
	}
	if dir == "subagents" {
		return filepath.Base(filepath.Dir(filepath.Dir(path)))[:8] + "/" + base
	}
	if dir == "claude-code-sessions" {
		return base
	}
	return dir + "/" + base
}

func (p *panel) write(w io.Writer, around int) {
	th := governor.Defaults
	fmt.Fprintf(w, "Defaults: repeat %d, unchanged %d, revert %d, reread %d, stall %d calls and %d tokens.\n\n",
		th.Repeat, th.Unchanged, th.Revert, th.Reread, th.StallCalls, th.StallTokens)
	fmt.Fprintln(w, "| transcript | context | tool calls | fires | rules |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | --- |")
	calls, fires, firing := 0, 0, 0
	for _, r := range p.contexts {
		var rules []string
		for _, e := range r.ctx.Events {
			if e.Fire != nil {
				rules = append(rules, fmt.Sprintf("%s #%d", e.Fire.Rule, e.N))
			}
		}
		calls += len(r.ctx.Events)
		fires += r.ctx.Fires
		if r.ctx.Fires > 0 {
			firing++
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s |\n", name(r.file), r.ctx.Name, len(r.ctx.Events), r.ctx.Fires, strings.Join(rules, ", "))
	}
	fmt.Fprintf(w, "| **all** | %d contexts | %d | %d | %d contexts fire |\n\n", len(p.contexts), calls, fires, firing)

	fmt.Fprintln(w, "Each rule alone, at each threshold (fires on the panel / contexts they fall in):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| rule | thresholds → fires (contexts) |")
	fmt.Fprintln(w, "| --- | --- |")
	for _, rule := range governor.Rules {
		var cells []string
		for _, v := range sweep[rule] {
			s := p.swept[rule][v]
			cells = append(cells, fmt.Sprintf("%d → %d (%d)", v, s[0], s[1]))
		}
		fmt.Fprintf(w, "| %s | %s |\n", rule, strings.Join(cells, "; "))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Every fire at the defaults, with the tool calls before it and the one after (✗ failed):")
	fmt.Fprintln(w)
	listFires(w, p.contexts, around)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Every fire one step below the defaults (repeat %d, unchanged %d, revert %d, reread %d, stall %d calls), which the defaults leave out or take later:\n\n",
		Below.Repeat, Below.Unchanged, Below.Revert, Below.Reread, Below.StallCalls)
	listFires(w, p.below, around)
}

// listFires lists each fire with the calls around it.
func listFires(w io.Writer, contexts []replayed, around int) {
	for _, r := range contexts {
		evs := r.ctx.Events
		for i, e := range evs {
			if e.Fire == nil {
				continue
			}
			fmt.Fprintf(w, "- **%s %s #%d: %s** (%d)\n", name(r.file), r.ctx.Name, e.N, e.Fire.Rule, e.Fire.Count)
			for j := max(0, i-around); j <= min(len(evs)-1, i+1); j++ {
				mark := ""
				if evs[j].Failed {
					mark = " ✗"
				}
				here := ""
				if j == i {
					here = " ←"
				}
				fmt.Fprintf(w, "  - #%d %s%s `%s`%s\n", evs[j].N, evs[j].Tool, mark, cell(evs[j].Summary), here)
			}
		}
	}
}

// cell makes a summary safe inside a Markdown code span on one line.
func cell(s string) string {
	s = strings.ReplaceAll(s, "`", "'")
	s = strings.ReplaceAll(s, "|", "¦")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}
