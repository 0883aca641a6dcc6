package projection

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// maxDropNotes bounds the list of dropped results in the snapshot note,
// most recent first.
const maxDropNotes = 60

// unchangedStub starts Claude Code's answer to a Read of a file it believes
// is still in context.
const unchangedStub = "File unchanged since last read."

// clearedStub is Claude Code's placeholder for an old tool result it cleared.
const clearedStub = "[Old tool result content cleared]"

// served is one message as the projection serves it.
type served struct {
	role   string
	blocks [][]byte // canonical block JSON, no cache_control
	kinds  []string // block types, parallel to blocks
	tokens int
	bp     map[int]bool // blocks that carry a breakpoint
	// stable marks a user message whose curated form is its full form:
	// served as the current turn, it is re-served unchanged afterwards.
	stable bool
	extra  []byte // the message's other fields, verbatim
}

// fold is the deterministic state of a conversation after its messages
// have been read in order. Everything the projection serves is computed
// here from the messages alone, so a fresh engine reproduces it.
type fold struct {
	cfg   resolved
	world *world
	mem   *memory
	step  int
	uses  map[string]block // tool_use id → call
	head  []served
	// gens is the world snapshot, oldest generation first (see
	// generation.go); where maps each entry they serve to its generation.
	gens  []gen
	where map[*entry]int
	// acc is, per cut, the read cost a rebuild from it would have saved
	// since that part was last rebuilt.
	acc           []float64
	tail          []served // curated messages since the checkpoint
	extras        [][]byte // user text blocks and system notes of folded messages, in order
	pendingExtras [][]byte // extras of tail messages (folded at the next re-projection)

	headNotes      [][]byte // snapshot notes carried by the goal message when the world is empty
	headNoteTokens int

	tailTokens int
	origTokens int // the client's messages as sent, for the engagement decision
	firstNow   int // the served size of the first turn accounted

	// shown is, per identity, the latest result the request serves
	// verbatim; refs maps the tool_use id of a result served as a
	// reference to the text it stands for (see dedupe.go).
	shown map[string]shownCopy
	refs  map[string]string

	reminded      bool // the final message carries the memory reminder
	inHead        bool // no assistant message seen yet
	reprojections int
	reprojected   bool // at the last step
	// uncacheable is the stable prefix (tokens) of the projection the
	// last engagement decision declined as too short to cache, else 0.
	uncacheable int
	evictions   int
	lastCut     int // the cut of the last re-projection
}

func newFold(cfg resolved) *fold {
	return &fold{cfg: cfg, world: newWorld(cfg.tok), mem: newMemory(), uses: map[string]block{}, inHead: true,
		shown: map[string]shownCopy{}, refs: map[string]string{}, where: map[*entry]int{}}
}

// engaged reports whether the engine serves its projection rather than
// the client's body: from the first re-projection on.
func (f *fold) engaged() bool { return f.cfg.always || f.reprojections > 0 }

// clone copies the state so that folding more messages into the copy
// leaves the original untouched (entries, rendered messages and the
// where map are immutable and shared).
func (f *fold) clone() *fold {
	c := *f
	c.world = f.world.clone()
	c.mem = f.mem.clone()
	c.uses = maps.Clone(f.uses)
	c.head = slices.Clone(f.head)
	c.gens = slices.Clone(f.gens)
	c.acc = slices.Clone(f.acc)
	c.tail = slices.Clone(f.tail)
	c.extras = slices.Clone(f.extras)
	c.pendingExtras = slices.Clone(f.pendingExtras)
	c.headNotes = slices.Clone(f.headNotes)
	c.shown = maps.Clone(f.shown)
	c.refs = maps.Clone(f.refs)
	return &c
}

