package projection

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/recall"
)

// entryOverhead is what an entry's estimate adds to its content's for the
// call and the result around it.
const entryOverhead = 12

// entry is one durable observation: the latest known result of a call
// identified by its key, re-emitted as a Read/Bash/Grep/Glob exchange.
type entry struct {
	key     string
	tool    string // tool name of the re-emitted call
	input   []byte // its input JSON
	content []byte // the tool_result content JSON (a string or an array)
	text    string // the content's text (for Edit application)
	short   bool   // content is a head-and-tail digest of text
	tokens  int    // estimated tokens of content, plus entryOverhead
	// use is the re-emitted call (its tool_use block, with the version's
	// id) and useTokens its estimate, both set when the entry is put.
	use       []byte
	useTokens int

	ver int // how many times the key was put before this version

	updated int // step of the last content change (orders the snapshot)
	seq     int // tie-break: ingest order

	// Read entries.
	path      string
	numbered  numbering
	partial   bool // an offset/limit read
	firstLine int
	lastLine  int
	defs      []string // the names a whole file defines (see refer)

	pinned bool // never evicted: a tool search's tool_reference (foreign.go)
}

// world is the store of durable observations, keyed by identity.
type world struct {
	entries map[string]*entry
	seq     int
	// evicted remembers every key that was dropped (by budget eviction or
	// because an edit could not be applied) and how to get it back.
	evicted map[string]string
	// observed holds the last content seen for every file path, evicted or
	// not, for stub restoration.
	observed map[string]*entry
	tok      func(string) int
	versions map[string]int
	used     map[string]int // key → step of the last read, write, edit or reference
	// reuse counts, per key, the steps at which an edit referred to it
	// (see refer and idle).
	reuse map[string]int
	// evictedAt is the step each evicted key was dropped at.
	evictedAt map[string]int
	// recalled are the outputs of commands and searches evicted while
	// folding the current request, which the proxy keeps for the recall
	// tool under the reference their note names (internal/recall).
	recalled []string
	// samples are the whole-file reads, and lastRead the latest sample
	// of each key (pass.go).
	samples     []readSample
	lastRead    map[string]int
	lateSamples int
}

// clone copies the maps; entries are immutable and shared.
func (w *world) clone() *world {
	c := *w
	c.entries = maps.Clone(w.entries)
	c.evicted = maps.Clone(w.evicted)
	c.observed = maps.Clone(w.observed)
	c.versions = maps.Clone(w.versions)
	c.used = maps.Clone(w.used)
	c.reuse = maps.Clone(w.reuse)
	c.evictedAt = maps.Clone(w.evictedAt)
	c.samples = slices.Clone(w.samples)
	c.lastRead = maps.Clone(w.lastRead)
	c.recalled = nil // only what this request's fold evicts
	return &c
}

func newWorld(tok func(string) int) *world {
	return &world{
		entries:   map[string]*entry{},
		evicted:   map[string]string{},
		observed:  map[string]*entry{},
		versions:  map[string]int{},
		used:      map[string]int{},
		reuse:     map[string]int{},
		evictedAt: map[string]int{},
		lastRead:  map[string]int{},
		tok:       tok,
	}
}

// syntheticID is a deterministic tool_use id for a world key's version.
func syntheticID(key string, ver int) string {
	h := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(ver)))
	return "toolu_syn" + hex.EncodeToString(h[:10])
}

func (e *entry) id() string { return syntheticID(e.key, e.ver) }

// size is what the entry adds to a served context: its call and its
// result. Budgets, the working set and eviction count it; a note naming a
// dropped entry quotes its result's tokens only, what a repeated call
// returns.
func (e *entry) size() int { return e.tokens + e.useTokens }

