package read

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// Echo remembers what the assistant wrote earlier in a session, so a turn
// that pastes it back is recognised: whole lines and runs of EchoWords
// words, hashed.
type Echo struct {
	lines    map[uint64]struct{}
	shingles map[uint64]struct{}
}

// EchoWords is the length of the word runs Echo compares.
const EchoWords = 6

// NewEcho returns an empty Echo.
func NewEcho() *Echo {
	return &Echo{lines: map[uint64]struct{}{}, shingles: map[uint64]struct{}{}}
}

// Add records assistant text.
func (e *Echo) Add(text string) {
	if e == nil {
		return
	}
	for line := range strings.SplitSeq(text, "\n") {
		if n := normLine(line); len(n) >= 16 {
			e.lines[hash(n)] = struct{}{}
		}
		ws := words(line)
		for i := 0; i+EchoWords <= len(ws); i++ {
			e.shingles[shingle(ws[i:i+EchoWords])] = struct{}{}
		}
	}
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

type word struct {
	start, end int
	norm       string
}

// words splits s into words (letters and digits), lower-cased, with their
// byte offsets.
func words(s string) []word {
	var out []word
	start := -1
	for i, r := range s {
		in := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, word{start, i, strings.ToLower(s[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, word{start, len(s), strings.ToLower(s[start:])})
	}
	return out
}

func shingle(ws []word) uint64 {
	h := fnv.New64a()
	for _, w := range ws {
		h.Write([]byte(w.norm))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// normLine is a line without its bullets, glyphs, numbering and case, its
// inner spaces collapsed: the same sentence pasted from a terminal or
// from rendered Markdown compares equal.
func normLine(line string) string {
	var b strings.Builder
	space := false
	for _, r := range line {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
		}
	}
	return b.String()
}

// echoed returns the byte ranges of line covered by runs of words the
// assistant wrote (at least two overlapping EchoWords runs, or the whole
// line).
func (e *Echo) echoed(line string) [][2]int {
	if e == nil || len(e.shingles) == 0 && len(e.lines) == 0 {
		return nil
	}
	if n := normLine(line); len(n) >= 16 {
		if _, ok := e.lines[hash(n)]; ok {
			return [][2]int{{0, len(line)}}
		}
	}
	ws := words(line)
	if len(ws) < EchoWords {
		return nil
	}
	hit := make([]bool, len(ws)-EchoWords+1)
	for i := range hit {
		_, hit[i] = e.shingles[shingle(ws[i:i+EchoWords])]
	}
	var out [][2]int
	for i := 0; i < len(hit); {
		if !hit[i] {
			i++
			continue
		}
		j := i
		for j+1 < len(hit) && hit[j+1] {
			j++
		}
		// A single run of EchoWords words may be a common phrase; two
		// overlapping ones (EchoWords+1 words in a row) are a copy.
		if j > i || len(ws) == EchoWords {
			out = append(out, [2]int{ws[i].start, ws[j+EchoWords-1].end})
		}
		i = j + 1
	}
	return out
}