// consume folds the next message; last says it is the request's final message
// (the current turn, served in full).
func (f *fold) consume(m message, last bool) error {
	if f.inHead {
		if m.role != "assistant" {
			f.head = append(f.head, f.render(m, false, nil))
			return nil
		}
		if !hasRole(f.head, "user") {
			return fmt.Errorf("no user message before the first assistant message")
		}
		f.inHead = false
		for _, h := range f.head {
			f.origTokens += h.tokens
		}
	}
	switch m.role {
	case "assistant":
		f.origTokens += m.tokens(f.cfg.span)
		f.step++
		f.reprojected = false
		for _, b := range m.blocks {
			if b.typ == "tool_use" {
				f.uses[b.id] = b
			}
		}
		s := f.render(m, false, nil)
		f.tail = append(f.tail, s)
		f.tailTokens += s.tokens
	case "user":
		full := f.render(m, true, nil)
		f.origTokens += m.tokens(f.cfg.span)
		f.maybeReproject(full.tokens)
		// The curated form is decided after any re-projection, against
		// exactly what this request serves before the message.
		cur := f.render(m, false, f.indexResult)
		f.ingest(m)
		f.pendingExtras = append(f.pendingExtras, userExtras(m)...)
		full.stable = sameBlocks(full.blocks, cur.blocks)
		cur.stable = full.stable
		if last {
			f.tail = append(f.tail, full)
		} else {
			f.tail = append(f.tail, cur)
			f.tailTokens += cur.tokens
		}
	default: // role "system" inside messages, carried in place
		f.origTokens += m.tokens(f.cfg.span)
		s := f.render(m, false, nil)
		f.tail = append(f.tail, s)
		f.tailTokens += s.tokens
		f.pendingExtras = append(f.pendingExtras, s.blocks...)
	}
	return nil
}

// served assembles the request's messages from the folded state.
func (f *fold) served() []served {
	f.reminded = false
	n := len(f.head) + len(f.tail) + 1
	for _, g := range f.gens {
		n += len(g.msgs)
	}
	out := make([]served, 0, n)
	out = append(out, f.head...)
	if len(f.headNotes) > 0 {
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].role == "user" {
				h := &out[i]
				h.blocks = append(append([][]byte(nil), h.blocks...), f.headNotes...)
				h.kinds = append([]string(nil), h.kinds...)
				for range f.headNotes {
					h.kinds = append(h.kinds, "text")
				}
				break
			}
		}
	}
	for _, g := range f.gens {
		out = append(out, g.msgs...)
	}
	out = append(out, f.tail...)
	if len(out) > 0 && out[len(out)-1].role == "user" {
		if r := f.mem.reminder(); r != "" {
			f.reminded = true
			l := &out[len(out)-1]
			l.blocks = append(append([][]byte(nil), l.blocks...), textBlock(r).raw)
			l.kinds = append(append([]string(nil), l.kinds...), "text")
		}
	}
	return out
}