func (w *world) put(e *entry, step int) {
	if old, ok := w.entries[e.key]; ok && old.tool == e.tool && bytes.Equal(old.content, e.content) {
		w.used[old.key] = step // the same observation again: it is still in view
		return
	}
	w.used[e.key], e.updated = step, step
	w.seq++
	e.seq = w.seq
	e.ver = w.versions[e.key]
	w.versions[e.key]++
	if e.tokens == 0 {
		e.tokens = w.tok(stringOf(e.content)) + entryOverhead
	}
	if e.path != "" && !e.partial && e.defs == nil {
		e.defs = definitions(e.text)
	}
	e.use = toolUseJSON(e.id(), e.tool, e.input)
	e.useTokens = w.tok(stringOf(e.use))
	w.entries[e.key] = e
	delete(w.evicted, e.key)
	delete(w.evictedAt, e.key)
	if e.path != "" && !e.partial {
		w.observed[e.path] = e
		// A full read supersedes partial reads of the same file.
		for k, o := range w.entries {
			if o.path == e.path && o.partial {
				delete(w.entries, k)
			}
		}
	}
}

// partialKeys are the keys of the partial views of path in view (offset
// and limit reads), in order.
func (w *world) partialKeys(path string) []string {
	var out []string
	for k, e := range w.entries {
		if e.path == path && e.partial {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (w *world) touch(key string, step int) {
	if _, ok := w.entries[key]; ok {
		w.used[key] = step
	}
}

// referred records that an edit at step named what key's file defines
// (see refer): a use, and a reuse.
func (w *world) referred(key string, step int) {
	if _, ok := w.entries[key]; !ok {
		return
	}
	w.noteUse(key, step)
	if w.used[key] < step {
		w.reuse[key]++
	}
	w.used[key] = step
}

// idle is how long key has gone unused at step, in steps, divided by one
// more than the times edits referred to it (at most maxReuse): a file the
// agent keeps working from stays in the working set longer between its
// uses, and is evicted after the files it read once.
func (w *world) idle(key string, step int) int {
	d := (step - w.used[key]) / (1 + min(w.reuse[key], maxReuse))
	if w.passed(key, step) {
		return max(d, workingSteps)
	}
	return d
}

// maxReuse bounds how far reuse stretches an entry's idle time.
const maxReuse = 3

// drop removes key at step, remembering how to get it back.
func (w *world) drop(key, how string, step int) {
	if _, ok := w.entries[key]; !ok {
		return
	}
	delete(w.entries, key)
	w.evicted[key] = how
	w.evictedAt[key] = step
}

// dropped lists the evicted keys, most recently evicted first.
func (w *world) dropped() []string {
	keys := sortedKeys(w.evicted)
	sort.SliceStable(keys, func(i, j int) bool { return w.evictedAt[keys[i]] > w.evictedAt[keys[j]] })
	return keys
}

// evict drops entries of cands by score (tokens × idle steps, see idle),
// largest first, until their tokens fit budget. An entry used at this
// step or the previous one is never evicted, so a file larger than the
// budget survives the turn after it is read. stale says whether an
// entry's key also has an older copy that stays in view, so its drop note
// says that copy is out of date.
func (w *world) evict(cands []*entry, budget, step int, stale func(*entry) bool) int {
	total := 0
	for _, e := range cands {
		total += e.size()
	}
	if total <= budget {
		return 0
	}
	type cand struct {
		e     *entry
		score int64
	}
	var cs []cand
	for _, e := range cands {
		age := step - w.used[e.key]
		if age <= 1 || e.pinned {
			continue
		}
		cs = append(cs, cand{e, int64(e.size()) * int64(max(1, w.idle(e.key, step)))})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].e.key < cs[j].e.key
	})
	n := 0
	for _, c := range cs {
		if total <= budget {
			break
		}
		how := recallHint(c.e)
		if stale != nil && stale(c.e) {
			how = staleHint(c.e)
		}
		if c.e.path == "" && c.e.text != "" {
			// A command's or search's output: kept by the proxy, named by
			// its hash, so it comes back in one call without running it.
			how += " [recall " + recall.Ref(c.e.text) + "]"
			w.recalled = append(w.recalled, c.e.text)
		}
		w.drop(c.e.key, how, step)
		total -= c.e.size()
		n++
	}
	return n
}

// ordered returns the entries in snapshot order: oldest change first.
func (w *world) ordered() []*entry {
	out := make([]*entry, 0, len(w.entries))
	for _, e := range w.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].updated != out[j].updated {
			return out[i].updated < out[j].updated
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// recallHint names a dropped entry's call and the size of its result, as
// the snapshot note lists it; the note says once how to see a result
// again (repeat its call).
func recallHint(e *entry) string {
	switch {
	case e.path != "" && e.firstLine > 0:
		return fmt.Sprintf("Read %s (lines %d-%d, ~%d tokens)", e.path, e.firstLine, e.lastLine, e.tokens)
	case e.path != "":
		return fmt.Sprintf("Read %s (~%d tokens)", e.path, e.tokens)
	case e.tool == "Bash":
		return fmt.Sprintf("Bash `%s` (~%d tokens)", clip(gjson.GetBytes(e.input, "command").String(), 160), e.tokens)
	default:
		return fmt.Sprintf("%s %s (~%d tokens)", e.tool, clip(string(e.input), 160), e.tokens)
	}
}

// staleHint says that the copy of an entry still in view is out of date.
func staleHint(e *entry) string {
	if e.path != "" {
		return fmt.Sprintf("Read %s: changed since the copy shown earlier in this conversation; call Read to see the current content", e.path)
	}
	return recallHint(e) + " (the earlier copy shown above is out of date)"
}

// clip shortens s to its first line and at most n bytes, cut on a rune
// boundary, and marks a cut with "…".
func clip(s string, n int) string {
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], true
	}
	if cut {
		return s + "…"
	}
	return s
}

