package reads

import (
	"bytes"
	"sort"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// span is a resolved 1-based inclusive line range [0] to [1].
type span = [2]int

// lineIndex holds where each line of a file starts.
type lineIndex struct {
	data   []byte
	starts []int // byte offset of each line's first byte
}

func indexLines(data []byte) lineIndex {
	ix := lineIndex{data: data}
	if len(data) == 0 {
		return ix
	}
	ix.starts = append(ix.starts, 0)
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		if off >= len(data) {
			break
		}
		ix.starts = append(ix.starts, off)
	}
	return ix
}

// count is the number of lines.
func (ix lineIndex) count() int { return len(ix.starts) }

// bytesOf is the number of bytes (newlines included) in the spans.
func (ix lineIndex) bytesOf(spans []span) int {
	n := 0
	for _, s := range spans {
		end := len(ix.data)
		if s[1] < len(ix.starts) {
			end = ix.starts[s[1]]
		}
		n += end - ix.starts[s[0]-1]
	}
	return n
}

// resolve turns a view into concrete spans clipped to a file of n lines.
func resolve(v shellread.View, n int) []span {
	if n == 0 {
		return nil
	}
	if v.Tail > 0 {
		return []span{{max(1, n-v.Tail+1), n}}
	}
	var out []span
	for _, r := range v.Ranges {
		lo, hi := max(r.Start, 1), r.End
		if hi == 0 || hi > n {
			hi = n
		}
		if lo <= hi {
			out = append(out, span{lo, hi})
		}
	}
	return merge(out)
}

// merge sorts spans and joins overlapping or adjacent ones.
func merge(in []span) []span {
	if len(in) < 2 {
		return in
	}
	s := append([]span(nil), in...)
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	out := s[:1]
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1]+1 {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// covered reports whether every line of want lies in have (both merged).
func covered(want, have []span) bool {
	for _, w := range want {
		lo := w[0]
		for _, h := range have {
			if h[0] <= lo && lo <= h[1] {
				lo = h[1] + 1
			}
			if lo > w[1] {
				break
			}
		}
		if lo <= w[1] {
			return false
		}
	}
	return true
}

// clampSpans limits stored spans (whose end may be "to the end", stored as 0)
// to a file of n lines.
func clampSpans(in []span, n int) []span {
	var out []span
	for _, s := range in {
		hi := s[1]
		if hi == 0 || hi > n {
			hi = n
		}
		if s[0] <= hi {
			out = append(out, span{s[0], hi})
		}
	}
	return merge(out)
}