func sameBlocks(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func hasRole(ms []served, role string) bool {
	for _, m := range ms {
		if m.role == role {
			return true
		}
	}
	return false
}

// maybeReproject accounts for the turn whose full form has current
// tokens and rebuilds the snapshot from the cut that pays, if any (see
// generation.go). The checkpoint is the assistant message this turn
// answers, so the latest completed exchange stays verbatim.
func (f *fold) maybeReproject(current int) {
	now := f.headTokens() + f.snapTokens() + f.tailTokens + current
	if !f.engaged() {
		now = f.cfg.origOverhead + f.origTokens
	}
	est := f.estimates()
	f.account(now, current, est)
	if len(f.tail) <= 1 || f.tail[len(f.tail)-1].role != "assistant" || f.tailTokens < f.cfg.threshold {
		return
	}
	c := f.chooseCut(now, current, est)
	if c < 0 && f.engaged() && now > f.cfg.ceiling {
		c = 0 // over the hard ceiling: rebuild whatever it costs
	}
	if c >= 0 {
		f.reproject(c)
	}
}

// reproject folds every tail message but the last assistant one into the
// world and rebuilds the generations from cut c on: the world entries they
// do not keep are evicted down to the target, and the survivors are
// rendered as one new generation — those the rebuilt generations served,
// in their previous order, then the new ones — followed by a note of what
// was dropped since and the user's folded words.
func (f *fold) reproject(c int) {
	keep := f.tail[len(f.tail)-1]
	f.extras = append(f.extras, f.pendingExtras...)
	f.pendingExtras = nil
	before := len(f.gens)
	for {
		g, ok := f.rebuild(c)
		if ok || c == 0 {
			f.gens = append(f.gens[:c:c], g)
			if len(g.list) == 0 {
				// No world: the notes ride on the goal message.
				f.gens = f.gens[:0]
				f.headNotes = g.msgs[0].blocks
				f.headNoteTokens = g.tokens
			}
			break
		}
		c-- // an empty generation cannot carry its note
	}
	if c == 0 && len(f.gens) > 0 {
		f.headNotes, f.headNoteTokens = nil, 0
	}
	if len(f.gens) > maxGens {
		// Promote: the two oldest generations become one, unchanged.
		a, b := f.gens[0], f.gens[1]
		merged := gen{list: slices.Concat(a.list, b.list), msgs: slices.Concat(a.msgs, b.msgs),
			tokens: a.tokens + b.tokens, extras: b.extras, listed: slices.Concat(a.listed, b.listed)}
		f.gens = append([]gen{merged}, f.gens[2:]...)
		if c > 0 {
			c--
		}
	}
	f.where = make(map[*entry]int)
	for i, g := range f.gens {
		for _, e := range g.list {
			f.where[e] = i
		}
	}
	f.settle(c, before)
	f.indexSnapshot()
	f.tail = []served{keep}
	f.tailTokens = keep.tokens
	f.reprojections++
	f.reprojected = true
	f.lastCut = c
}

// rebuild renders the generation that replaces those from cut c on; ok is
// false when it has no entry (its note has nothing to ride on).
func (f *fold) rebuild(c int) (gen, bool) {
	keptSnap, extrasFrom := 0, 0
	listed := map[string]bool{}
	for _, g := range f.gens[:c] {
		keptSnap += g.tokens
		extrasFrom = g.extras
		for _, k := range g.listed {
			listed[k] = true
		}
	}
	var cands []*entry
	for _, e := range f.world.entries {
		if !f.keptIn(e, c) {
			cands = append(cands, e)
		}
	}
	stale := func(e *entry) bool { return f.staleKept(e.key, c) }
	f.evictions += f.world.evict(cands, f.room(c, keptSnap), f.step, stale)
	in := map[*entry]bool{}
	var list []*entry
	for _, g := range f.gens[c:] {
		for _, e := range g.list {
			if f.world.entries[e.key] == e && !in[e] {
				list = append(list, e)
				in[e] = true
			}
		}
	}
	for _, e := range f.world.ordered() {
		if !in[e] && !f.keptIn(e, c) {
			list = append(list, e)
		}
	}
	var drops []string
	for _, k := range f.world.dropped() {
		if !listed[k] || f.staleKept(k, c) {
			drops = append(drops, k)
		}
	}
	g := gen{list: list, extras: len(f.extras), listed: drops}
	g.msgs = f.renderGen(list, f.notes(drops, f.extras[extrasFrom:]))
	for _, s := range g.msgs {
		g.tokens += s.tokens
	}
	return g, len(list) > 0 || c == 0
}

// staleKept reports whether a generation before cut c shows a copy of key
// that is no longer its current version.
func (f *fold) staleKept(key string, c int) bool {
	for _, g := range f.gens[:c] {
		for _, e := range g.list {
			if e.key == key && f.world.entries[key] != e {
				return true
			}
		}
	}
	return false
}

// renderGen emits entries as paired exchanges, with the notes on the last
// one (or alone, as one user message, when there is no entry).
func (f *fold) renderGen(list []*entry, notes [][]byte) []served {
	var out []served
	for _, e := range list {
		res := toolResultJSON(e.id(), e.content)
		out = append(out,
			served{role: "assistant", blocks: [][]byte{e.use}, kinds: []string{"tool_use"}, tokens: e.useTokens},
			served{role: "user", blocks: [][]byte{res}, kinds: []string{"tool_result"}, tokens: e.tokens},
		)
	}
	if len(out) == 0 {
		if len(notes) == 0 {
			return nil
		}
		out = append(out, served{role: "user"})
	}
	l := &out[len(out)-1]
	l.blocks = append(l.blocks, notes...)
	for range notes {
		l.kinds = append(l.kinds, "text")
	}
	l.tokens += blocksTokens(f.cfg.tok, notes)
	return out
}

func blocksTokens(tok func(string) int, bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += tok(stringOf(b))
	}
	return n
}

