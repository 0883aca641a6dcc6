// Package cache persists mapgen's index of a repository between runs, so a
// warm map re-reads only the files that changed.
//
// One index file per repository root lives under
// $XDG_CACHE_HOME/synaxi/mapgen/index/<hash of the root>/ (Dir, below the
// cache directory internal/xdg resolves: by default ~/.cache/synaxi, on macOS
// ~/Library/Caches/synaxi). It holds, per file, the path, size, modification
// time and SHA-256 of the content it was parsed from and the parse result
// (symbols and references), plus the directories and ignore files the walk depended
// on, and two sorted name tables (which files define a name, which files
// refer to it) that answer a symbol lookup without decoding every file.
// Beside it, maps.json keeps rendered maps keyed by the index's content
// identity and the map options.
//
// Invariants: the file starts with a magic line, the format number, the
// parsers' version (symbols.Version) and the languages the build parses; a
// mismatch in any is a miss, never a wrong answer, and so is a file that
// does not decode. Writes replace the file atomically (temporary file,
// fsync, rename) under an advisory lock on a sidecar .lock file, so
// concurrent runs never see a torn index and a killed writer leaves the
// previous one; readers take no lock. Files are 0600, directories 0700.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/symbols"
)

// Format numbers the layout of the index file and the rules that decide
// what a walk includes (package walk, package ignore); bump it on any change
// to either, so an index built under other rules is never served.
const Format = 2

const magic = "synaxi-mapgen-index\n"

// Dir is mapgen's cache directory within synaxi's directories d:
// d.CachePath("mapgen"), which internal/xdg resolves for every binary.
func Dir(d xdg.Dirs) string { return d.CachePath("mapgen") }

// Store is a directory of persisted indexes. The zero value (empty Dir)
// persists nothing.
type Store struct {
	Dir string
}

func (s Store) dir(root string) string {
	h := sha256.Sum256([]byte(root))
	return filepath.Join(s.Dir, "index", hex.EncodeToString(h[:8]))
}

func (s Store) indexPath(root string) string { return filepath.Join(s.dir(root), "index") }
func (s Store) mapsPath(root string) string  { return filepath.Join(s.dir(root), "maps.json") }

// Source is a file whose content can change what a walk finds (an ignore
// file), present or not when the index was built.
type Source struct {
	Path    string
	Exists  bool
	Size    int64
	ModTime int64 // Unix nanoseconds
}

// DirStamp is a directory the walk read and its modification time.
type DirStamp struct {
	Rel     string
	ModTime int64
}

// FileStamp identifies the content a file's entry was parsed from.
type FileStamp struct {
	Rel     string
	Size    int64
	ModTime int64
	Hash    [32]byte // SHA-256 of the content
	Skip    bool     // generated, minified or binary: indexed as nothing
}

// Meta is everything about an index except the parse results.
type Meta struct {
	Root      string
	Built     int64 // Unix nanoseconds when the walk began
	Truncated bool
	Unparsed  map[string]int // per language, files this build cannot parse
	Sources   []Source
	Dirs      []DirStamp
	Files     []FileStamp
}

// Snapshot is a loaded index: its Meta decoded, parse results and name
// tables decoded on demand.
type Snapshot struct {
	Meta
	ID       string // identity of the indexed content (paths, hashes, truncation, unparsed)
	offs     []int  // per file, start of its entry in the data region; one extra at the end
	file     *os.File
	dataAt   int64 // where the data region starts in file
	defNames []byte
	refNames []byte

	mu   sync.Mutex
	data []byte // the whole data region, once LoadAll read it
}

func languages() string { return strings.Join(symbols.Languages(), ",") }

// Load reads the index of root (an absolute, symlink-free directory): its
// Meta and name tables now, parse results when asked for. ok is false when
// there is none, or it was written by another format, parser version or
// language set, or it is damaged.
func (s Store) Load(root string) (snap *Snapshot, ok bool) {
	if s.Dir == "" {
		return nil, false
	}
	f, err := os.Open(s.indexPath(root))
	if err != nil {
		return nil, false
	}
	snap, err = readIndex(f)
	if err != nil || snap.Root != root {
		f.Close()
		return nil, false
	}
	// The snapshot reads parse results from this open file (the inode it
	// decoded, whatever later writers rename over the path) until it is
	// garbage.
	runtime.AddCleanup(snap, func(f *os.File) { f.Close() }, f)
	return snap, true
}

