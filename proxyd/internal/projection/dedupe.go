package projection

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// A result the served context already shows is not shown twice: when a
// tool_result takes its curated form (at the re-fold after its turn) and
// its text is byte-identical to the latest copy of a result with the same
// identity (file path and range, command, search input) that the same
// request serves verbatim — in the snapshot or earlier in the tail — it
// becomes a short reference naming that result. Nothing is lost: the
// earlier copy stays in view as long as the reference does (both live
// until the next re-projection, which rebuilds the index from the new
// snapshot), and the visibility export reads the reference as the text it
// stands for.

// curation is what the curated form of a tool_result did to it.
type curation int

const (
	curVerbatim  curation = iota // served as the client sent it
	curReference                 // replaced by a reference to an identical earlier result
	curOther                     // restored, shortened or not a result the index can use
)

// shownCopy is the latest verbatim copy of a result with some identity.
type shownCopy struct {
	id    string // its tool_use id (real in the tail, synthetic in the snapshot)
	text  string
	label string
}

// resultKey is the identity of a call's result, as the world keys it; ok
// is false for calls without one.
func resultKey(use block) (key string, ok bool) {
	in := use.input
	switch use.name {
	case "Read":
		path := in.Get("file_path").String()
		if path == "" {
			return "", false
		}
		if in.Get("offset").Exists() || in.Get("limit").Exists() {
			return fmt.Sprintf("%s#%s:%s", path, in.Get("offset").Raw, in.Get("limit").Raw), true
		}
		return path, true
	case "Bash":
		cmd := in.Get("command").String()
		return "cmd:" + cmd, cmd != ""
	case "Grep", "Glob":
		return strings.ToLower(use.name) + ":" + in.Raw, true
	}
	return "", false
}

// callLabel names a call in a reference, from its tool name and input.
func callLabel(tool string, input gjson.Result) string {
	switch tool {
	case "Read":
		label := "Read " + clip(input.Get("file_path").String(), 200)
		offset, limit := input.Get("offset"), input.Get("limit")
		if offset.Exists() || limit.Exists() {
			label += fmt.Sprintf(" (offset %s, limit %s)", orNone(offset.Raw), orNone(limit.Raw))
		}
		return label
	case "Bash":
		return "Bash `" + clip(input.Get("command").String(), 160) + "`"
	}
	return tool + " " + clip(input.Raw, 160)
}

func orNone(raw string) string {
	if raw == "" {
		return "none"
	}
	return raw
}

// reference is the curated text of a result identical to an earlier one.
func reference(c shownCopy) string {
	return fmt.Sprintf("[synaxi: this result is byte-identical to the result of %s (tool_use_id %s) shown earlier in this conversation, which is still current; it is not repeated here.]", c.label, c.id)
}

// dedupable reports whether a result's text may be indexed or referenced.
func dedupable(b block) bool {
	t := strings.TrimSpace(b.text)
	return !b.isError && b.images == 0 && t != "" &&
		!strings.HasPrefix(t, unchangedStub) && !strings.HasPrefix(t, clearedStub)
}

// earlierCopy returns the served copy a result can refer to.
func (f *fold) earlierCopy(use block, b block) (shownCopy, bool) {
	if !dedupable(b) {
		return shownCopy{}, false
	}
	key, ok := resultKey(use)
	if !ok {
		return shownCopy{}, false
	}
	c, ok := f.shown[key]
	if !ok || c.text != b.text || len(reference(c)) >= len(b.text) {
		return shownCopy{}, false
	}
	return c, true
}

// indexSnapshot restarts the index from the snapshot just rendered: its
// entries whose content is their whole text.
func (f *fold) indexSnapshot() {
	f.shown = make(map[string]shownCopy, len(f.where))
	f.refs = map[string]string{}
	for _, g := range f.gens {
		for _, e := range g.list {
			if f.world.entries[e.key] == e {
				f.indexEntry(e)
			}
		}
	}
}

// indexEntry makes a snapshot entry the latest copy of its identity when
// its content is its whole text.
func (f *fold) indexEntry(e *entry) {
	if e.short || strings.TrimSpace(e.text) == "" {
		return
	}
	f.shown[e.key] = shownCopy{id: e.id(), text: e.text, label: callLabel(e.tool, gjson.ParseBytes(e.input))}
}

// indexResult records how a tail result was curated: a verbatim copy
// becomes the latest copy of its identity; a reference leaves the copy it
// names in place; anything else means the latest result is not a copy the
// request shows verbatim.
func (f *fold) indexResult(b block, how curation) {
	use, ok := f.uses[b.toolUseID]
	if !ok {
		return
	}
	key, ok := resultKey(use)
	if !ok {
		return
	}
	switch {
	case how == curReference:
		f.refs[b.toolUseID] = b.text
	case how == curVerbatim && dedupable(b):
		f.shown[key] = shownCopy{id: b.toolUseID, text: b.text, label: callLabel(use.name, use.input)}
	default:
		delete(f.shown, key)
	}
}
