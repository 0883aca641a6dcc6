package projection

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// ingest folds a user message's tool results into the world and memory.
func (f *fold) ingest(m message) {
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ != "tool_result" {
			continue
		}
		use, ok := f.uses[b.toolUseID]
		if !ok {
			continue
		}
		f.observe(use, b)
	}
}

func (f *fold) observe(use block, res *block) {
	in := use.input
	text := res.text
	f.mem.observe(use.name, in.Get("command").String(), text, res.isError)
	if !inWorld(use.name) {
		f.foreign(use, res)
		return
	}
	if res.isError || strings.HasPrefix(strings.TrimSpace(text), clearedStub) {
		return
	}
	step := f.step
	switch use.name {
	case "Read":
		path := in.Get("file_path").String()
		if path == "" {
			return
		}
		f.world.noteUse(path, step)
		if strings.HasPrefix(strings.TrimSpace(text), unchangedStub) {
			f.world.touch(path, step)
			if e, ok := f.world.observed[path]; ok {
				if _, in := f.world.entries[path]; !in {
					c := *e
					f.world.put(&c, step) // restored content is back in view
				}
			}
			return
		}
		e := &entry{key: path, tool: "Read", path: path, content: res.content, text: text}
		if res.content == nil {
			e.content = jsonString(text)
		} else {
			e.tokens = res.contentTokenCount(f.cfg.span) + entryOverhead
		}
		e.firstLine, e.lastLine, e.numbered, _ = numberedRange(text)
		if in.Get("offset").Exists() || in.Get("limit").Exists() {
			e.partial = true
			e.key = fmt.Sprintf("%s#%s:%s", path, in.Get("offset").Raw, in.Get("limit").Raw)
			e.input = []byte(in.Raw)
		} else {
			e.input = jsonObject("file_path", path)
		}
		f.world.put(e, step)
		if !e.partial && e.tokens*10 >= passMinTenths*f.cfg.budget {
			f.world.sample(path, step)
		}
	case "Write":
		path := in.Get("file_path").String()
		if path == "" {
			return
		}
		f.world.noteUse(path, step)
		lines := strings.Split(strings.TrimSuffix(in.Get("content").String(), "\n"), "\n")
		style := numbering{sep: "\t"}
		if old, ok := f.world.observed[path]; ok && old.numbered.sep != "" {
			style = old.numbered
		}
		text := renderNumbered(lines, style)
		f.world.put(&entry{key: path, tool: "Read", path: path, input: jsonObject("file_path", path),
			content: jsonString(text), text: text, numbered: style, firstLine: 1, lastLine: len(lines)}, step)
	case "Edit", "MultiEdit":
		f.world.noteUse(in.Get("file_path").String(), step)
		f.edited(in.Get("file_path").String(), use, step)
	case "Bash", "Grep", "Glob":
		key, input := strings.ToLower(use.name)+":"+in.Raw, []byte(in.Raw)
		if use.name == "Bash" {
			cmd := in.Get("command").String()
			if cmd == "" {
				return
			}
			key, input = "cmd:"+cmd, jsonObject("command", cmd)
		}
		content := res.content
		n := res.textTokenCount(f.cfg.tok)
		short := n > f.cfg.worldCap // the snapshot shows its head and tail only
		if short {
			content = jsonString(digest(text, n, use, 4*f.cfg.worldCap/2))
		}
		if content == nil {
			content = jsonString(text)
		}
		f.world.put(&entry{key: key, tool: use.name, input: input, content: content, text: text, short: short}, step)
	}
}

// edited follows an applied Edit (or MultiEdit) of path in the world. The
// file's whole content takes the edit, whether it is in view (the edited
// file replaces it) or was dropped from the snapshot and is kept to
// restore it (so Claude Code's "unchanged since last read" answer to a
// later Read restores the edited file, not the one before the edit). A
// partial view of the file (an offset/limit Read) is never left stale: it
// is dropped with a note. When the edit cannot be applied exactly, the
// file's content is dropped and forgotten.
func (f *fold) edited(path string, use block, step int) {
	w := f.world
	full, inView := w.entries[path]
	if !inView {
		full = w.observed[path]
	}
	var ne *entry
	if full != nil {
		ne = applyEdit(full, use)
	}
	stale := func(what string) string {
		return "Read " + what + ": edited since it was read; call Read to see the current content"
	}
	for _, k := range w.partialKeys(path) {
		e := w.entries[k]
		w.drop(k, stale(fmt.Sprintf("%s (lines %d-%d)", path, e.firstLine, e.lastLine)), step)
	}
	switch {
	case ne != nil && inView:
		w.put(ne, step)
	case ne != nil:
		w.observed[path] = ne
	case inView:
		w.drop(path, stale(path), step)
		delete(w.observed, path)
	default:
		delete(w.observed, path) // stale now; never restore it
	}
}

// applyEdit applies an Edit (or MultiEdit) to a whole-file Read entry;
// nil when it cannot be applied exactly.
func applyEdit(e *entry, use block) *entry {
	if e.partial || e.numbered.sep == "" {
		return nil
	}
	lines, first, _, _, ok := parseNumbered(e.text)
	if !ok || first != 1 {
		return nil
	}
	src := strings.Join(lines, "\n")
	type edit struct {
		old, new string
		all      bool
	}
	var edits []edit
	in := use.input
	if use.name == "MultiEdit" {
		in.Get("edits").ForEach(func(_, v gjson.Result) bool {
			edits = append(edits, edit{v.Get("old_string").String(), v.Get("new_string").String(), v.Get("replace_all").Bool()})
			return true
		})
	} else {
		edits = append(edits, edit{in.Get("old_string").String(), in.Get("new_string").String(), in.Get("replace_all").Bool()})
	}
	for _, ed := range edits {
		if ed.old == "" || !strings.Contains(src, ed.old) {
			return nil
		}
		if ed.all {
			src = strings.ReplaceAll(src, ed.old, ed.new)
		} else {
			if strings.Count(src, ed.old) != 1 {
				return nil
			}
			src = strings.Replace(src, ed.old, ed.new, 1)
		}
	}
	nl := strings.Split(src, "\n")
	text := renderNumbered(nl, e.numbered)
	return &entry{key: e.key, tool: "Read", path: e.path, input: e.input, content: jsonString(text), text: text,
		numbered: e.numbered, firstLine: 1, lastLine: len(nl)}
}
