package read

import (
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// SpanKind says who wrote a span of a human turn.
type SpanKind uint8

// The kinds of span: only Typed spans are the person's words.
const (
	Typed   SpanKind = iota // typed by the person
	Pasted                  // copied from elsewhere: output, traces, diffs, code, documents, the assistant's words
	Harness                 // put there by Claude Code or the IDE: context blocks, paste placeholders
)

func (k SpanKind) String() string {
	switch k {
	case Typed:
		return "typed"
	case Pasted:
		return "pasted"
	}
	return "harness"
}

// Span is a byte range [Start, End) of a turn's text and who wrote it; Why
// names the rule that marked a pasted or harness span.
type Span struct {
	Start, End int
	Kind       SpanKind
	Why        string
}

// agentOpeners start a user-role record that carries another agent's or
// the harness's message rather than the person's: teammate and
// cross-session messages, agent reports, channel and task notifications.
// A turn whose text starts with one is not a human turn at all.
var agentOpeners = []string{
	"Another Claude session sent a message", "A message arrived from ",
	"<teammate-message", "<cross-session-message", "<agent-message", "<channel source=",
	"<task-notification>", "<mcp-resource-update", "<user-memory-input>", "<tick>",
	"[SYSTEM NOTIFICATION", "[Subagent hand-back]", "No response requested.",
	"<user-prompt-submit-hook>", "Stop hook feedback:", "SubagentStop hook feedback:",
	"PreToolUse:", "PostToolUse:", "UserPromptSubmit hook",
}

// agentTags mark another agent's message anywhere in the first lines of
// a turn (a relay may put a framing line before the tag).
var agentTags = []string{"<teammate-message", "<cross-session-message", "<agent-message", "<task-notification>"}

// FromAgent reports whether text (a user-role record's text) is another
// agent's or the harness's message, and which opener says so.
func FromAgent(text string) (string, bool) {
	t := strings.TrimLeftFunc(text, unicode.IsSpace)
	for _, p := range agentOpeners {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			return p, true
		}
	}
	head := t
	if len(head) > 400 {
		head = head[:400]
	}
	for _, tag := range agentTags {
		if strings.Contains(head, tag) {
			return tag, true
		}
	}
	return "", false
}

// ideBlocks are the IDE context blocks Claude Code adds to a prompt.
var ideBlocks = [][2]string{
	{"<ide_selection>", "</ide_selection>"}, {"<ide_opened_file>", "</ide_opened_file>"},
	{"<ide_diagnostics>", "</ide_diagnostics>"}, {"<system-reminder>", "</system-reminder>"},
}

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