// headerMax bounds the fixed header (magic, versions, languages, lengths).
const headerMax = 4096

func readIndex(f *os.File) (*Snapshot, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, min(st.Size(), headerMax))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(head, []byte(magic))
	if !ok {
		return nil, errCorrupt
	}
	d := &dec{b: rest}
	if d.uint() != Format || d.uint() != symbols.Version || d.str() != languages() {
		return nil, errors.New("index written by another version")
	}
	lens := d.raw(24)
	if d.err != nil {
		return nil, d.err
	}
	size := uint64(st.Size())
	metaLen, defLen, refLen := binary.LittleEndian.Uint64(lens[0:]), binary.LittleEndian.Uint64(lens[8:]), binary.LittleEndian.Uint64(lens[16:])
	start := uint64(len(head) - len(d.b))
	if metaLen > size || defLen > size || refLen > size || start+metaLen+defLen+refLen > size {
		return nil, errCorrupt
	}
	sections := make([]byte, metaLen+defLen+refLen)
	if _, err := f.ReadAt(sections, int64(start)); err != nil {
		return nil, err
	}
	snap := &Snapshot{
		file:     f,
		dataAt:   int64(start) + int64(len(sections)),
		defNames: sections[metaLen : metaLen+defLen],
		refNames: sections[metaLen+defLen:],
	}
	if err := snap.decodeMeta(sections[:metaLen]); err != nil {
		return nil, err
	}
	if snap.dataAt+int64(snap.offs[len(snap.offs)-1]) != st.Size() {
		return nil, errCorrupt
	}
	return snap, nil
}

func (snap *Snapshot) decodeMeta(raw []byte) error {
	meta := &dec{b: raw}
	m := &snap.Meta
	m.Root = meta.str()
	m.Built = meta.int()
	m.Truncated = meta.bool()
	if n := meta.count(2); n > 0 {
		m.Unparsed = make(map[string]int, n)
		for range n {
			k := meta.str()
			m.Unparsed[k] = meta.small()
		}
	}
	snap.ID = hex.EncodeToString(meta.raw(sha256.Size))
	m.Sources = make([]Source, meta.count(4))
	for i := range m.Sources {
		m.Sources[i] = Source{Path: meta.str(), Exists: meta.bool(), Size: meta.int(), ModTime: meta.int()}
	}
	m.Dirs = make([]DirStamp, meta.count(2))
	for i := range m.Dirs {
		m.Dirs[i] = DirStamp{Rel: meta.str(), ModTime: meta.int()}
	}
	m.Files = make([]FileStamp, meta.count(sha256.Size))
	snap.offs = make([]int, len(m.Files)+1)
	off := 0
	for i := range m.Files {
		f := &m.Files[i]
		f.Rel = meta.str()
		f.Size = meta.int()
		f.ModTime = meta.int()
		copy(f.Hash[:], meta.raw(sha256.Size))
		f.Skip = meta.bool()
		snap.offs[i] = off
		off += meta.small()
	}
	snap.offs[len(m.Files)] = off
	return meta.err
}

// File decodes the parse result of file i (zero for a skipped file).
func (sn *Snapshot) File(i int) (symbols.File, error) { return sn.decode(i, true) }

// FileNoLines decodes the parse result of file i without RefLines.
func (sn *Snapshot) FileNoLines(i int) (symbols.File, error) { return sn.decode(i, false) }

