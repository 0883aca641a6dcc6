package trim

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// MaxChars is the default budget of a rendered block. Claude Code moves
// additional context over 10,000 characters to a file; the block leaves
// room in that for the learned guidance SessionStart also gives.
const MaxChars = 6000

// limits are how many items of each section a block shows.
type limits struct {
	edited, read, ranges, commands, instructions, instrChars, todos, decisions, errLines int
}

var full = limits{edited: 15, read: 10, ranges: 6, commands: 8, instructions: 9, instrChars: 800, todos: 20, decisions: 8, errLines: maxKeyLines}

// shrinkSteps lower one limit each, in the order sections are given up
// when the block is over budget: files only read first, the user's words
// and the open error last.
var shrinkSteps = []func(*limits) bool{
	func(l *limits) bool { return dec(&l.read, 2, 0) },
	func(l *limits) bool { return dec(&l.commands, 2, 2) },
	func(l *limits) bool { return dec(&l.ranges, 2, 2) },
	func(l *limits) bool { return dec(&l.edited, 2, 5) },
	func(l *limits) bool { return dec(&l.todos, 4, 8) },
	func(l *limits) bool { return dec(&l.decisions, 1, 3) },
	func(l *limits) bool { return dec(&l.instrChars, 100, 300) },
	func(l *limits) bool { return dec(&l.instructions, 1, 3) },
	func(l *limits) bool { return dec(&l.errLines, 2, 4) },
}

func dec(v *int, step, floor int) bool {
	if *v <= floor {
		return false
	}
	*v = max(*v-step, floor)
	return true
}

// Render writes s as the block SessionStart injects, at most maxChars long
// when the sections' floors allow (maxChars ≤ 0: MaxChars). Sections are
// cut in a fixed order until it fits, so the same set and budget give the
// same bytes.
func Render(s Set, maxChars int) string {
	if maxChars <= 0 {
		maxChars = MaxChars
	}
	l := full
	out := render(s, l)
	for len(out) > maxChars {
		shrunk := false
		for _, step := range shrinkSteps {
			if step(&l) {
				shrunk = true
				break
			}
		}
		if !shrunk {
			break
		}
		out = render(s, l)
	}
	return out
}

func render(s Set, l limits) string {
	var b strings.Builder
	b.WriteString("# Carried over by synaxi trim\n\n")
	fmt.Fprintf(&b, "The user ran /synaxi:trim and then /clear. Below is what the earlier conversation (session %s", s.Session)
	if s.Cwd != "" {
		fmt.Fprintf(&b, ", in %s", s.Cwd)
	}
	b.WriteString(") left open, taken from its transcript without a model. File contents are not included: read them again.\n")
	instructions(&b, s.Instructions, l)
	if n := min(len(s.Decisions), l.decisions); n > 0 {
		b.WriteString("\n## Decisions the user made\n")
		for _, d := range s.Decisions[len(s.Decisions)-n:] {
			fmt.Fprintf(&b, "- %s → %s\n", oneLine(d.Question, 300), oneLine(d.Answer, 300))
		}
	}
	if e := s.Error; e != nil {
		b.WriteString("\n## Open error\nThe last failing command, not followed by a passing run of it:\n\n")
		fmt.Fprintf(&b, "    $ %s\n", oneLine(e.Command, 300))
		for _, line := range e.Lines[:min(len(e.Lines), l.errLines)] {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	if n := min(len(s.Todos), l.todos); n > 0 {
		b.WriteString("\n## Unfinished todos\n")
		for _, t := range s.Todos[:n] {
			fmt.Fprintf(&b, "- [%s] %s\n", t.Status, oneLine(t.Text, 200))
		}
	}
	files(&b, s, true, l.edited, l.ranges)
	files(&b, s, false, l.read, l.ranges)
	if n := min(len(s.Commands), l.commands); n > 0 {
		b.WriteString("\n## Recent commands (oldest first)\n")
		for _, c := range s.Commands[len(s.Commands)-n:] {
			fmt.Fprintf(&b, "- `%s`\n", oneLine(c, 200))
		}
	}
	b.WriteString(directives)
	return b.String()
}

// directives is the fixed block that ends every trim.
const directives = `
## Standing directives
- The user's words above still stand; do not ask again what they decided.
- Before you edit a listed file, read it again (the line ranges are where the work was).
- If an error is open, run its command again first to see where it stands.
- Continue with the unfinished todos; say so if one is no longer needed.
`

// instructions writes the user's first typed turn and the latest ones.
func instructions(b *strings.Builder, all []string, l limits) {
	if len(all) == 0 || l.instructions == 0 {
		return
	}
	idx := []int{0}
	for i := max(1, len(all)-(l.instructions-1)); i < len(all); i++ {
		idx = append(idx, i)
	}
	b.WriteString("\n## What the user typed (the first turn and the latest, verbatim)\n")
	for _, i := range idx {
		text := strings.ReplaceAll(cut(strings.TrimSpace(all[i]), l.instrChars), "\n", "\n   ")
		fmt.Fprintf(b, "%d. %s\n", i+1, text)
	}
	if skipped := len(all) - len(idx); skipped > 0 {
		fmt.Fprintf(b, "(%d earlier turns left out)\n", skipped)
	}
}

// files writes the edited (or only read) files, most recent first.
func files(b *strings.Builder, s Set, edited bool, n, ranges int) {
	var pick []File
	for _, f := range s.Files {
		if f.Edited == edited && len(pick) < n {
			pick = append(pick, f)
		}
	}
	if len(pick) == 0 {
		return
	}
	if edited {
		b.WriteString("\n## Files edited (most recent first; lines changed)\n")
	} else {
		b.WriteString("\n## Files read (most recent first; lines read)\n")
	}
	for _, f := range pick {
		fmt.Fprintf(b, "- %s", relative(f.Path, s.Cwd))
		if spans := merge(f.Ranges, ranges); spans != "" {
			b.WriteString(": " + spans)
		}
		b.WriteByte('\n')
	}
}

// merge joins the last n ranges, sorted and overlaps merged ("10-25, 40-").
func merge(rs []Range, n int) string {
	rs = slices.Clone(rs[max(0, len(rs)-n):])
	slices.SortFunc(rs, func(a, b Range) int { return a.Start - b.Start })
	var out []Range
	for _, r := range rs {
		if k := len(out) - 1; k >= 0 && (out[k].End == 0 || r.Start <= out[k].End+1) {
			if out[k].End != 0 && (r.End == 0 || r.End > out[k].End) {
				out[k].End = r.End
			}
			continue
		}
		out = append(out, r)
	}
	parts := make([]string, len(out))
	for i, r := range out {
		switch {
		case r.End == 0:
			parts[i] = fmt.Sprintf("%d-", r.Start)
		case r.End == r.Start:
			parts[i] = fmt.Sprint(r.Start)
		default:
			parts[i] = fmt.Sprintf("%d-%d", r.Start, r.End)
		}
	}
	return strings.Join(parts, ", ")
}

// relative is path relative to cwd when it lies under it.
func relative(path, cwd string) string {
	if cwd == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// oneLine is s's first line, cut to n bytes; a cut or dropped rest ends in "…".
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimRight(s[:i], " ") + " …"
	}
	return cut(s, n)
}
