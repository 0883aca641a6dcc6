package trim

import (
	"regexp"
	"strings"
)

// CommandKey is what identifies a shell command across its variants: the
// program and its first word after it, from the command's first line,
// with leading `cd DIR &&`, environment assignments and `sudo`/`time`
// removed ("go test", "npm run", "git status"). A command of one word is
// its own key.
func CommandKey(cmd string) string {
	line := strings.TrimSpace(cmd)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	for {
		cut := false
		if rest, ok := strings.CutPrefix(line, "cd "); ok {
			if i := strings.Index(rest, "&&"); i >= 0 {
				line, cut = strings.TrimSpace(rest[i+2:]), true
			}
		}
		if !cut {
			break
		}
	}
	words := strings.Fields(line)
	for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "sudo" || words[0] == "time") {
		words = words[1:]
	}
	switch {
	case len(words) == 0:
		return ""
	case len(words) == 1 || strings.HasPrefix(words[1], "-") || strings.ContainsAny(words[1], "|&;><"):
		return words[0]
	}
	return words[0] + " " + words[1]
}

// errorLine matches output lines that say what went wrong.
var errorLine = regexp.MustCompile(`(?i)\b(error|errors|fail|failed|failure|failures|panic|exception|traceback|assert\w*|expected|undefined|cannot|not found|no such|denied|fatal)\b`)

const (
	maxKeyLines = 12
	maxLineLen  = 200
)

// keyLines picks the lines of a failing command's output that matter: its
// first line (Claude Code writes "Exit code N" there) and the lines that
// name an error, at most maxKeyLines, each cut to maxLineLen; when none
// names one, the last lines.
func keyLines(out string) []string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var keep []string
	add := func(l string) {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" || len(keep) >= maxKeyLines {
			return
		}
		keep = append(keep, cut(l, maxLineLen))
	}
	add(lines[0])
	for _, l := range lines[1:] {
		if errorLine.MatchString(l) {
			add(l)
		}
	}
	if len(keep) <= 1 {
		from := max(1, len(lines)-(maxKeyLines-len(keep)))
		for _, l := range lines[from:] {
			add(l)
		}
	}
	return keep
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
