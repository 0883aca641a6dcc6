package publish

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/synaxi/synaxi/learning/store"
)

// DefaultMaxChars is the default bound of the SessionStart guidance
// (guidance.max_chars). Claude Code moves hook output longer than 10,000
// characters into a file the model only sees a preview of.
const DefaultMaxChars = 6000

// MaxQuote bounds one quoted piece of evidence in rendered text; a longer
// quote is cut to a prefix that still occurs verbatim in the transcript.
const MaxQuote = 240

// Heading is the first line of every rendered guidance text.
const Heading = "# What synaxi learned from your past sessions"

// Render writes g as Markdown within maxChars characters (runes): the
// heading, the archetype, the guards heaviest first, then the known
// weaknesses, each with the quote and the message it came from. Items that
// do not fit are left out whole (never cut in the middle) and counted in a
// closing line. An empty Guidance renders as "".
func Render(g *Guidance, maxChars int) string {
	if g.Empty() {
		return ""
	}
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	var b strings.Builder
	b.WriteString(Heading + "\n")
	fmt.Fprintf(&b, "These rules come from the user's own corrections and preferences in earlier sessions; follow them unless the user now says otherwise. Each cites what the user said (session, message) and its profile entries [in brackets] (profile v%d, %s renderer; `synaxi profile show` lists them, `synaxi profile forget ID` drops one).\n", g.ProfileVersion, g.Renderer)
	size := utf8.RuneCountInString(b.String())
	left := 0
	// Reserve room for the closing line about what was left out.
	const closing = 120
	add := func(head string, items []Item, line func(int, Item) string) {
		wrote := false
		for i, it := range items {
			s := line(i, it)
			h := ""
			if !wrote {
				h = "\n" + head + "\n"
			}
			n := utf8.RuneCountInString(h + s)
			if size+n+closing > maxChars {
				left += len(items) - i
				return
			}
			b.WriteString(h + s)
			size += n
			wrote = true
		}
	}
	add("## User archetype", g.Archetype, func(_ int, it Item) string {
		return "- " + it.Text + " " + cites(it) + "\n" + why(it, "  ")
	})
	add("## Guards", g.Guards, func(i int, it Item) string {
		return fmt.Sprintf("%d. %s %s\n", i+1, it.Text, cites(it)) + why(it, "   ")
	})
	add("## Known assistant weaknesses", g.Weaknesses, func(_ int, it Item) string {
		return "- " + it.Text + " " + cites(it) + "\n" + why(it, "  ")
	})
	if left > 0 {
		fmt.Fprintf(&b, "\n(%d more items did not fit in %d characters; `synaxi profile show` lists everything.)\n", left, maxChars)
	}
	return b.String()
}

func cites(it Item) string { return "[" + strings.Join(it.Cites, ", ") + "]" }

// why is the newest piece of evidence of an item, quoted.
func why(it Item, indent string) string {
	if len(it.Evidence) == 0 {
		return ""
	}
	ev := it.Evidence[0]
	return fmt.Sprintf("%swhy: the user said %q (session %s, message %s)\n", indent, clipQuote(ev.Quote), ev.Session, short(ev.UUID))
}

// clipQuote cuts a long quote to a prefix of at most MaxQuote runes.
func clipQuote(q string) string {
	if utf8.RuneCountInString(q) <= MaxQuote {
		return q
	}
	r := []rune(q)
	return string(r[:MaxQuote]) + "…"
}

// short is the first 8 characters of an id, enough to find it.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// citedIDs lists the entry ids g cites, in the order first cited.
func citedIDs(g *Guidance) []string {
	var ids []string
	seen := map[string]bool{}
	for _, list := range [][]Item{g.Archetype, g.Guards, g.Weaknesses} {
		for _, it := range list {
			for _, id := range it.Cites {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// evidenceFor collects the evidence of the cited entries, newest first.
func evidenceFor(cited []string, byID map[string]store.Entry) []store.Evidence {
	var out []store.Evidence
	for _, id := range cited {
		out = append(out, byID[id].Evidence...)
	}
	return newestFirst(out)
}
