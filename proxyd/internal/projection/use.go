package projection

import (
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// A file the agent reads once and then works from — a constant it copies
// into every fix, a function its edits call — is used without being read
// or edited again: the agent's edits name what it defines. refer marks
// such a file used at the edit's step, and reused (world.idle), so the
// working set, the rebuild's pins and eviction keep it in view while the
// agent works from it. Narrow on purpose (edits only, a name one file
// defines, small files): broader signals kept more than their recoveries
// cost on the replay panel (docs/projection.md, "Tuning history").

// maxDefiners is how many files in view may define a name a call names
// for it to mark them used: a name many files define (a common method, a
// field) says nothing about which one the agent works from.
const maxDefiners = 1

// minName is the shortest name a definition or a call's word counts.
const minName = 4

// referTenths bounds, in tenths of the budget, the size of a file an edit
// can mark used by naming what it defines.
const referTenths = 5

// defKeyword reports whether a source file defines a name after word w,
// across the languages the panel's sessions edit.
func defKeyword(w string) bool {
	switch w {
	case "func", "type", "const", "var", "let", "def", "defp", "defmodule", "defmacro",
		"class", "struct", "enum", "trait", "interface", "fn", "function", "module", "val", "object":
		return true
	}
	return false
}

// leadWords is how many words of a line definitions reads.
const leadWords = 8

// defScratch holds the names being collected by definitions, which
// returns an exact-size copy (one allocation per file).
var defScratch = sync.Pool{New: func() any { return new([]string) }}

// definitions returns the names text defines: each word after a
// definition keyword (after a Go method's receiver) among the first
// leadWords words of a line (a read's line number, modifiers such as
// pub, export or async, the keyword, the name), in order, repeats
// included; nil when none. Only the start of each line is read, up to
// its first definition, so a file costs about one newline search a line.

func definitions(text string) []string {
	buf := defScratch.Get().(*[]string)
	defer defScratch.Put(buf)
	out := (*buf)[:0]
	defer func() { clear(out); *buf = out[:0] }()
	after := false // the last word was a definition keyword
	words := 0     // of the line so far
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case words >= leadWords && !after:
			// Definitions lead their line: skip the rest of this one.
			k := strings.IndexByte(text[i:], '\n')
			if k < 0 {
				i = len(text)
			} else {
				i += k + 1
			}
			words = 0
		case c == '\n':
			after, words = false, 0
			i++
		case isNameByte(c):
			words++
			j := i + 1
			for j < len(text) && isNameByte(text[j]) {
				j++
			}
			w := text[i:j]
			switch {
			case j-i <= len("defmodule") && defKeyword(w):
				after = true
			case after:
				after = false
				if len(w) >= minName && (w[0] < '0' || w[0] > '9') {
					out = append(out, w)
				}
				words = leadWords // one definition a line
			}
			i = j
		case c == '(' && after:
			// A Go method's receiver: the name follows its closing paren.
			if k := strings.IndexByte(text[i:], ')'); k > 0 && k < 80 {
				i += k + 1
			} else {
				after = false
				i++
			}
		case c == ' ' || c == '\t' || c == '*':
			i++
		default:
			after = false
			i++
		}
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Clone(out)
}

func isNameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// callWords is the set of words (of at least minName bytes) of the
// strings of a call's input.
func callWords(in gjson.Result) map[string]bool {
	words := map[string]bool{}
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			s := v.Str
			for i := 0; i < len(s); {
				if !isNameByte(s[i]) {
					i++
					continue
				}
				j := i
				for j < len(s) && isNameByte(s[j]) {
					j++
				}
				if j-i >= minName {
					words[s[i:j]] = true
				}
				i = j
			}
		case v.IsArray() || v.IsObject():
			v.ForEach(func(_, c gjson.Result) bool { walk(c); return true })
		}
	}
	walk(in)
	return words
}

// refer marks used at step the files in view whose definitions an edit
// names: a name at most maxDefiners of them define, named in the edit's
// old or new text, marks those files used, if each is at most
// referTenths of the budget (a file larger than that is cheaper to read
// again than to keep). The file the edit changes is left to observe.
func (f *fold) refer(call block, step int) {
	if call.name != "Edit" && call.name != "MultiEdit" {
		return
	}
	own := call.input.Get("file_path").String()
	words := callWords(call.input)
	if len(words) == 0 {
		return
	}
	definers := map[string][]string{}
	for key, e := range f.world.entries {
		if e.path == "" || e.partial || e.path == own || e.size()*10 > referTenths*f.cfg.budget {
			continue
		}
		for _, d := range e.defs {
			if ks := definers[d]; words[d] && (len(ks) == 0 || ks[len(ks)-1] != key) {
				definers[d] = append(ks, key)
			}
		}
	}
	for _, keys := range definers {
		if len(keys) <= maxDefiners {
			for _, k := range keys {
				f.world.referred(k, step)
			}
		}
	}
}
