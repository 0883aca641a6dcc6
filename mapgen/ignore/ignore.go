// Package ignore implements the gitignore pattern rules that decide which
// paths of a repository a walk leaves out.
//
// Supported: blank lines and # comments, backslash escapes for a leading # or
// !, trailing spaces (unless escaped), negation with !, dir-only patterns with a
// trailing /, anchoring (a pattern with a / at its start or middle matches from
// the directory of its .gitignore; one without matches a name at any depth),
// *, ? and [...] within one path segment, and ** as a leading, trailing or
// middle segment. Rules are checked in order and the last match wins; rules
// from deeper .gitignore files come after their parents'. As in git, a path
// inside an excluded directory cannot be re-included: callers stop descending
// into a directory that Match reports ignored.
package ignore

import (
	"path"
	"strings"
)

// Rule is one parsed gitignore pattern.
type Rule struct {
	base     string   // directory of the .gitignore, slash-separated, "" for the root
	segments []string // pattern split on "/"
	negate   bool
	dirOnly  bool
	anchored bool
	text     string // the original line, for diagnostics
}

// String returns the pattern as written in its file.
func (r Rule) String() string { return r.text }

// Parse reads the rules of a .gitignore file found in directory base (a
// slash-separated path relative to the walk root, "" for the root itself).
func Parse(base string, data []byte) []Rule {
	base = strings.Trim(base, "/")
	var rules []Rule
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if r, ok := parseLine(base, line); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseLine(base, line string) (Rule, bool) {
	r := Rule{base: base, text: line}
	line = trimTrailingSpaces(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return Rule{}, false
	}
	switch {
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return Rule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
	}
	r.segments = strings.Split(line, "/")
	if !r.anchored && r.segments[0] != "**" {
		// A bare name matches at any depth: the same as a leading "**/".
		r.segments = append([]string{"**"}, r.segments...)
	}
	for _, s := range r.segments {
		if s != "**" && !validSegment(s) {
			return Rule{}, false
		}
	}
	return r, true
}

// trimTrailingSpaces drops trailing spaces that are not escaped with a
// backslash, and turns an escaped trailing space into a plain one.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			return s[:end-2] + " "
		}
		end--
	}
	return s[:end]
}

// validSegment reports whether path.Match accepts the glob.
func validSegment(s string) bool {
	_, err := path.Match(s, "")
	return err == nil
}

// Match reports whether the rule matches rel (slash-separated, relative to the
// walk root).
func (r Rule) Match(rel string, isDir bool) (matched bool) {
	if r.dirOnly && !isDir {
		return false
	}
	sub := rel
	if r.base != "" {
		if !strings.HasPrefix(rel, r.base+"/") {
			return false
		}
		sub = rel[len(r.base)+1:]
	}
	return matchSegments(r.segments, strings.Split(sub, "/"))
}

// matchSegments matches glob segments against path segments, "**" standing
// for any number of whole segments (at least one when it ends the pattern).
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(name) >= 1
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Rules is an ordered list of rules from the root's and nested .gitignore
// files, parents first.
type Rules []Rule

// Ignored reports whether rel is ignored: the last rule that matches decides.
func (rs Rules) Ignored(rel string, isDir bool) bool {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Match(rel, isDir) {
			return !rs[i].negate
		}
	}
	return false
}

// With returns a new list with more appended, never sharing the backing array
// with rs, so sibling directories can extend one parent list independently.
func (rs Rules) With(more []Rule) Rules {
	if len(more) == 0 {
		return rs
	}
	out := make(Rules, 0, len(rs)+len(more))
	return append(append(out, rs...), more...)
}
