package governor

import (
	"fmt"
	"path/filepath"

	"github.com/tidwall/gjson"
)

// Shell tells what a command line run in cwd may change: the files it
// names as edited, and whether it may change files it does not name. The
// hooks pass their bash parser; nil takes every command as editing nothing.
type Shell func(cmd, cwd string) (edits []string, any bool)

// FromTool classifies one Claude Code tool call from its name, its JSON
// input and its result, the same way for a hook's input and a transcript's
// tool_use and tool_result blocks.
func FromTool(name string, input []byte, cwd string, failed bool, output string, shell Shell) Call {
	in := gjson.ParseBytes(input)
	path := absPath(in.Get("file_path").Str, cwd)
	switch name {
	case "Bash":
		c := Call{Kind: Command, Command: in.Get("command").Str, Failed: failed, Output: output}
		if shell != nil {
			c.Edits, c.EditsAny = shell(c.Command, cwd)
		}
		return c
	case "Read":
		lines := ""
		if off, lim := in.Get("offset").Int(), in.Get("limit").Int(); off > 0 || lim > 0 {
			lines = fmt.Sprintf("%d+%d", off, lim)
		}
		return Call{Kind: Read, Path: path, Lines: lines, Output: output}
	case "Edit":
		return Call{Kind: Edit, Path: path, Pairs: []Pair{{Old: in.Get("old_string").Str, New: in.Get("new_string").Str}}}
	case "MultiEdit":
		c := Call{Kind: Edit, Path: path}
		for _, e := range in.Get("edits").Array() {
			c.Pairs = append(c.Pairs, Pair{Old: e.Get("old_string").Str, New: e.Get("new_string").Str})
		}
		return c
	case "Write":
		return Call{Kind: Edit, Path: path, Whole: true, Pairs: []Pair{{New: in.Get("content").Str}}}
	case "NotebookEdit":
		return Call{Kind: Edit, Path: absPath(in.Get("notebook_path").Str, cwd)}
	}
	return Call{Kind: Other}
}

func absPath(p, cwd string) string {
	if p == "" {
		return ""
	}
	if len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		return p // a Windows path: absolute, as the transcript wrote it
	}
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}