// numbering is how a Read result numbers its lines ("     1→" in older
// Claude Code, "1\t" in newer).
type numbering struct {
	width int    // right-aligned width of the number, 0 for none
	sep   string // "\t" or "→"
}

// parseNumbered splits a Read result into its lines' text, first and last
// line numbers and numbering style. ok is false when the text is not in the
// numbered form (a stub, an error, an image).
func parseNumbered(s string) (lines []string, first, last int, style numbering, ok bool) {
	return walkNumbered(s, true)
}

// numberedRange is parseNumbered without the lines: the first and last
// line numbers and the style, with no allocation.
func numberedRange(s string) (first, last int, style numbering, ok bool) {
	_, first, last, style, ok = walkNumbered(s, false)
	return first, last, style, ok
}

// walkNumbered reads the numbered lines of s, collecting their text when
// keep is set.
func walkNumbered(s string, keep bool) (lines []string, first, last int, style numbering, ok bool) {
	if s == "" {
		return nil, 0, 0, style, false
	}
	rest := strings.TrimSuffix(s, "\n")
	if keep {
		lines = make([]string, 0, strings.Count(rest, "\n")+1)
	}
	n := 0 // numbered lines read
	for {
		row, tail, more := strings.Cut(rest, "\n")
		rest = tail
		j := 0
		for j < len(row) && row[j] == ' ' {
			j++
		}
		k := j
		for k < len(row) && row[k] >= '0' && row[k] <= '9' {
			k++
		}
		if k == j {
			break // not numbered: at the first line, not the form; later, trailing text (a reminder)
		}
		sep := ""
		switch {
		case strings.HasPrefix(row[k:], "\t"):
			sep = "\t"
		case strings.HasPrefix(row[k:], "→"):
			sep = "→"
		}
		if sep == "" {
			break
		}
		num, _ := strconv.Atoi(row[j:k])
		if n == 0 {
			first = num
			style.sep = sep
			if j > 0 {
				style.width = k
			}
		}
		last = num
		n++
		if keep {
			lines = append(lines, row[k+len(sep):])
		}
		if !more {
			break
		}
	}
	if n == 0 {
		return nil, 0, 0, numbering{}, false
	}
	return lines, first, last, style, true
}

// renderNumbered numbers lines from 1 in style.
func renderNumbered(lines []string, style numbering) string {
	if style.sep == "" {
		style.sep = "\t"
	}
	var sb strings.Builder
	for i, l := range lines {
		n := strconv.Itoa(i + 1)
		for p := len(n); p < style.width; p++ {
			sb.WriteByte(' ')
		}
		sb.WriteString(n)
		sb.WriteString(style.sep)
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// jsonObject encodes string pairs as a JSON object, in the order given.
func jsonObject(kv ...string) []byte {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, jsonString(kv[i])...), ':'), jsonString(kv[i+1])...)
	}
	return append(b, '}')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