func (sn *Snapshot) decode(i int, lines bool) (symbols.File, error) {
	n := sn.offs[i+1] - sn.offs[i]
	if n == 0 {
		return symbols.File{}, nil
	}
	var raw []byte
	if all := sn.loaded(); all != nil {
		raw = all[sn.offs[i]:sn.offs[i+1]]
	} else {
		raw = make([]byte, n)
		if _, err := sn.file.ReadAt(raw, sn.dataAt+int64(sn.offs[i])); err != nil {
			return symbols.File{}, fmt.Errorf("read index entry %s: %w", sn.Files[i].Rel, err)
		}
	}
	d := &dec{b: raw}
	f := decodeFile(d, lines)
	if d.err != nil {
		return symbols.File{}, fmt.Errorf("decode index entry %s: %w", sn.Files[i].Rel, d.err)
	}
	return f, nil
}

// LoadAll reads every parse result into memory at once, for callers about
// to decode all of them.
func (sn *Snapshot) LoadAll() error {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if sn.data != nil {
		return nil
	}
	data := make([]byte, sn.offs[len(sn.offs)-1])
	if _, err := sn.file.ReadAt(data, sn.dataAt); err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	sn.data = data
	return nil
}

func (sn *Snapshot) loaded() []byte {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.data
}

// DefinedIn returns, in index order, the files that define name at any
// nesting depth.
func (sn *Snapshot) DefinedIn(name string) []int { return lookup(sn.defNames, name) }

// ReferencedIn returns, in index order, the files with a reference whose
// identifier (symbols.RefName) is name.
func (sn *Snapshot) ReferencedIn(name string) []int { return lookup(sn.refNames, name) }

// Data is what Save writes: the index's Meta and, per file of Meta.Files,
// its parse result.
type Data struct {
	Meta
	Parsed []symbols.File
}

// ID returns the identity of the indexed content: it changes exactly when a
// file is added, removed or changed, or the walk's truncation changes.
func (d *Data) ID() string { return hex.EncodeToString(d.id()) }

func (d *Data) id() []byte {
	h := sha256.New()
	for _, f := range d.Files {
		h.Write([]byte(f.Rel))
		h.Write([]byte{0})
		h.Write(f.Hash[:])
		if f.Skip {
			h.Write([]byte{1})
		}
	}
	if d.Truncated {
		h.Write([]byte("truncated"))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Unparsed)) {
		fmt.Fprintf(h, "\x00unparsed %s %d", k, d.Unparsed[k])
	}
	return h.Sum(nil)
}

// Save writes the index of d.Root, replacing the previous one atomically.
func (s Store) Save(d *Data) error {
	if s.Dir == "" {
		return nil
	}
	if len(d.Parsed) != len(d.Files) {
		return fmt.Errorf("save index: %d parse results for %d files", len(d.Parsed), len(d.Files))
	}
	var data enc
	sizes := make([]int, len(d.Files))
	defs, refs := map[string][]int{}, map[string][]int{}
	for i := range d.Files {
		before := len(data.b)
		if !d.Files[i].Skip {
			f := &d.Parsed[i]
			encodeFile(&data, f)
			addDefNames(defs, f.Defs, i)
			for key := range f.Refs {
				name := symbols.RefName(key)
				if l := refs[name]; len(l) == 0 || l[len(l)-1] != i {
					refs[name] = append(l, i)
				}
			}
		}
		sizes[i] = len(data.b) - before
	}
	var meta enc
	meta.str(d.Root)
	meta.int(d.Built)
	meta.bool(d.Truncated)
	meta.uint(uint64(len(d.Unparsed)))
	for _, k := range slices.Sorted(maps.Keys(d.Unparsed)) {
		meta.str(k)
		meta.uint(uint64(d.Unparsed[k]))
	}
	meta.b = append(meta.b, d.id()...)
	meta.uint(uint64(len(d.Sources)))
	for _, src := range d.Sources {
		meta.str(src.Path)
		meta.bool(src.Exists)
		meta.int(src.Size)
		meta.int(src.ModTime)
	}
	meta.uint(uint64(len(d.Dirs)))
	for _, dir := range d.Dirs {
		meta.str(dir.Rel)
		meta.int(dir.ModTime)
	}
	meta.uint(uint64(len(d.Files)))
	for i, f := range d.Files {
		meta.str(f.Rel)
		meta.int(f.Size)
		meta.int(f.ModTime)
		meta.b = append(meta.b, f.Hash[:]...)
		meta.bool(f.Skip)
		meta.uint(uint64(sizes[i]))
	}
	out := enc{b: []byte(magic)}
	out.uint(Format)
	out.uint(symbols.Version)
	out.str(languages())
	sections := [][]byte{meta.b, nameTable(defs), nameTable(refs)}
	for _, section := range sections {
		out.b = binary.LittleEndian.AppendUint64(out.b, uint64(len(section)))
	}
	for _, section := range sections {
		out.b = append(out.b, section...)
	}
	out.b = append(out.b, data.b...)
	p := s.indexPath(d.Root)
	return statefile.WithLock(p, func() error { return statefile.WriteBytes(p, out.b) })
}

