package projection

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Builders for Messages request bodies in tests.

type obj = map[string]any

func text(s string) obj { return obj{"type": "text", "text": s} }

func toolUse(id, name string, input obj) obj {
	return obj{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id string, content any, isError bool) obj {
	r := obj{"type": "tool_result", "tool_use_id": id, "content": content}
	if isError {
		r["is_error"] = true
	}
	return r
}

func thinking(s string) obj {
	return obj{"type": "thinking", "thinking": s, "signature": "sig-" + fmt.Sprint(len(s))}
}

func user(blocks ...obj) obj      { return obj{"role": "user", "content": blocks} }
func assistant(blocks ...obj) obj { return obj{"role": "assistant", "content": blocks} }

var testTools = []obj{}

func init() {
	for _, n := range []string{"Read", "Write", "Edit", "Bash", "Grep", "Glob", "TodoWrite", "WebFetch", "mcp__x__y"} {
		testTools = append(testTools, obj{"name": n, "description": n + " tool", "input_schema": obj{"type": "object", "properties": obj{}}})
	}
}

// reqBody is a worker request in Claude Code's shape.
func reqBody(msgs []obj) []byte {
	b, err := json.Marshal(obj{
		"model":      "claude-sonnet-4-5",
		"max_tokens": 32000,
		"system": []obj{
			{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;"},
			{"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK.", "cache_control": obj{"type": "ephemeral"}},
			{"type": "text", "text": "SYNAXI-PROJECTION-WORKER\nworker rules", "cache_control": obj{"type": "ephemeral"}},
		},
		"tools":    testTools,
		"messages": msgs,
		"stream":   true,
	})
	if err != nil {
		panic(err)
	}
	return b
}

// numbered renders file content as Claude Code's Read does.
func numbered(lines []string) string {
	var sb strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&sb, "%6d→%s\n", i+1, l)
	}
	return sb.String()
}

// randomConversation is a worker conversation with parallel calls, errors,
// images, thinking blocks, edits, user follow-ups and, sometimes, a
// compaction summary as the first message.
func randomConversation(r *rand.Rand, steps int) []obj {
	files := map[string][]string{}
	for i := range 12 {
		n := 5 + r.IntN(300)
		lines := make([]string, n)
		for j := range lines {
			lines[j] = fmt.Sprintf("line %d of file %d: %s", j+1, i, strings.Repeat("x", r.IntN(60)))
		}
		files[fmt.Sprintf("/w/src/f%02d.go", i)] = lines
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths) // map order would make the conversation differ from run to run
	goal := "Fix the failing tests in /w and make `go test ./...` pass."
	if r.IntN(4) == 0 {
		goal = "This session is being continued from a previous conversation that ran out of context. Summary: ..." + strings.Repeat(" earlier work", 50)
	}
	msgs := []obj{
		user(text("<system-reminder>\nAttribution note\n</system-reminder>\n"), text(goal)),
		{"role": "system", "content": "# Environment\n - Primary working directory: /w", "output_config": obj{"effort": "medium"}},
	}
	id := 0
	nextID := func() string { id++; return fmt.Sprintf("toolu_%04d", id) }
	for range steps {
		if r.IntN(12) == 0 {
			msgs = append(msgs, assistant(text("Done so far; anything else?")), user(text("Also run the linter.")))
			continue
		}
		var uses, results []obj
		var content []obj
		if r.IntN(3) == 0 {
			content = append(content, thinking("let me think "+strings.Repeat("hm ", r.IntN(20))))
		}
		if r.IntN(3) == 0 {
			content = append(content, text("Looking at the code."))
		}
		calls := 1 + r.IntN(3)
		for range calls {
			cid := nextID()
			p := paths[r.IntN(len(paths))]
			switch k := r.IntN(10); {
			case k < 4:
				in := obj{"file_path": p}
				res := any(numbered(files[p]))
				isErr := false
				switch r.IntN(8) {
				case 0:
					res, isErr = "File does not exist.", true
				case 1:
					in["offset"], in["limit"] = 3, 10
				case 2:
					res = []obj{{"type": "image", "source": obj{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}}
				case 3:
					res = "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading."
				}
				uses = append(uses, toolUse(cid, "Read", in))
				results = append(results, toolResult(cid, res, isErr))
			case k < 6:
				cmd := []string{"go test ./...", "ls -la", "python script.py", "git status"}[r.IntN(4)]
				out := strings.Repeat("output line\n", 1+r.IntN(800))
				isErr := r.IntN(3) == 0
				if isErr && cmd == "python script.py" {
					out = "bash: python: command not found"
				}
				uses = append(uses, toolUse(cid, "Bash", obj{"command": cmd}))
				results = append(results, toolResult(cid, out, isErr))
			case k < 8:
				lines := files[p]
				ln := r.IntN(len(lines))
				old := lines[ln]
				lines[ln] = old + " // fixed"
				uses = append(uses, toolUse(cid, "Edit", obj{"file_path": p, "old_string": old, "new_string": lines[ln]}))
				results = append(results, toolResult(cid, "The file "+p+" has been updated successfully.", false))
			case k == 8:
				uses = append(uses, toolUse(cid, "Grep", obj{"pattern": "func", "path": "/w"}))
				results = append(results, toolResult(cid, strings.Join(paths, "\n"), false))
			default:
				uses = append(uses, toolUse(cid, "TodoWrite", obj{"todos": []obj{{"content": "x", "status": "pending"}}}))
				results = append(results, toolResult(cid, "Todos have been modified successfully.", false))
			}
		}
		r.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
		if r.IntN(5) == 0 {
			results = append(results, text("<system-reminder>\nThe todo list changed.\n</system-reminder>"))
		}
		msgs = append(msgs, assistant(append(content, uses...)...), user(results...))
	}
	return msgs
}
