package governor

import (
	"strings"
	"unicode/utf8"
)

// revert reports an edit that restores text an earlier edit of the same
// file replaced, and records the edit.
func (s *State) revert(c Call, th Thresholds) (Fire, bool) {
	file := hash(c.Path)
	n := 0
	for _, p := range c.Pairs {
		sw := Swap{File: file, New: hash(p.New)}
		if !c.Whole {
			sw.Old = hash(p.Old)
		}
		if c.Path != "" && s.undoes(sw) {
			k := file + ":" + min(sw.Old, sw.New) + max(sw.Old, sw.New)
			s.Reverts = bump(s.Reverts, k)
			n = max(n, s.Reverts[k])
		}
		s.Swaps = append(s.Swaps, sw)
	}
	if over := len(s.Swaps) - maxSwaps; over > 0 {
		s.Swaps = append([]Swap(nil), s.Swaps[over:]...)
	}
	return Fire{Rule: Revert, Count: n, Subject: short(c.Path)}, th.Revert > 0 && n == th.Revert
}

// undoes reports whether sw restores what an earlier edit of its file
// replaced: an Edit whose texts swap an earlier Edit's, or a Write of the
// content an earlier Write gave the file before a later write changed it.
func (s *State) undoes(sw Swap) bool {
	for i := len(s.Swaps) - 1; i >= 0; i-- {
		e := s.Swaps[i]
		if e.File != sw.File {
			continue
		}
		if sw.Old != "" {
			if e.Old == sw.New && e.New == sw.Old {
				return true
			}
			continue
		}
		if e.Old == "" && e.New == sw.New {
			// The same content again: a revert only if some write in
			// between changed it.
			return i < len(s.Swaps)-1 && s.changedSince(i, sw.File)
		}
	}
	return false
}

func (s *State) changedSince(i int, file string) bool {
	for _, e := range s.Swaps[i+1:] {
		if e.File == file {
			return true
		}
	}
	return false
}

// command counts a command's identical runs (repeat) and identical
// failures (unchanged). A command that edits files counts only towards
// unchanged.
func (s *State) command(c Call, edits bool, th Thresholds) (Fire, bool) {
	k := Key(c.Command)
	subject := short(Normalize(c.Command))
	out := hash(Settle(c.Output))
	var fires []Fire
	if !edits {
		var n int
		s.Runs, n = see(s.Runs, k, out)
		if th.Repeat > 0 && n == th.Repeat {
			fires = append(fires, Fire{Rule: Repeat, Count: n, Subject: subject})
		}
	}
	if !c.Failed {
		delete(s.Fails, k)
	} else {
		var n int
		s.Fails, n = see(s.Fails, k, out)
		if th.Unchanged > 0 && n == th.Unchanged {
			fires = append(fires, Fire{Rule: Unchanged, Count: n, Subject: subject})
		}
	}
	if len(fires) == 0 {
		return Fire{}, false
	}
	return fires[0], true
}

// read counts reads of the same lines of a file, with the same content,
// since its last edit.
func (s *State) read(c Call, th Thresholds) (Fire, bool) {
	k := hash(c.Path) + ":" + hash(c.Lines)
	var n int
	s.Reads, n = see(s.Reads, k, hash(c.Output))
	return Fire{Rule: Reread, Count: n, Subject: short(c.Path)}, th.Reread > 0 && n == th.Reread
}

// stall counts calls that touch no new file while the context grows.
func (s *State) stall(c Call, th Thresholds) (Fire, bool) {
	files := c.Edits
	if c.Path != "" && (c.Kind == Read || c.Kind == Edit) {
		files = append([]string{c.Path}, files...)
	}
	fresh := false
	for _, p := range files {
		k := hash(p)
		if !s.Touched[k] {
			if s.Touched == nil || len(s.Touched) >= 4*maxKeys {
				s.Touched = map[string]bool{}
			}
			s.Touched[k] = true
			fresh = true
		}
	}
	if fresh || s.Base == 0 {
		s.Quiet, s.Base, s.Stalled = 0, c.Tokens, false
		return Fire{}, false
	}
	s.Quiet++
	grown := c.Tokens - s.Base
	if s.Stalled || th.StallCalls <= 0 || c.Tokens == 0 || s.Quiet < th.StallCalls || grown < th.StallTokens {
		return Fire{}, false
	}
	s.Stalled = true
	return Fire{Rule: Stall, Count: s.Quiet, Tokens: grown}, true
}

// Settle removes from command output what changes between identical runs:
// durations ("0.03s", "12 ms", "1.2 seconds"), decimal fractions, hex
// addresses and clock times, so two runs that failed the same way hash the
// same. Integers stay: a count of failures that changes is progress.
func Settle(out string) string {
	var b strings.Builder
	b.Grow(len(out))
	for i := 0; i < len(out); {
		if !isDigit(out[i]) || (i > 0 && isWord(out[i-1])) {
			b.WriteByte(out[i])
			i++
			continue
		}
		j, settle := number(out, i)
		if settle || unit(strings.TrimLeft(out[j:], " ")) {
			b.WriteByte('#')
		} else {
			b.WriteString(out[i:j])
		}
		i = j
	}
	return b.String()
}

// number scans the number starting at out[i] and reports whether it is one
// that changes between runs by its form alone: a hex address, a decimal
// fraction or a clock time.
func number(out string, i int) (end int, settle bool) {
	j := i
	if strings.HasPrefix(out[i:], "0x") && i+2 < len(out) && isHex(out[i+2]) {
		for j = i + 2; j < len(out) && isHex(out[j]); j++ {
		}
		return j, true
	}
	for j < len(out) && isDigit(out[j]) {
		j++
	}
	for j+1 < len(out) && (out[j] == '.' || out[j] == ':') && isDigit(out[j+1]) {
		settle = true
		for j++; j < len(out) && isDigit(out[j]); j++ {
		}
	}
	return j, settle
}

// unit reports whether s starts with a unit of time.
func unit(s string) bool {
	for _, u := range []string{"ms", "µs", "us", "ns", "s", "sec", "secs", "seconds", "second", "m", "min"} {
		if strings.HasPrefix(s, u) {
			r, _ := utf8.DecodeRuneInString(s[len(u):])
			if len(s) == len(u) || !isWord(byte(r)) {
				return true
			}
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isWord(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// short bounds a subject for a directive.
func short(s string) string {
	const limit = 160
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
