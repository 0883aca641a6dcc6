package projection

import (
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"
)

// memory is the worker's operational memory: lessons distilled from its own
// tool results (a missing interpreter, reading a directory, missing paths,
// repeated errors, a failing command retried unchanged). It is delivered as
// a <system-reminder> in the volatile tail only.
type memory struct {
	facts    map[string]string
	counts   map[string]int
	failures map[string]int // Bash command → failed runs since the last file change
}

func newMemory() *memory {
	return &memory{facts: map[string]string{}, counts: map[string]int{}, failures: map[string]int{}}
}

var notFoundCmd = regexp.MustCompile(`(?m)(?:^|[\s:])([A-Za-z0-9_.+-]{1,40}): (?:command )?not found`)

func (m *memory) clone() *memory {
	return &memory{facts: maps.Clone(m.facts), counts: maps.Clone(m.counts), failures: maps.Clone(m.failures)}
}

// observe folds one completed tool call into the memory.
func (m *memory) observe(tool, cmd string, text string, isError bool) {
	switch tool {
	case "Bash":
		if !isError {
			if len(m.failures) > 0 {
				delete(m.failures, cmd)
				delete(m.facts, "retry:"+cmd)
			}
			break
		}
		if !strings.Contains(text, "not found") {
			// no missing command
		} else if sub := notFoundCmd.FindStringSubmatch(clip(text, 2000)); sub != nil {
			bin := sub[1]
			hint := "use an installed alternative"
			if bin == "python" {
				hint = "use python3"
			}
			m.facts["bin:"+bin] = fmt.Sprintf("`%s` is not installed here (command not found): %s.", bin, hint)
		}
		m.failures[cmd]++
		if n := m.failures[cmd]; n >= 2 {
			m.facts["retry:"+cmd] = fmt.Sprintf("`%s` has failed %d times with no file change in between; running it unchanged will fail again: change something first.", clip(cmd, 120), n)
		}
	case "Read":
		lower := ""
		if isError || len(text) < 300 {
			lower = strings.ToLower(text)
		}
		switch {
		case strings.Contains(lower, "is a directory") || strings.Contains(lower, "eisdir"):
			m.facts["read:dir"] = "Read needs a file path, not a directory: list directories with Bash (ls, find) first."
		case isError && (strings.Contains(lower, "does not exist") || strings.Contains(lower, "not found") || strings.Contains(lower, "no such file")):
			m.counts["read:missing"]++
			if m.counts["read:missing"] >= 2 {
				m.facts["read:missing"] = "Several paths you tried to Read do not exist: list the files first (ls, find . -maxdepth 3 -type f) and read exact paths."
			}
		}
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		// A file changed: earlier failures may now pass.
		if len(m.failures) == 0 {
			break
		}
		clear(m.failures)
		for k := range m.facts {
			if strings.HasPrefix(k, "retry:") {
				delete(m.facts, k)
			}
		}
	}
	if isError {
		m.counts["err:"+tool]++
		if n := m.counts["err:"+tool]; n >= 2 {
			m.facts["err:"+tool] = fmt.Sprintf("%d %s calls have failed so far: read each error and change approach rather than retrying the same call.", n, tool)
		}
	}
}

// reminder renders the memory, or "" when there is nothing to say.
func (m *memory) reminder() string {
	if len(m.facts) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m.facts))
	for k := range m.facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("<system-reminder>\nYour own notes, distilled from your earlier tool results in this task (not user input). Apply them unless newer evidence says otherwise:\n")
	for _, k := range keys {
		sb.WriteString("- ")
		sb.WriteString(m.facts[k])
		sb.WriteByte('\n')
	}
	sb.WriteString("</system-reminder>")
	return sb.String()
}