// notes are a generation's text blocks: the results dropped since the
// generations it follows (keys, most recently dropped first) and how to
// get them back, then the user's later messages and system notes,
// verbatim.
func (f *fold) notes(keys []string, extras [][]byte) [][]byte {
	var out [][]byte
	if len(keys) > 0 {
		var sb strings.Builder
		sb.WriteString("<system-reminder>\nTo keep this context small, the results of these earlier calls were dropped from it. Nothing is known to have changed unless said; to see a result again, repeat its call (that is not a loop):\n")
		for i, k := range keys {
			if i == maxDropNotes {
				fmt.Fprintf(&sb, "- and %d earlier ones: repeat any call whose result you need\n", len(keys)-i)
				break
			}
			sb.WriteString("- ")
			sb.WriteString(f.world.evicted[k])
			sb.WriteByte('\n')
		}
		sb.WriteString("</system-reminder>")
		out = append(out, textBlock(sb.String()).raw)
	}
	return append(out, extras...)
}

// userExtras are the text blocks of a user message that must survive
// folding: the user's words, not Claude Code's volatile reminders.
func userExtras(m message) [][]byte {
	var out [][]byte
	for _, b := range m.blocks {
		if b.typ != "text" {
			continue
		}
		t := strings.TrimSpace(b.text)
		if t == "" || (strings.HasPrefix(t, "<system-reminder>") && strings.HasSuffix(t, "</system-reminder>")) {
			continue
		}
		out = append(out, b.raw)
	}
	return out
}

// render produces a message's served form. full is the current turn's form:
// nothing curated away. note, if set, is told how each tool_result was
// curated.
func (f *fold) render(m message, full bool, note func(block, curation)) served {
	s := served{role: m.role, extra: m.extra,
		blocks: make([][]byte, 0, len(m.blocks)), kinds: make([]string, 0, len(m.blocks))}
	for i := range m.blocks {
		b := &m.blocks[i]
		raw := b.raw
		if b.typ == "tool_result" {
			var how curation
			raw, how = f.curateResult(b, full)
			if note != nil {
				note(*b, how)
			}
		}
		if (b.typ == "text" && b.text == "") || len(raw) == 0 {
			continue // empty text blocks are invalid
		}
		s.blocks = append(s.blocks, raw)
		s.kinds = append(s.kinds, b.typ)
		if &raw[0] == &b.raw[0] {
			s.tokens += b.tokenCount(f.cfg.span)
		} else {
			s.tokens += f.cfg.tok(stringOf(raw))
		}
	}
	if len(s.blocks) == 0 && m.role != "system" {
		// Claude Code sends an empty role:"system" message after /compact;
		// it is carried as sent. Other roles need content.
		s.blocks = [][]byte{textBlock("(empty)").raw}
		s.kinds = []string{"text"}
	}
	return s
}

// curateResult restores evicted content behind Claude Code's unchanged stub
// and, outside the current turn, replaces a result identical to one the
// request still shows by a reference to it, and shortens very large
// non-Read output to its head and tail with a note on how to see the rest.
func (f *fold) curateResult(b *block, full bool) ([]byte, curation) {
	use, ok := f.uses[b.toolUseID]
	if !ok {
		return b.raw, curOther
	}
	if use.name == "Read" && strings.HasPrefix(strings.TrimSpace(b.text), unchangedStub) {
		path := use.input.Get("file_path").String()
		if e, ok := f.world.observed[path]; ok && !f.visible(path) {
			return toolResultJSON(b.toolUseID, e.content), curOther
		}
	}
	if full || b.images > 0 {
		return b.raw, curVerbatim
	}
	if c, ok := f.earlierCopy(use, *b); ok {
		return toolResultJSON(b.toolUseID, jsonString(reference(c))), curReference
	}
	if use.name == "Read" {
		return b.raw, curVerbatim
	}
	limit := f.cfg.resultCap
	n := b.textTokenCount(f.cfg.tok)
	if n <= limit {
		return b.raw, curVerbatim
	}
	short := digest(b.text, n, use, 4*limit/2)
	out := openToolResultJSON(b.toolUseID, jsonString(short))
	if b.isError {
		out = append(out, `,"is_error":true`...)
	}
	return append(out, '}'), curOther
}