// Machine-made line shapes: a line matching one is output, a trace, a
// diff, code or a table, not a sentence typed to the assistant.
var machineLine = lazy(`^(?:` +
	`\s+at\s+\S.*[(:]|\s*at\s+\S+\s+\(\S+:\d+` + // JS/Java stack frames
	`|\s*\S+ @ \S+:\d+` + // browser console frames: fn @ file.js:12
	`|\s*\S+\.(?:js|mjs|cjs|ts|tsx|jsx|py|go|rs|java|rb|php|c|cc|cpp|h|cs|kt|swift):\d+` + // file:line
	`|\s*File ".+", line \d+` + // Python traceback
	`|Traceback \(most recent call last\)|goroutine \d+ \[|panic: |\s*#\d+\s+0x[0-9a-f]+` +
	`|\s*[\w.]*(?:Error|Exception|Warning)(?: \[\w+\])?:\s` + // TypeError: …, AggregateError [ECONNREFUSED]:
	`|\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}\b` + // timestamps
	`|\s*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\]?[\s:]` + // log levels
	`|\s*\[[\w .:/-]{1,30}\]\s` + // [WS] …, [Autopilot] …
	`|[@\w./-]+:[\w.-]+:\s` + // monorepo task prefixes: @scope/app:dev: …
	`|diff --git |index [0-9a-f]{6,}\.\.|@@ -\d|\+\+\+ [ab/]|--- [ab/]|new file mode|deleted file mode` + // diffs
	`|=+ .+ =+\s*$|_+ .+ _+\s*$|E {2,}\S|(?:FAILED|PASSED|ERROR|SKIPPED|XFAIL) \S+::|\S+\.py:\d+:` + // pytest
	`|\s*[$❯›»] \S|\S+@\S+:\S*[$#] |PS [A-Z]:\\|>>> ` + // shell and REPL prompts
	`|(?:ok|FAIL|PASS|---)\s+\S+\s|(?:--- )?(?:FAIL|PASS|SKIP|RUN)(?::|\s*$)|=== RUN` + // go test
	`|\S.*\t` + // columns: typed text has no tabs inside a line
	`|\s*[⏺⎿✻✽●◼□■▶▷⏵]` + // Claude Code's own transcript glyphs
	`|.*[─│┌┐└┘├┤┬┴┼═║╔╗╚╝]` + // box drawing
	`|\s*\|.*\|\s*$` + // tables
	`|\s*(?:func|def|class|import|from \S+ import|package|const|let|var|return|#include|public|private|async def|export|interface|type \w+ (?:struct|interface))\b.*[({=:;]?\s*$` +
	`|\s*[{}\[\]()<>;,]+\s*$|\s*"[^"]+"\s*:\s*\S|\s*</?[a-zA-Z][\w-]*(?:\s[^>]*)?>` + // JSON, XML
	`|\s*(?:https?://|/|~/|\./|[A-Z]:\\)\S*\s*$` + // a bare path or URL
	`|\s*> ` + // a quoted document
	`)`)

// diffHeader starts the lines of a unified diff.
var diffHeader = lazy(`^(?:diff --git |index [0-9a-f]+\.\.|@@ -\d|\+\+\+ |--- [ab/]|--- \S+\t)`)

// codeEnd: a line ending like code does.
var codeEnd = lazy(`[;{}]\s*$|\)\s*[{:]\s*$`)

// pasteMarker is Claude Code's placeholder for a paste or an image.
var pasteMarker = lazy(`\[(?:Pasted text #\d+[^\]]*|Image #\d+[^\]]*|Pasted image[^\]]*)\]`)

// headingLine and listLine are Markdown document structure.
var (
	headingLine = lazy(`^\s{0,3}#{1,6}\s+\S`)
	fenceLine   = lazy("^\\s*(```|~~~)")
)

// isMachine reports whether one line looks machine-made or copied.
func isMachine(line string) (string, bool) {
	t := strings.TrimRight(line, " \t\r")
	if t == "" {
		return "", false
	}
	if machineLine.MatchString(t) {
		return "output, trace, diff, code or table", true
	}
	if codeEnd.MatchString(t) {
		return "code", true
	}
	// Few letters among the visible characters: data, not prose.
	letters, visible := 0, 0
	for _, r := range t {
		if unicode.IsSpace(r) {
			continue
		}
		visible++
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if visible >= 12 && letters*2 < visible {
		return "symbols and numbers", true
	}
	// Deep indentation is how terminals and documents lay out output.
	if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ") {
		return "indented block", true
	}
	return "", false
}

// line is one line of a turn, without its newline.
type line struct {
	start, end int
	machine    bool // nothing typed left on it
	blank      bool
	prose      bool // typed words remain
}

// proseLines reports whether every line is typed prose, not a heading.
func proseLines(text string, ls []line) bool {
	for _, l := range ls {
		if !l.prose || headingLine.MatchString(text[l.start:l.end]) {
			return false
		}
	}
	return true
}

