package symbols

import "slices"

// refs collects identifier uses: a count per key and the lines they are on.
type refs struct {
	count map[string]int
	lines map[string][]int
}

func newRefs() refs { return refs{count: map[string]int{}, lines: map[string][]int{}} }

func (r refs) add(key string, line int) {
	r.count[key]++
	ls := r.lines[key]
	if n := len(ls); n > 0 && ls[n-1] == line {
		return
	}
	r.lines[key] = append(ls, line)
}

// store puts the collected uses into f, lines sorted and without repeats.
func (r refs) store(f *File) {
	for k, ls := range r.lines {
		if !slices.IsSorted(ls) {
			slices.Sort(ls)
			r.lines[k] = slices.Compact(ls)
		}
	}
	f.Refs, f.RefLines = r.count, r.lines
}