// visible reports whether a file's full content is in the served context:
// in the snapshot world or in a tail Read result.
func (f *fold) visible(path string) bool {
	if e, ok := f.world.entries[path]; ok && f.inSnapshot(e.key) {
		return true
	}
	for _, s := range f.tail {
		for i, k := range s.kinds {
			if k != "tool_result" {
				continue
			}
			id := gjson.GetBytes(s.blocks[i], "tool_use_id").String()
			if u, ok := f.uses[id]; ok && u.name == "Read" && u.input.Get("file_path").String() == path &&
				!strings.HasPrefix(strings.TrimSpace(gjson.GetBytes(s.blocks[i], "content").String()), unchangedStub) {
				return true
			}
		}
	}
	return false
}

func (f *fold) inSnapshot(key string) bool {
	e, ok := f.world.entries[key]
	if !ok {
		return false
	}
	_, ok = f.where[e]
	return ok
}

// digest keeps the first and last lines of a long output, about keep
// bytes of each, with a note saying how much was left out and how to see it.
func digest(text string, tokens int, use block, keep int) string {
	if len(text) <= 2*keep {
		return text
	}
	head := cutAtLine(text[:keep], false)
	tail := cutAtLine(text[len(text)-keep:], true)
	omitted := text[len(head) : len(text)-len(tail)]
	lines := strings.Count(omitted, "\n")
	return head + fmt.Sprintf("\n[... %d lines (~%d tokens) omitted by synaxi; %s ...]\n", lines, tokens*len(omitted)/max(1, len(text)), rerunHint(use)) + tail
}

// cutAtLine trims s to whole lines: its start when fromEnd, else its end;
// a single long line is kept as it is.
func cutAtLine(s string, fromEnd bool) string {
	if fromEnd {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			return s[i+1:]
		}
		return s
	}
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i+1]
	}
	return s
}

func rerunHint(use block) string {
	if use.name == "Bash" {
		return "re-run the command (piping through sed -n or grep) to see them"
	}
	return "repeat the call to see them"
}

// ingest folds a user message's tool results into the world and memory.
func (f *fold) ingest(m message) {
	for i := range m.blocks {
		b := &m.blocks[i]
		if b.typ != "tool_result" {
			continue
		}
		use, ok := f.uses[b.toolUseID]
		if !ok {
			continue
		}
		f.observe(use, b)
	}
}

func (f *fold) observe(use block, res *block) {
	in := use.input
	text := res.text
	f.mem.observe(use.name, in.Get("command").String(), text, res.isError)
	if res.isError || strings.HasPrefix(strings.TrimSpace(text), clearedStub) {
		return
	}
	step := f.step
	switch use.name {
	case "Read":
		path := in.Get("file_path").String()
		if path == "" {
			return
		}
		if strings.HasPrefix(strings.TrimSpace(text), unchangedStub) {
			f.world.touch(path, step)
			if e, ok := f.world.observed[path]; ok {
				if _, in := f.world.entries[path]; !in {
					c := *e
					f.world.put(&c, step) // restored content is back in view
				}
			}
			return
		}
		e := &entry{key: path, tool: "Read", path: path, content: res.content, text: text}
		if res.content == nil {
			e.content = jsonString(text)
		} else {
			e.tokens = res.contentTokenCount(f.cfg.span) + entryOverhead
		}
		e.firstLine, e.lastLine, e.numbered, _ = numberedRange(text)
		if in.Get("offset").Exists() || in.Get("limit").Exists() {
			e.partial = true
			e.key = fmt.Sprintf("%s#%s:%s", path, in.Get("offset").Raw, in.Get("limit").Raw)
			e.input = []byte(in.Raw)
		} else {
			e.input = jsonObject("file_path", path)
		}
		f.world.put(e, step)
	case "Write":
		path := in.Get("file_path").String()
		if path == "" {
			return
		}
		lines := strings.Split(strings.TrimSuffix(in.Get("content").String(), "\n"), "\n")
		style := numbering{sep: "\t"}
		if old, ok := f.world.observed[path]; ok && old.numbered.sep != "" {
			style = old.numbered
		}
		text := renderNumbered(lines, style)
		f.world.put(&entry{key: path, tool: "Read", path: path, input: jsonObject("file_path", path),
			content: jsonString(text), text: text, numbered: style, firstLine: 1, lastLine: len(lines)}, step)
	case "Edit", "MultiEdit":
		f.edited(in.Get("file_path").String(), use, step)
	case "Bash", "Grep", "Glob":
		key, input := strings.ToLower(use.name)+":"+in.Raw, []byte(in.Raw)
		if use.name == "Bash" {
			cmd := in.Get("command").String()
			if cmd == "" {
				return
			}
			key, input = "cmd:"+cmd, jsonObject("command", cmd)
		}
		content := res.content
		n := res.textTokenCount(f.cfg.tok)
		short := n > f.cfg.worldCap // the snapshot shows its head and tail only
		if short {
			content = jsonString(digest(text, n, use, 4*f.cfg.worldCap/2))
		}
		if content == nil {
			content = jsonString(text)
		}
		f.world.put(&entry{key: key, tool: use.name, input: input, content: content, text: text, short: short}, step)
	}
}

