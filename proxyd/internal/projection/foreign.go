package projection

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/recall"
)

// Calls of tools outside the world. The world (observe.go) models the
// tools whose results it can keep, restore or repeat: Read, Write, Edit,
// MultiEdit, Bash, Grep and Glob. Every other call — Claude Code's task
// list (TaskCreate, TaskUpdate, TaskList), ToolSearch, WebFetch,
// WebSearch, Agent and Task, Skill, NotebookEdit, ExitPlanMode, MCP
// tools — folds with its turn, and the invariant that what is folded says
// how to get it back holds for them too:
//
//   - A result holding tool_reference blocks (a tool search loading
//     deferred tools) is never folded. The API shows a tool the request
//     declares with defer_loading only while a tool_reference in the
//     request names it, so folding the reference would silently unload
//     the tool. The exchange becomes a pinned world entry: re-emitted in
//     the snapshot like a Read, never evicted, so it is written once by
//     a rebuild and re-served unchanged after that.
//   - Every other call becomes one line of the fold note of the rebuild
//     that folds it: the tool's name, its input to 160 bytes and its
//     result's first line to 160 bytes. A result longer than that line is
//     handed to the proxy's recall store under the reference the line
//     names, so it comes back in one call without making the call again
//     (the call may have taken effect: a second TaskCreate makes a second
//     task). A short result is whole in the line: "Task #1 created
//     successfully: …" keeps the id, and nothing is to recover.
//
// A line is never dearer than the exchange it stands for: the exchange
// repeats the input and the result whole and adds two blocks with a
// tool_use id (about 95 tokens by the engine's estimate, against about 8
// for a line's own words), the line clips both, so nothing but a
// tool_reference is kept in view.

// callKeyPrefix starts the world key of a folded call of another tool:
// it is listed among the dropped keys, never put.
const callKeyPrefix = "call:"

// lineBytes bounds the input and the result's first line in a call's line.
const lineBytes = 160

// inWorld reports whether the world models calls of the tool.
func inWorld(tool string) bool {
	switch tool {
	case "Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob":
		return true
	}
	return false
}

// foreign accounts for the call use of a tool outside the world, answered
// by res, for when its turn folds.
func (f *fold) foreign(use block, res *block) {
	if !res.isError && hasToolReference(res.content) {
		f.world.put(&entry{key: "load:" + use.name + ":" + use.input.Raw, tool: use.name,
			input: []byte(use.input.Raw), content: res.content, text: res.text, pinned: true}, f.step)
		return
	}
	key := callKeyPrefix + use.id
	line, at, whole := callLine(use, res, res.textTokenCount(f.cfg.tok))
	f.world.evicted[key] = line
	f.world.evictedAt[key] = f.step
	c := foldedCall{group: use.name + " → " + line[at:]}
	if !whole {
		c.text = res.text
	}
	f.calls[key] = c
}

// foldedCall is a folded call of another tool: group is its tool and the
// start of its result, which calls repeating the same effect share (a
// todo list rewritten forty times answers forty times "Todos have been
// modified successfully"), and text the result's whole text when its
// note line names it by recall reference.
type foldedCall struct {
	group, text string
}

// hasToolReference reports whether a tool_result's content holds a
// tool_reference block.
func hasToolReference(content []byte) bool {
	if len(content) == 0 || content[0] != '[' {
		return false
	}
	found := false
	gjson.ParseBytes(content).ForEach(func(_, b gjson.Result) bool {
		found = b.Get("type").Str == "tool_reference"
		return !found
	})
	return found
}

// callLine is the note's line for a call of another tool; line[at:] is
// what it says of the result, and whole reports whether that holds the
// result's whole text (else it names the result's recall reference);
// tokens is the result text's estimate.
func callLine(use block, res *block, tokens int) (line string, at int, whole bool) {
	var sb strings.Builder
	sb.WriteString(use.name)
	if in := strings.TrimSpace(use.input.Raw); in != "" && in != "{}" {
		sb.WriteByte(' ')
		sb.WriteString(clip(in, lineBytes))
	}
	sb.WriteString(" → ")
	at = sb.Len()
	if res.isError {
		sb.WriteString("error: ")
	}
	text := withoutReminders(res.text)
	first := clip(text, lineBytes)
	whole = first == text
	switch {
	case text == "" && res.images > 0:
		fmt.Fprintf(&sb, "(%d image(s), not kept)", res.images)
		return sb.String(), at, true
	case text == "":
		sb.WriteString("(no output)")
	default:
		sb.WriteString(first)
	}
	if res.images > 0 {
		fmt.Fprintf(&sb, " (and %d image(s), not kept)", res.images)
	}
	if !whole {
		fmt.Fprintf(&sb, " (~%d tokens) [recall %s]", tokens, recall.Ref(res.text))
	}
	return sb.String(), at, whole
}

// withoutReminders is a result's text without the <system-reminder> notes
// Claude Code appends to it (volatile, not the tool's output), trimmed.
func withoutReminders(text string) string {
	for {
		i := strings.Index(text, "<system-reminder>")
		if i < 0 {
			return strings.TrimSpace(text)
		}
		j := strings.Index(text[i:], "</system-reminder>")
		if j < 0 {
			return strings.TrimSpace(text[:i])
		}
		text = text[:i] + text[i+j+len("</system-reminder>"):]
	}
}

// isCall reports whether a dropped key is a folded call of another tool.
func isCall(key string) bool { return strings.HasPrefix(key, callKeyPrefix) }
