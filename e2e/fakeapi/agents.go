package fakeapi

import (
	"fmt"
	"regexp"
	"strings"
)

var absPathRE = regexp.MustCompile(`(?:^|[\s"'(])(/[A-Za-z0-9._\-/]+[A-Za-z0-9_])`)
var runRE = regexp.MustCompile("run: `([^`]+)`")

// DemoAgent is a small scripted agent for manual runs and benchmarks. From
// the task (the first user message) it reads every absolute file path it
// names that is not yet fully visible, runs each command written as
// run: `CMD` once, and then answers with a summary of what it saw: each
// file's line count and first line, each command's result. It acts only on
// what the request shows, so a file whose content disappears from the
// request is read again.
func DemoAgent() Agent {
	return AgentFunc(func(v *View) Reply {
		task := v.FirstUserText()
		var uses []ToolUse
		if v.HasTool("Read") {
			for _, m := range absPathRE.FindAllStringSubmatch(task, -1) {
				path := m[1]
				if _, ok := v.FileContent(path); ok || failedBefore(v, "Read", "file_path", path) {
					continue
				}
				uses = append(uses, ToolUse{Name: "Read", Input: map[string]any{"file_path": path}})
			}
		}
		if v.HasTool("Bash") {
			for _, m := range runRE.FindAllStringSubmatch(task, -1) {
				if len(callsWith(v, "Bash", "command", m[1])) == 0 {
					uses = append(uses, ToolUse{Name: "Bash", Input: map[string]any{"command": m[1], "description": "run the command from the task"}})
				}
			}
		}
		if len(uses) > 0 {
			return Reply{Text: fmt.Sprintf("Working on it: %d tool call(s).", len(uses)), ToolUses: uses}
		}
		return Reply{Text: summary(v, task)}
	})
}

func callsWith(v *View, tool, key, value string) []Call {
	var out []Call
	for _, c := range v.CallsTo(tool) {
		if s, _ := c.Input[key].(string); s == value {
			out = append(out, c)
		}
	}
	return out
}

func failedBefore(v *View, tool, key, value string) bool {
	for _, c := range callsWith(v, tool, key, value) {
		if c.Answered && c.IsError {
			return true
		}
	}
	return false
}

func summary(v *View, task string) string {
	var sb strings.Builder
	sb.WriteString("Done.")
	for _, m := range absPathRE.FindAllStringSubmatch(task, -1) {
		path := m[1]
		content, ok := v.FileContent(path)
		switch {
		case ok:
			lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
			fmt.Fprintf(&sb, "\n%s: %d lines, first: %s", path, len(lines), lines[0])
		case failedBefore(v, "Read", "file_path", path):
			fmt.Fprintf(&sb, "\n%s: could not read it", path)
		}
	}
	for _, m := range runRE.FindAllStringSubmatch(task, -1) {
		for _, c := range callsWith(v, "Bash", "command", m[1]) {
			fmt.Fprintf(&sb, "\n$ %s -> %s", m[1], strings.TrimSpace(c.Result))
		}
	}
	return sb.String()
}
