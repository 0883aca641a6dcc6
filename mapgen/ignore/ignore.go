// Package ignore decides which paths of a repository git would ignore, so a
// walk leaves out what the user keeps out of version control.
//
// Pattern matching is go-git's gitignore package; this package reads the
// files git reads (the global excludes file, .git/info/exclude, every
// .gitignore from the work tree's top down to the walked directory) and
// adapts the lines to what that matcher expects: comments and blank lines
// dropped, unescaped trailing spaces trimmed, "[!…]" bracket negation
// rewritten to "[^…]" (Go's glob syntax), and a "**" that is not a whole
// path segment read as "*", as git does.
//
// Paths are slash-separated and relative to the top of the git work tree
// (Context.Prefix tells the walk root's place in it). Rules are checked from
// the last to the first and the first that matches decides, so deeper files
// (appended later) override shallower ones. As in git, a path inside an
// ignored directory cannot be re-included: the walk does not descend into a
// directory that Ignored reports.
package ignore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Rules is an ordered list of patterns, outer sources first.
type Rules []gitignore.Pattern

// Parse reads the patterns of an ignore file that applies below domain (the
// slash-separated directory of a .gitignore relative to the work tree's
// top; "" for the top itself and for the global and info/exclude files).
func Parse(domain string, data []byte) Rules {
	var dom []string
	if domain = strings.Trim(domain, "/"); domain != "" {
		dom = strings.Split(domain, "/")
	}
	var rules Rules
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		if line = trimTrailingSpaces(line); line == "" {
			continue
		}
		neg := ""
		if line[0] == '!' {
			neg, line = "!", line[1:]
		}
		if strings.Trim(line, "/") == "" {
			continue // "/" or "!" alone match nothing in git
		}
		line = adapt(line)
		if inner, ok := strings.CutSuffix(line, "/**"); ok && inner != "" && inner != "**" {
			// git: "dir/**" matches everything inside dir but not dir
			// itself; go-git would match dir too.
			rules = append(rules, inside{inner: gitignore.ParsePattern("/"+strings.TrimPrefix(inner, "/"), dom), negate: neg != ""})
			continue
		}
		rules = append(rules, gitignore.ParsePattern(neg+line, dom))
	}
	return rules
}

// inside matches the paths strictly below a directory that inner matches.
type inside struct {
	inner  gitignore.Pattern
	negate bool
}

func (p inside) Match(path []string, isDir bool) gitignore.MatchResult {
	for i := len(path) - 1; i >= 1; i-- {
		if p.inner.Match(path[:i], true) != gitignore.NoMatch {
			if p.negate {
				return gitignore.Include
			}
			return gitignore.Exclude
		}
	}
	return gitignore.NoMatch
}

// trimTrailingSpaces drops trailing spaces unless escaped with a backslash;
// an escaped one stays escaped ("\ "), which the glob reads as a space.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			return s[:end]
		}
		end--
	}
	return s[:end]
}