// edited follows an applied Edit (or MultiEdit) of path in the world. The
// file's whole content takes the edit, whether it is in view (the edited
// file replaces it) or was dropped from the snapshot and is kept to
// restore it (so Claude Code's "unchanged since last read" answer to a
// later Read restores the edited file, not the one before the edit). A
// partial view of the file (an offset/limit Read) is never left stale: it
// is dropped with a note. When the edit cannot be applied exactly, the
// file's content is dropped and forgotten.
func (f *fold) edited(path string, use block, step int) {
	w := f.world
	full, inView := w.entries[path]
	if !inView {
		full = w.observed[path]
	}
	var ne *entry
	if full != nil {
		ne = applyEdit(full, use)
	}
	stale := func(what string) string {
		return "Read " + what + ": edited since it was read; call Read to see the current content"
	}
	for _, k := range w.partialKeys(path) {
		e := w.entries[k]
		w.drop(k, stale(fmt.Sprintf("%s (lines %d-%d)", path, e.firstLine, e.lastLine)), step)
	}
	switch {
	case ne != nil && inView:
		w.put(ne, step)
	case ne != nil:
		w.observed[path] = ne
	case inView:
		w.drop(path, stale(path), step)
		delete(w.observed, path)
	default:
		delete(w.observed, path) // stale now; never restore it
	}
}

// applyEdit applies an Edit (or MultiEdit) to a whole-file Read entry;
// nil when it cannot be applied exactly.
func applyEdit(e *entry, use block) *entry {
	if e.partial || e.numbered.sep == "" {
		return nil
	}
	lines, first, _, _, ok := parseNumbered(e.text)
	if !ok || first != 1 {
		return nil
	}
	src := strings.Join(lines, "\n")
	type edit struct {
		old, new string
		all      bool
	}
	var edits []edit
	in := use.input
	if use.name == "MultiEdit" {
		in.Get("edits").ForEach(func(_, v gjson.Result) bool {
			edits = append(edits, edit{v.Get("old_string").String(), v.Get("new_string").String(), v.Get("replace_all").Bool()})
			return true
		})
	} else {
		edits = append(edits, edit{in.Get("old_string").String(), in.Get("new_string").String(), in.Get("replace_all").Bool()})
	}
	for _, ed := range edits {
		if ed.old == "" || !strings.Contains(src, ed.old) {
			return nil
		}
		if ed.all {
			src = strings.ReplaceAll(src, ed.old, ed.new)
		} else {
			if strings.Count(src, ed.old) != 1 {
				return nil
			}
			src = strings.Replace(src, ed.old, ed.new, 1)
		}
	}
	nl := strings.Split(src, "\n")
	text := renderNumbered(nl, e.numbered)
	return &entry{key: e.key, tool: "Read", path: e.path, input: e.input, content: jsonString(text), text: text,
		numbered: e.numbered, firstLine: 1, lastLine: len(nl)}
}
