package read

import (
	"strings"
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
// The rules run as passes over one marking, each only raising a byte's
// kind (typed < pasted < harness):
//
//  1. harness: IDE context blocks and Claude Code's paste placeholders;
//  2. lines: code fences and what they enclose, stack traces, logs,
//     command output, diffs, pytest reports, shell prompts, tables, JSON
//     and XML, bare paths, quoted lines, tickets; from a "⏺" (Claude
//     Code's marker of the assistant's messages) to the end of its line,
//     and runs of words the assistant wrote;
//  3. other people's messages: a chat message under its sender-and-time
//     line, an e-mail from its header lines (From:, Von:, De :, De:) or
//     its "… wrote:" line, to the end of its paragraph;
//  4. terminal-rendered text: when four or more lines, and two thirds of
//     the non-blank ones, are indented by two spaces (another tool's
//     answer or a brief copied from a terminal), the indented lines are
//     pasted;
//  5. paragraphs: one whose lines are mostly pasted is pasted whole except
//     for its first and last lines if they read as prose (the sentence
//     typed above or below a paste);
//  6. documents: two or more Markdown headings make the text from the
//     first heading on pasted, unless its last paragraph is one or two
//     lines of prose.
func Split(text string, echo *Echo) []Span {
	sp := newSplitter(text)
	sp.harness()
	sp.splitLines()
	sp.classifyLines(echo)
	sp.paragraphs()
	sp.messages()
	sp.indented()
	sp.pastedParagraphs()
	sp.documents()
	return spans(sp.kind, sp.why)
}

// splitter is one turn being divided: each byte's kind and why, its lines
// and paragraphs.
type splitter struct {
	text  string
	kind  []SpanKind
	why   []string
	lines []line
	paras [][2]int // line index ranges [a, b) of runs of non-blank lines
}

func newSplitter(text string) *splitter {
	return &splitter{text: text, kind: make([]SpanKind, len(text)), why: make([]string, len(text))}
}

// mark raises bytes [a, b) to kind k, saying why.
func (sp *splitter) mark(a, b int, k SpanKind, w string) {
	for i := max(a, 0); i < min(b, len(sp.text)); i++ {
		if k > sp.kind[i] {
			sp.kind[i], sp.why[i] = k, w
		}
	}
}

// markLines marks lines [a, b) whole, newline included.
func (sp *splitter) markLines(a, b int, k SpanKind, w string) {
	if a < b {
		sp.mark(sp.lines[a].start, sp.lines[b-1].end+1, k, w)
	}
}

// harness marks IDE blocks and paste placeholders.
func (sp *splitter) harness() {
	text, n := sp.text, len(sp.text)
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
			sp.mark(i, end, Harness, "IDE or reminder block")
			off = end
		}
	}
	for _, m := range pasteMarker.FindAllStringIndex(text, -1) {
		sp.mark(m[0], m[1], Harness, "paste placeholder")
	}
}

func (sp *splitter) splitLines() {
	n := len(sp.text)
	for off := 0; off <= n; {
		e := strings.IndexByte(sp.text[off:], '\n')
		end := n
		if e >= 0 {
			end = off + e
		}
		sp.lines = append(sp.lines, line{start: off, end: end})
		if e < 0 {
			break
		}
		off = end + 1
	}
}

// classifyLines marks machine-made and copied lines, line by line.
func (sp *splitter) classifyLines(echo *Echo) {
	text, kind := sp.text, sp.kind
	// inMsg: under a "⏺" line, Claude Code's terminal indents the rest of
	// the assistant's message by two spaces; a pasted message goes on
	// while its lines do.
	inFence, inDiff, inMsg := false, false, false
	for i := range sp.lines {
		l := &sp.lines[i]
		s := text[l.start:l.end]
		if allHarness(kind, l.start, l.end) {
			l.blank = true
			continue
		}
		if fenceLine.MatchString(s) {
			sp.mark(l.start, l.end+1, Pasted, "code block")
			l.machine = true
			inFence = !inFence
			continue
		}
		if inFence {
			sp.mark(l.start, l.end+1, Pasted, "code block")
			l.machine = true
			continue
		}
		if strings.TrimSpace(s) == "" {
			l.blank = true
			inDiff = false
			continue
		}
		if inMsg && strings.HasPrefix(s, "  ") {
			sp.mark(l.start, l.end+1, Pasted, "the assistant's message")
			l.machine = true
			continue
		}
		inMsg = strings.ContainsAny(s, "⏺⎿")
		if inDiff && (s[0] == '+' || s[0] == '-' || s[0] == ' ' || s[0] == '\\') {
			sp.mark(l.start, l.end+1, Pasted, "diff")
			l.machine = true
			continue
		}
		inDiff = diffHeader.MatchString(s)
		if w, ok := isMachine(s); ok {
			sp.mark(l.start, l.end+1, Pasted, w)
			l.machine = true
			continue
		}
		if g := strings.IndexAny(s, "⏺⎿"); g > 0 {
			sp.mark(l.start+g, l.end+1, Pasted, "the assistant's message")
		}
		for _, r := range echo.echoed(s) {
			sp.mark(l.start+r[0], l.start+r[1], Pasted, "the assistant's words")
		}
		// What is left typed on the line must be more than a word or two.
		if typedWords(text, kind, l.start, l.end) < 3 && !allTyped(kind, l.start, l.end) {
			sp.mark(l.start, l.end+1, Pasted, "the assistant's words")
		}
		l.machine = !allTyped(kind, l.start, l.end) && typedWords(text, kind, l.start, l.end) == 0
		l.prose = !l.machine
	}
}

