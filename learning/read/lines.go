package read

import (
	"strings"
	"unicode"
)

// Machine-made line shapes: a line matching one is output, a trace, a
// diff, code or a table, not a sentence typed to the assistant.
var machineLine = lazy(`^(?:` +
	`\s+at\s+\S.*[(:]|\s*at\s+\S+\s+\(\S+:\d+` + // JS/Java stack frames
	`|\s*\S+ @ \S+:\d+` + // browser console frames: fn @ file.js:12
	`|\s*\S+\.(?:js|mjs|cjs|ts|tsx|jsx|py|go|rs|java|rb|php|c|cc|cpp|h|cs|kt|swift):\d+` + // file:line
	`|\s*File ".+", line \d+` + // Python traceback
	`|Traceback \(most recent call last\)|goroutine \d+ \[|panic: |\s*#\d+\s+0x[0-9a-f]+` +
	`|\s*[\w.]*(?:Error|Exception|Warning)(?: \[\w+\])?:\s` + // TypeError: …, AggregateError [ECONNREFUSED]:
	`|\s*[\w@.-]+/[\w@./-]+:?\s(?:failed|errored|exited|error)\b` + // google-github-actions/auth failed with: …
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

// ticketLine: a ticket's key and title ("JIRA-4411: …") or a user story
// ("As an admin, I want …", "Als Admin möchte ich …", "En tant que …,
// je veux …", "Como admin, quiero …"): someone else's words.
var ticketLine = lazy(`^\s*[A-Z]{2,}[A-Z0-9]*-\d{2,}\s?:\s|(?i)^\s*(?:as an? [^,]{2,40},? i (?:want|need|must|should|can)\b|als [^,]{2,40},? (?:möchte|will|muss) ich\b|en tant que [^,]{2,40}, (?:je|j') ?(?:veux|dois|souhaite|voudrais)\b|como [^,]{2,40}, (?:quiero|necesito|debo)\b)`)

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
	if ticketLine.MatchString(t) {
		return "a ticket", true
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
