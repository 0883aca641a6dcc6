package projection

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The tool roster is the first part of the cached prefix: any change to
// it re-writes everything after it. So it is a function of the tools the
// client sends and the tools the conversation has called so far, which
// only grows: a tool once called stays in full, and the roster never
// oscillates as calls enter or leave the served messages.
//
// With trimming, tools outside the core set that the conversation has
// never called are left out; with stubs, they are served as stubs — the
// name, the description's first sentence and the input schema without its
// descriptions — and a call of one restores its full schema from the next
// request on (the request that carries the call's result). Core tools,
// deferred-loading placeholders and server tools (those with a "type")
// are always served as sent. A roster is never emptied.

// coreTools are always served in full.
var coreTools = []string{"Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob", "NotebookEdit", "TodoWrite"}

// roster says how tools the conversation has never called are served.
type roster int

const (
	rosterAll  roster = iota // as sent
	rosterStub               // as stubs
	rosterTrim               // left out
)

func (c Config) roster() roster {
	switch {
	case c.TrimTools:
		return rosterTrim
	case c.StubTools:
		return rosterStub
	}
	return rosterAll
}

// projectTools is the served roster: the client's tools without their
// cache_control, those never called served as ro says. called holds the
// names of the tools the conversation has called.
func projectTools(tools gjson.Result, ro roster, called map[string]bool) [][]byte {
	if !tools.IsArray() {
		return nil
	}
	var all, kept [][]byte
	tools.ForEach(func(_, t gjson.Result) bool {
		raw := stripCacheControl([]byte(t.Raw))
		all = append(all, raw)
		name := t.Get("name").String()
		switch {
		case called[name] || !shortens(t, ro):
			kept = append(kept, raw)
		case ro == rosterStub || isRecallTool(name):
			kept = append(kept, stubTool(t))
		}
		return true
	})
	if len(kept) == 0 {
		return all
	}
	return kept
}

// shortens reports whether ro serves tool t shortened (as a stub, or not
// at all) until the conversation calls it.
func shortens(t gjson.Result, ro roster) bool {
	return ro != rosterAll && !slices.Contains(coreTools, t.Get("name").String()) && !t.Get("defer_loading").Bool() && !t.Get("type").Exists()
}

// shortened returns the names of the tools ro serves shortened until
// their first call, in the client's order: the first call of one changes
// the roster, and with it every byte of the cached prefix after it.
func shortened(tools gjson.Result, ro roster) []string {
	var names []string
	if !tools.IsArray() {
		return nil
	}
	tools.ForEach(func(_, t gjson.Result) bool {
		if shortens(t, ro) {
			names = append(names, t.Get("name").String())
		}
		return true
	})
	return names
}

// isRecallTool says whether name is synaxi's recall tool, however its MCP
// server was registered (mcp__plugin_synaxi_synaxi__recall from the plugin,
// mcp__synaxi__recall by hand). Fold notes name it as the way back to a
// folded output, so a trimmed roster keeps it (as a stub): leaving it out
// until its first call would mean it could never be called.
func isRecallTool(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	return ok && strings.HasSuffix(rest, "__recall") && strings.Contains(rest, "synaxi")
}

// stubNote ends a stub's description.
const stubNote = " (Shortened: its full description is served after its first call.)"

// stubTool is a tool's stub: its name, the first sentence of its
// description and its input schema without descriptions, enough to call
// it correctly.
func stubTool(t gjson.Result) []byte {
	b := []byte(`{"name":`)
	b = append(b, jsonString(t.Get("name").String())...)
	b = append(b, `,"description":`...)
	b = append(b, jsonString(firstSentence(t.Get("description").String(), 200)+stubNote)...)
	if s := t.Get("input_schema"); s.Exists() {
		b = append(b, `,"input_schema":`...)
		b = appendBareSchema(b, s)
	}
	return append(b, '}')
}

// firstSentence is the text up to the end of its first sentence or line,
// at most n bytes (see clip).
func firstSentence(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return clip(s, n)
}

// schemaDropped are the JSON Schema keywords a stub leaves out: prose and
// examples, never a constraint.
var schemaDropped = []string{"description", "examples", "title", "$comment"}

// appendBareSchema appends schema s without the keywords of schemaDropped,
// at every level, keeping the order of what remains.
func appendBareSchema(b []byte, s gjson.Result) []byte {
	if !s.IsObject() {
		return append(b, s.Raw...)
	}
	b = append(b, '{')
	first := true
	s.ForEach(func(k, v gjson.Result) bool {
		if slices.Contains(schemaDropped, k.Str) {
			return true
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(append(b, k.Raw...), ':')
		switch k.Str {
		case "properties", "$defs", "definitions", "patternProperties":
			b = appendSchemaMap(b, v)
		case "items", "additionalProperties", "not", "contains", "propertyNames":
			b = appendBareSchema(b, v)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			b = appendSchemaList(b, v)
		default:
			b = append(b, v.Raw...)
		}
		return true
	})
	return append(b, '}')
}

// appendSchemaMap appends an object whose values are schemas.
func appendSchemaMap(b []byte, m gjson.Result) []byte {
	if !m.IsObject() {
		return append(b, m.Raw...)
	}
	b = append(b, '{')
	first := true
	m.ForEach(func(k, v gjson.Result) bool {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendBareSchema(append(append(b, k.Raw...), ':'), v)
		return true
	})
	return append(b, '}')
}

// appendSchemaList appends an array of schemas.
func appendSchemaList(b []byte, l gjson.Result) []byte {
	if !l.IsArray() {
		return append(b, l.Raw...)
	}
	b = append(b, '[')
	i := 0
	l.ForEach(func(_, v gjson.Result) bool {
		if i > 0 {
			b = append(b, ',')
		}
		i++
		b = appendBareSchema(b, v)
		return true
	})
	return append(b, ']')
}