// paragraphs collects the runs of non-blank lines.
func (sp *splitter) paragraphs() {
	for i := 0; i < len(sp.lines); {
		if sp.lines[i].blank {
			i++
			continue
		}
		j := i
		for j < len(sp.lines) && !sp.lines[j].blank {
			j++
		}
		sp.paras = append(sp.paras, [2]int{i, j})
		i = j
	}
}

// Other people's messages pasted in: a chat message's sender-and-time
// line (Slack, Teams, Discord copy it so), an e-mail's header lines in
// four languages, a reply's "… wrote:" line.
var (
	chatHeader = lazy(`^\s*\p{Lu}[\pL'’.-]*(?:\s\p{Lu}[\pL'’.-]*){0,3}(?:,|\s+[—–-])?\s+\[?(?:(?:today|yesterday) at |(?:heute|gestern) um |(?:aujourd'hui|hier) à |(?:hoy|ayer) a las )?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?\]?\s*$`)
	mailHeader = lazy(`^\s*(?:From|To|Cc|Sent|Date|Subject|Von|An|Gesendet|Datum|Betreff|De|À|Envoyé|Objet|Para|Enviado|Fecha|Asunto)\s?:\s*\S`)
	wroteLine  = lazy(`(?i)^\s*(?:on .+ wrote|am .+ schrieb .+|le .+ a écrit|el .+ escribió)\s?:\s*$`)
)

// messages marks other people's messages: from a chat header, or an
// e-mail's first header line (two or more header lines make an e-mail),
// or a "… wrote:" line, to the end of its paragraph; an e-mail whose
// header stands alone takes the next paragraph (its body) too, unless
// that is the turn's last. The last line of the turn stays typed when the
// message ran into it (the question typed under a paste).
func (sp *splitter) messages() {
	for pi, p := range sp.paras {
		for i := p[0]; i < p[1]; i++ {
			s := sp.text[sp.lines[i].start:sp.lines[i].end]
			from, end := -1, p[1]
			switch {
			case chatHeader.MatchString(s) && i+1 < p[1]:
				from = i
			case wroteLine.MatchString(s):
				from = i
			case mailHeader.MatchString(s) && i+1 < p[1] && mailHeader.MatchString(sp.text[sp.lines[i+1].start:sp.lines[i+1].end]):
				from = i
				if body := pi + 1; body < len(sp.paras)-1 && headersOnly(sp, p[0], p[1]) {
					sp.markLines(sp.paras[body][0], sp.paras[body][1], Pasted, "a message from someone else")
				}
			}
			if from < 0 {
				continue
			}
			if pi == len(sp.paras)-1 && end-from >= 3 && sp.lines[end-1].prose {
				end-- // the sentence typed under the message
			}
			sp.markLines(from, end, Pasted, "a message from someone else")
			for j := from; j < end; j++ {
				sp.lines[j].machine, sp.lines[j].prose = true, false
			}
			break
		}
	}
}

// headersOnly reports whether lines [a, b) are all e-mail header lines.
func headersOnly(sp *splitter, a, b int) bool {
	for i := a; i < b; i++ {
		if !mailHeader.MatchString(sp.text[sp.lines[i].start:sp.lines[i].end]) {
			return false
		}
	}
	return true
}

// indented marks text rendered by a terminal: people do not indent what
// they type line by line, terminals indent what they print.
func (sp *splitter) indented() {
	in, all := 0, 0
	for _, l := range sp.lines {
		if l.blank {
			continue
		}
		all++
		if strings.HasPrefix(sp.text[l.start:l.end], "  ") {
			in++
		}
	}
	if in < 4 || in*3 < all*2 {
		return
	}
	for i, l := range sp.lines {
		if !l.blank && strings.HasPrefix(sp.text[l.start:l.end], "  ") {
			sp.markLines(i, i+1, Pasted, "indented like terminal output")
			sp.lines[i].machine, sp.lines[i].prose = true, false
		}
	}
}

// pastedParagraphs: a paragraph of three or more lines, mostly pasted, is
// pasted whole, except a prose line at the very start or end of the
// turn's text.
func (sp *splitter) pastedParagraphs() {
	first, last := 0, len(sp.paras)-1
	for pi, p := range sp.paras {
		machine := 0
		for i := p[0]; i < p[1]; i++ {
			if sp.lines[i].machine {
				machine++
			}
		}
		total := p[1] - p[0]
		if total < 3 || machine*2 < total {
			continue
		}
		for i := p[0]; i < p[1]; i++ {
			keep := sp.lines[i].prose && (i == p[0] && pi == first || i == p[1]-1 && pi == last)
			if !keep {
				sp.markLines(i, i+1, Pasted, "inside pasted output")
			}
		}
	}
}

// documents: two or more Markdown headings make the text between the
// first heading and the end a pasted document; a short closing prose
// paragraph stays typed.
func (sp *splitter) documents() {
	headings := 0
	firstHeading := -1
	for pi, p := range sp.paras {
		for i := p[0]; i < p[1]; i++ {
			if headingLine.MatchString(sp.text[sp.lines[i].start:sp.lines[i].end]) {
				headings++
				if firstHeading < 0 {
					firstHeading = pi
				}
			}
		}
	}
	if headings < 2 {
		return
	}
	end := len(sp.paras)
	lp := sp.paras[len(sp.paras)-1]
	if lp[1]-lp[0] <= 2 && len(sp.paras)-1 > firstHeading && proseLines(sp.text, sp.lines[lp[0]:lp[1]]) {
		end--
	}
	for pi := firstHeading; pi < end; pi++ {
		sp.markLines(sp.paras[pi][0], sp.paras[pi][1], Pasted, "pasted document")
	}
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
