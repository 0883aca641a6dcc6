package projection

import (
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/visibility"
)

// visibility lists the files whose content the served request shows, with
// their line ranges, and the files that were read but dropped.
func (f *fold) visibility(now time.Time) *visibility.Export {
	files := map[string]visibility.File{}
	for _, e := range f.world.entries {
		if e.path == "" || !f.inSnapshot(e.key) {
			continue
		}
		addRange(files, e.path, e.firstLine, e.lastLine)
	}
	for _, s := range f.tail {
		for i, k := range s.kinds {
			if k != "tool_result" {
				continue
			}
			id := gjson.GetBytes(s.blocks[i], "tool_use_id").String()
			u, ok := f.uses[id]
			if !ok || u.name != "Read" {
				continue
			}
			text, ref := f.refs[id]
			if !ref {
				text = gjson.GetBytes(s.blocks[i], "content").String()
			}
			first, last, _, ok := numberedRange(text)
			if !ok {
				continue
			}
			addRange(files, u.input.Get("file_path").String(), first, last)
		}
	}
	for k := range f.world.evicted {
		path, _, _ := strings.Cut(k, "#")
		if strings.HasPrefix(k, "cmd:") || strings.HasPrefix(k, "grep:") || strings.HasPrefix(k, "glob:") || isCall(k) {
			continue
		}
		fv := files[path]
		if len(fv.Visible) == 0 {
			fv.Evicted = true
		}
		files[path] = fv
	}
	return &visibility.Export{V: visibility.Version, Updated: now, Files: files}
}

func addRange(files map[string]visibility.File, path string, first, last int) {
	if path == "" || first <= 0 {
		return
	}
	fv := files[path]
	fv.Visible = append(fv.Visible, visibility.Range{Start: first, End: last})
	fv.Evicted = false
	files[path] = fv
}
