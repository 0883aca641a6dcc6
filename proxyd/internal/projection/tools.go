package projection

import (
	"slices"

	"github.com/tidwall/gjson"
)

// coreTools are kept when tools are trimmed.
var coreTools = []string{"Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob", "NotebookEdit", "TodoWrite"}

// projectTools strips tool cache_control and, when trimming, keeps the core
// tools, deferred-loading placeholders and every tool the served messages
// call. The list is never emptied by trimming.
func projectTools(tools gjson.Result, trim bool, msgs []served) [][]byte {
	if !tools.IsArray() {
		return nil
	}
	called := map[string]bool{}
	if trim {
		for _, m := range msgs {
			for i, k := range m.kinds {
				if k == "tool_use" {
					called[gjson.GetBytes(m.blocks[i], "name").String()] = true
				}
			}
		}
	}
	var all, kept [][]byte
	tools.ForEach(func(_, t gjson.Result) bool {
		raw := stripCacheControl([]byte(t.Raw))
		all = append(all, raw)
		name := t.Get("name").String()
		if !trim || called[name] || slices.Contains(coreTools, name) || t.Get("defer_loading").Bool() || t.Get("type").Exists() {
			kept = append(kept, raw)
		}
		return true
	})
	if len(kept) == 0 {
		return all
	}
	return kept
}