// addDefNames records file i under the name of every definition in defs,
// nested ones included (find_symbol finds fields and nested functions).
func addDefNames(names map[string][]int, defs []symbols.Def, i int) {
	for _, d := range defs {
		if l := names[d.Name]; len(l) == 0 || l[len(l)-1] != i {
			names[d.Name] = append(l, i)
		}
		addDefNames(names, d.Children, i)
	}
}

// nameTable lays out names sorted, each with its ascending file indexes
// (delta-encoded), behind a table of fixed-width offsets so a lookup is a
// binary search over the raw bytes.
func nameTable(names map[string][]int) []byte {
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var body enc
	offsets := make([]byte, 4*len(keys))
	for i, k := range keys {
		binary.LittleEndian.PutUint32(offsets[4*i:], uint32(len(body.b)))
		body.str(k)
		files := names[k]
		body.uint(uint64(len(files)))
		prev := 0
		for _, f := range files {
			body.uint(uint64(f - prev))
			prev = f
		}
	}
	var out enc
	out.uint(uint64(len(keys)))
	out.b = append(out.b, offsets...)
	out.b = append(out.b, body.b...)
	return out.b
}

// lookup binary-searches a nameTable for name.
func lookup(table []byte, name string) []int {
	d := &dec{b: table}
	n := d.count(4)
	if d.err != nil {
		return nil
	}
	offsets, body := d.b[:4*n], d.b[4*n:]
	entry := func(i int) *dec {
		off := int(binary.LittleEndian.Uint32(offsets[4*i:]))
		if off > len(body) {
			return &dec{err: errCorrupt}
		}
		return &dec{b: body[off:]}
	}
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if entry(mid).str() < name {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == n {
		return nil
	}
	e := entry(lo)
	if e.str() != name {
		return nil
	}
	files := make([]int, e.count(1))
	prev := 0
	for j := range files {
		prev += e.small()
		files[j] = prev
	}
	if e.err != nil {
		return nil
	}
	return files
}

// Maps returns the rendered maps stored for the index with the given ID, by
// key; nil when there are none.
func (s Store) Maps(root, id string) map[string]json.RawMessage {
	if s.Dir == "" {
		return nil
	}
	var doc mapsDoc
	if err := statefile.ReadJSON(s.mapsPath(root), &doc); err != nil || doc.ID != id || doc.Format != Format {
		return nil
	}
	return doc.Maps
}

// MaxMaps bounds the rendered maps kept per index.
const MaxMaps = 32

type mapsDoc struct {
	Format int                        `json:"format"`
	ID     string                     `json:"id"`
	Maps   map[string]json.RawMessage `json:"maps"`
}

// PutMap stores a rendered map for the index with the given ID under key,
// dropping maps of other IDs (and all of them when MaxMaps is reached).
func (s Store) PutMap(root, id, key string, value json.RawMessage) error {
	if s.Dir == "" {
		return nil
	}
	return statefile.Update(s.mapsPath(root), func(doc *mapsDoc) error {
		if doc.ID != id || doc.Format != Format || len(doc.Maps) >= MaxMaps {
			*doc = mapsDoc{Format: Format, ID: id}
		}
		if doc.Maps == nil {
			doc.Maps = map[string]json.RawMessage{}
		}
		doc.Maps[key] = value
		return nil
	})
}