// Split divides a human turn's text into typed, pasted and harness spans
// that cover it in order, without gaps or overlaps. echo (may be nil) is
// the assistant's earlier text; lines or runs of words copied from it are
// pasted.
//
// The rules, line by line and then paragraph by paragraph: IDE context
// blocks and Claude Code's paste placeholders are harness text; code
// fences and what they enclose, stack traces, logs, command output, diffs,
// pytest reports, shell prompts, tables, JSON and XML, bare paths and
// quoted lines are pasted; from a "⏺" (Claude Code's marker of the
// assistant's messages) to the end of its line is pasted, and so are runs
// of words the assistant wrote. A paragraph whose lines are mostly pasted
// is pasted whole except for its first and last lines if they read as
// prose (the sentence typed above or below a paste); a document with two
// or more Markdown headings is pasted from its first heading to its last
// paragraph, unless that last paragraph is one or two lines of prose.
func Split(text string, echo *Echo) []Span {
	n := len(text)
	kind := make([]SpanKind, n)
	why := make([]string, n)
	mark := func(a, b int, k SpanKind, w string) {
		for i := max(a, 0); i < min(b, n); i++ {
			if k > kind[i] {
				kind[i], why[i] = k, w
			}
		}
	}
	// Harness: IDE blocks and paste placeholders.
	for _, bl := range ideBlocks {
		for off := 0; off < n; {
			i := strings.Index(text[off:], bl[0])
			if i < 0 {
				break
			}
			i += off
			j := strings.Index(text[i:], bl[1])
			end := n
			if j >= 0 {
				end = i + j + len(bl[1])
			}
			mark(i, end, Harness, "IDE or reminder block")
			off = end
		}
	}
	for _, m := range pasteMarker.FindAllStringIndex(text, -1) {
		mark(m[0], m[1], Harness, "paste placeholder")
	}

	var lines []line
	for off := 0; off <= n; {
		e := strings.IndexByte(text[off:], '\n')
		end := n
		if e >= 0 {
			end = off + e
		}
		lines = append(lines, line{start: off, end: end})
		if e < 0 {
			break
		}
		off = end + 1
	}
	// inMsg: under a "⏺" line, Claude Code's terminal indents the rest of
	// the assistant's message by two spaces; a pasted message goes on
	// while its lines do.
	inFence, inDiff, inMsg := false, false, false
	for i := range lines {
		l := &lines[i]
		s := text[l.start:l.end]
		if allHarness(kind, l.start, l.end) {
			l.blank = true
			continue
		}
		if fenceLine.MatchString(s) {
			mark(l.start, l.end+1, Pasted, "code block")
			l.machine = true
			inFence = !inFence
			continue
		}
		if inFence {
			mark(l.start, l.end+1, Pasted, "code block")
			l.machine = true
			continue
		}
		if strings.TrimSpace(s) == "" {
			l.blank = true
			inDiff = false
			continue
		}
		if inMsg && strings.HasPrefix(s, "  ") {
			mark(l.start, l.end+1, Pasted, "the assistant's message")
			l.machine = true
			continue
		}
		inMsg = strings.ContainsAny(s, "⏺⎿")
		if inDiff && (s[0] == '+' || s[0] == '-' || s[0] == ' ' || s[0] == '\\') {
			mark(l.start, l.end+1, Pasted, "diff")
			l.machine = true
			continue
		}
		inDiff = diffHeader.MatchString(s)
		if w, ok := isMachine(s); ok {
			mark(l.start, l.end+1, Pasted, w)
			l.machine = true
			continue
		}
		if g := strings.IndexAny(s, "⏺⎿"); g > 0 {
			mark(l.start+g, l.end+1, Pasted, "the assistant's message")
		}
		for _, r := range echo.echoed(s) {
			mark(l.start+r[0], l.start+r[1], Pasted, "the assistant's words")
		}
		// What is left typed on the line must be more than a word or two.
		if typedWords(text, kind, l.start, l.end) < 3 && !allTyped(kind, l.start, l.end) {
			mark(l.start, l.end+1, Pasted, "the assistant's words")
		}
		l.machine = !allTyped(kind, l.start, l.end) && typedWords(text, kind, l.start, l.end) == 0
		l.prose = !l.machine
	}

	// Paragraphs: runs of non-blank lines.
	var paras [][2]int // line index ranges [a, b)
	for i := 0; i < len(lines); {
		if lines[i].blank {
			i++
			continue
		}
		j := i
		for j < len(lines) && !lines[j].blank {
			j++
		}
		paras = append(paras, [2]int{i, j})
		i = j
	}
	first, last := -1, -1
	if len(paras) > 0 {
		first, last = 0, len(paras)-1
	}
	for pi, p := range paras {
		machine := 0
		for i := p[0]; i < p[1]; i++ {
			if lines[i].machine {
				machine++
			}
		}
		total := p[1] - p[0]
		if total < 3 || machine*2 < total {
			continue
		}
		// Mostly pasted: the whole paragraph is, except a prose line at
		// the very start or end of the turn's text.
		for i := p[0]; i < p[1]; i++ {
			keep := lines[i].prose && (i == p[0] && pi == first || i == p[1]-1 && pi == last)
			if !keep {
				mark(lines[i].start, lines[i].end+1, Pasted, "inside pasted output")
			}
		}
	}

	// Documents: two or more Markdown headings make the text between the
	// first heading and the end a pasted document; a short closing prose
	// paragraph stays typed.
	headings := 0
	firstHeading := -1
	for pi, p := range paras {
		for i := p[0]; i < p[1]; i++ {
			if headingLine.MatchString(text[lines[i].start:lines[i].end]) {
				headings++
				if firstHeading < 0 {
					firstHeading = pi
				}
			}
		}
	}
	if headings >= 2 {
		end := len(paras)
		lp := paras[len(paras)-1]
		if lp[1]-lp[0] <= 2 && len(paras)-1 > firstHeading && proseLines(text, lines[lp[0]:lp[1]]) {
			end--
		}
		for pi := firstHeading; pi < end; pi++ {
			p := paras[pi]
			mark(lines[p[0]].start, lines[p[1]-1].end+1, Pasted, "pasted document")
		}
	}
	return spans(kind, why)
}

