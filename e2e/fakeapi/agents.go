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

// setupCmdRE finds the commands the /synaxi:setup skill tells the model to
// run, as Claude Code expanded the skill into the request.
var setupCmdRE = regexp.MustCompile(`sh (\S+/bin/synaxi-run) synaxi (install --route|savings --replay|install)\n`)

// SetupQuestion is what SetupAgent asks before routing.
const SetupQuestion = "Shall I route your Claude Code sessions through the synaxi proxy? Answer yes or no."

// SetupNotYet is how SetupAgent ends, as the skill says, when the replay
// had too little history (or nothing of the user's) to price: no question.
const SetupNotYet = "There is not enough history to say what routing would save yet: use Claude Code with synaxi for a while, then run /synaxi:setup again."

// notYetRE finds the replay's own words for "no figure to quote".
var notYetRE = regexp.MustCompile(`Too little history to price routing|Nothing of yours to price`)

// SetupAgent plays the model through the /synaxi:setup skill
// (plugin/skills/setup/SKILL.md): it runs the skill's `synaxi install` and
// `synaxi savings --replay` commands exactly as the expanded skill in the
// request writes them, one per turn, then asks SetupQuestion and ends its
// turn; it runs `synaxi install --route` only after a user turn that says
// yes, and then ends with the route command's output. When the replay
// says it has too little history to price routing it ends with
// SetupNotYet instead, and asks nothing. It stops at the first command
// that fails, quoting its output.
func SetupAgent() Agent {
	return AgentFunc(func(v *View) Reply {
		cmds := map[string]string{}
		for _, m := range setupCmdRE.FindAllStringSubmatch(v.VisibleText(), -1) {
			cmds[m[2]] = "sh " + m[1] + " synaxi " + m[2]
		}
		if cmds["install"] == "" || cmds["savings --replay"] == "" || cmds["install --route"] == "" {
			return Reply{Text: "The setup skill's commands are not in the request."}
		}
		last := func(key string) (Call, bool) {
			cs := callsWith(v, "Bash", "command", cmds[key])
			if len(cs) == 0 || !cs[len(cs)-1].Answered {
				return Call{}, false
			}
			return cs[len(cs)-1], true
		}
		run := func(key string) Reply {
			in := map[string]any{"command": cmds[key], "description": "synaxi " + key}
			if key == "savings --replay" {
				in["timeout"] = 600000 // as the skill asks: the replay can take minutes
			}
			return Reply{Text: "Running " + key + ".", ToolUses: []ToolUse{{Name: "Bash", Input: in}}}
		}
		if c, ok := last("install --route"); ok {
			if c.IsError {
				return Reply{Text: "synaxi install --route failed:\n" + c.Result}
			}
			return Reply{Text: "Routing is on from your next session.\n" + c.Result}
		}
		for _, key := range []string{"install", "savings --replay"} {
			c, ok := last(key)
			if !ok {
				return run(key)
			}
			if c.IsError {
				return Reply{Text: "synaxi " + key + " failed:\n" + c.Result}
			}
			if key == "savings --replay" && notYetRE.MatchString(c.Result) {
				return Reply{Text: SetupNotYet}
			}
		}
		if strings.EqualFold(strings.TrimSpace(v.LastUserText()), "yes") {
			return run("install --route")
		}
		return Reply{Text: SetupQuestion}
	})
}