// adapt rewrites git glob syntax that Go's path matching reads differently:
// "[!" opening a bracket expression becomes "[^", and a "**" inside a path
// segment (not the whole segment) becomes "*".
func adapt(p string) string {
	var b strings.Builder
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if i > 0 {
			b.WriteByte('/')
		}
		if seg != "**" {
			for strings.Contains(seg, "**") {
				seg = strings.ReplaceAll(seg, "**", "*")
			}
		}
		inClass := false
		for j := 0; j < len(seg); j++ {
			c := seg[j]
			switch {
			case c == '\\' && j+1 < len(seg):
				b.WriteByte(c)
				j++
				b.WriteByte(seg[j])
				continue
			case c == '[' && !inClass:
				inClass = true
				b.WriteByte(c)
				if j+1 < len(seg) && seg[j+1] == '!' {
					b.WriteByte('^')
					j++
				}
				if j+1 < len(seg) && seg[j+1] == ']' { // a leading ] is literal; Go wants it escaped
					j++
					b.WriteString(`\]`)
				}
				continue
			case c == ']' && inClass:
				inClass = false
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// With returns rs followed by more, never sharing rs's backing array, so
// sibling directories extend one parent list independently.
func (rs Rules) With(more Rules) Rules {
	if len(more) == 0 {
		return rs
	}
	out := make(Rules, 0, len(rs)+len(more))
	return append(append(out, rs...), more...)
}

// Ignored reports whether rel (slash-separated, relative to the work tree's
// top) is ignored: the last rule that matches decides.
func (rs Rules) Ignored(rel string, isDir bool) bool {
	if len(rs) == 0 {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := len(rs) - 1; i >= 0; i-- {
		switch rs[i].Match(parts, isDir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

// Context is what git's ignore rules look like from a walk root.
type Context struct {
	// Prefix is the walk root relative to the work tree's top, slash-separated;
	// "" when the root is the top or not inside a git work tree.
	Prefix string
	// Rules are the patterns of the global excludes file, .git/info/exclude
	// and the .gitignore files above the walk root (the walk adds the root's
	// own and deeper ones as it descends).
	Rules Rules
	// Sources are the files consulted (present or not); a change to any of
	// them can change what is ignored.
	Sources []string
}

// Load finds the git work tree that contains root (an absolute directory)
// and reads the ignore files that apply to it. getenv resolves HOME and
// XDG_CONFIG_HOME for the global excludes file. Unreadable files count as
// empty: ignore rules only ever narrow a walk.
func Load(root string, getenv func(string) string) Context {
	var c Context
	top, gitDir := findWorkTree(root)
	read := func(p, domain string) {
		c.Sources = append(c.Sources, p)
		if data, err := os.ReadFile(p); err == nil {
			c.Rules = append(c.Rules, Parse(domain, data)...)
		}
	}
	configs := globalConfigs(getenv)
	if gitDir != "" {
		configs = append(configs, filepath.Join(gitDir, "config"))
	}
	if excl := excludesFile(configs, getenv); excl != "" {
		read(excl, "")
	}
	global := c.Rules
	c.Sources = append(c.Sources, configs...)
	if top == "" {
		return c
	}
	read(filepath.Join(gitDir, "info", "exclude"), "")
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." {
		return c
	}
	c.Prefix = filepath.ToSlash(rel)
	// .gitignore files from the top down to the root's parent; the walk
	// reads the root's own. A root that the work tree itself ignores (a
	// tool's data inside a dotfiles checkout, say) was asked for by name: it
	// is mapped as a tree of its own, without the enclosing repository's
	// rules.
	dir, domain := top, ""
	for _, seg := range strings.Split(c.Prefix, "/") {
		read(filepath.Join(dir, ".gitignore"), domain)
		dir = filepath.Join(dir, seg)
		domain = strings.TrimPrefix(domain+"/"+seg, "/")
		if c.Rules.Ignored(domain, true) {
			return Context{Rules: global, Sources: c.Sources}
		}
	}
	return c
}

// findWorkTree returns the nearest directory at or above dir that holds a
// .git entry, and the git directory (for a .git file, the "gitdir:" it
// names); both "" outside a work tree.
func findWorkTree(dir string) (top, gitDir string) {
	for d := dir; ; {
		g := filepath.Join(d, ".git")
		if st, err := os.Stat(g); err == nil {
			if st.IsDir() {
				return d, g
			}
			if data, err := os.ReadFile(g); err == nil {
				if s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
					s = strings.TrimSpace(s)
					if !filepath.IsAbs(s) {
						s = filepath.Join(d, s)
					}
					return d, s
				}
			}
			return d, ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}

// configHome is git's $XDG_CONFIG_HOME, or ~/.config when unset or relative.
// It is git's rule (the same on macOS), not synaxi's directories, which
// internal/xdg resolves.
func configHome(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return x
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// globalConfigs lists git's system and global config files in the order
// git reads them (later ones win).
func globalConfigs(getenv func(string) string) []string {
	out := []string{"/etc/gitconfig"}
	if ch := configHome(getenv); ch != "" {
		out = append(out, filepath.Join(ch, "git", "config"))
	}
	if home := getenv("HOME"); home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// excludesFile returns core.excludesFile from the last config that sets it,
// else git's default $XDG_CONFIG_HOME/git/ignore.
func excludesFile(configs []string, getenv func(string) string) string {
	val := ""
	for _, p := range configs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cfg := config.New()
		if err := config.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
			continue
		}
		if v := cfg.Section("core").Options.Get("excludesfile"); v != "" {
			val = v
		}
	}
	if val == "" {
		if ch := configHome(getenv); ch != "" {
			return filepath.Join(ch, "git", "ignore")
		}
		return ""
	}
	if rest, ok := strings.CutPrefix(val, "~/"); ok {
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, rest)
		}
		return ""
	}
	return val
}