func allHarness(kind []SpanKind, a, b int) bool {
	for i := a; i < b; i++ {
		if kind[i] != Harness {
			return false
		}
	}
	return b > a
}

func allTyped(kind []SpanKind, a, b int) bool {
	for i := a; i < b; i++ {
		if kind[i] != Typed {
			return false
		}
	}
	return true
}

// typedWords counts the words of text[a:b] that are still typed.
func typedWords(text string, kind []SpanKind, a, b int) int {
	c := 0
	for _, w := range words(text[a:b]) {
		if kind[a+w.start] == Typed {
			c++
		}
	}
	return c
}

// spans turns per-byte kinds into spans, never splitting a UTF-8
// sequence.
func spans(kind []SpanKind, why []string) []Span {
	var out []Span
	for i := 0; i < len(kind); {
		j := i + 1
		for j < len(kind) && kind[j] == kind[i] && why[j] == why[i] {
			j++
		}
		out = append(out, Span{Start: i, End: j, Kind: kind[i], Why: why[i]})
		i = j
	}
	return out
}

// TypedParts returns the typed spans' text, each trimmed, empty ones left
// out.
func TypedParts(text string, spans []Span) []string {
	var out []string
	for _, s := range spans {
		if s.Kind != Typed {
			continue
		}
		if t := strings.TrimSpace(text[s.Start:s.End]); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Pattern is a regular expression compiled on first use: the hook binary
// links the learning packages but never reads a transcript, and compiling
// every rule at start-up cost it about 9 ms per SessionEnd.
type Pattern struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

// Lazy returns the Pattern of src; it panics on first use if src does not
// compile, as regexp.MustCompile does.
func Lazy(src string) *Pattern { return &Pattern{src: src} }

func (p *Pattern) get() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.src) })
	return p.re
}

// MatchString is regexp.Regexp.MatchString.
func (p *Pattern) MatchString(s string) bool { return p.get().MatchString(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (p *Pattern) ReplaceAllString(s, repl string) string { return p.get().ReplaceAllString(s, repl) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (p *Pattern) FindStringSubmatch(s string) []string { return p.get().FindStringSubmatch(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (p *Pattern) FindStringIndex(s string) []int { return p.get().FindStringIndex(s) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (p *Pattern) FindAllStringIndex(s string, n int) [][]int {
	return p.get().FindAllStringIndex(s, n)
}

func lazy(src string) *Pattern { return Lazy(src) }
