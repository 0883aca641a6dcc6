package cache

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/synaxi/synaxi/mapgen/symbols"
)

// errCorrupt reports an index file that does not decode; the caller treats
// it as a miss and rebuilds.
var errCorrupt = errors.New("index file is damaged")

// enc appends varint-framed values to a byte slice.
type enc struct{ b []byte }

func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// dec reads what enc wrote; the first error sticks and every later read
// returns zero values.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() { d.err, d.b = errCorrupt, nil }

func (d *dec) uint() uint64 { return varint(d, binary.Uvarint) }
func (d *dec) int() int64   { return varint(d, binary.Varint) }

func varint[T uint64 | int64](d *dec, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must fit in what is left (each element takes at
// least min bytes), so a damaged file cannot make a decoder allocate wildly.
func (d *dec) count(min int) int {
	n := d.uint()
	if n > uint64(len(d.b)/max(min, 1)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *dec) raw(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.raw(d.count(1))) }
func (d *dec) bool() bool  { r := d.raw(1); return len(r) == 1 && r[0] == 1 }
func (d *dec) small() int  { return int(min(d.uint(), 1<<31)) }
func (d *dec) signed() int { return int(max(min(d.int(), 1<<31), -1<<31)) }
func (d *dec) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// encodeFile appends a parse result. Every field of symbols.File and
// symbols.Def is written (a test fills each by reflection and checks the
// round trip, so a field added to symbols fails it until it is written here).
func encodeFile(e *enc, f *symbols.File) {
	e.str(f.Lang)
	e.str(f.Package)
	e.uint(uint64(f.Lines))
	encodeDefs(e, f.Defs)
	keys := slices.Sorted(maps.Keys(f.Refs))
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.uint(uint64(f.Refs[k]))
	}
	keys = slices.Sorted(maps.Keys(f.RefLines))
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		lines := f.RefLines[k]
		e.uint(uint64(len(lines)))
		prev := 0
		for _, l := range lines {
			e.int(int64(l - prev)) // ascending: small deltas
			prev = l
		}
	}
	e.uint(uint64(len(f.Imports)))
	for _, s := range f.Imports {
		e.str(s)
	}
	e.str(f.Err)
}

func encodeDefs(e *enc, defs []symbols.Def) {
	e.uint(uint64(len(defs)))
	for i := range defs {
		d := &defs[i]
		e.str(d.Name)
		e.str(d.Kind)
		e.str(d.Recv)
		e.str(d.Signature)
		e.str(d.Doc)
		e.uint(uint64(d.Start))
		e.int(int64(d.End - d.Start))
		encodeDefs(e, d.Children)
	}
}

// decodeFile reads what encodeFile wrote; without lines it skips
// RefLines (ranking needs only the counts, and the lines are most of the
// memory a decoded tree takes).
func decodeFile(d *dec, lines bool) symbols.File {
	var f symbols.File
	f.Lang = d.str()
	f.Package = d.str()
	f.Lines = d.small()
	f.Defs = decodeDefs(d, 0)
	if n := d.count(2); n > 0 {
		f.Refs = make(map[string]int, n)
		for range n {
			k := d.str()
			f.Refs[k] = d.small()
		}
	}
	if n := d.count(2); n > 0 {
		if lines {
			f.RefLines = make(map[string][]int, n)
		}
		for range n {
			k := d.raw(d.count(1))
			ls := make([]int, d.count(1))
			prev := 0
			for j := range ls {
				prev += d.signed()
				ls[j] = prev
			}
			if lines {
				f.RefLines[string(k)] = ls
			}
		}
	}
	f.Imports = d.strs()
	f.Err = d.str()
	return f
}

// maxNesting bounds decoded nesting, as parsers bound what they record.
const maxNesting = 64

func decodeDefs(d *dec, depth int) []symbols.Def {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	if depth > maxNesting {
		d.fail()
		return nil
	}
	defs := make([]symbols.Def, n)
	for i := range defs {
		x := &defs[i]
		x.Name = d.str()
		x.Kind = d.str()
		x.Recv = d.str()
		x.Signature = d.str()
		x.Doc = d.str()
		x.Start = d.small()
		x.End = x.Start + d.signed()
		x.Children = decodeDefs(d, depth+1)
	}
	return defs
}
