package replay

// loss follows, on one side of a replay, what the referee finds and what
// recovering it costs (see the package doc, "What the user loses").
type loss struct {
	needed Needed
	// all prices every recovery, edits the blind edits' re-reads alone.
	all, edits recovery
	// userHidden holds the user-typed content a request of the side did
	// not show (each once), first the first of them.
	userHidden map[string]bool
	first      string
}

func (l *loss) setTTL(ttl string) { l.all.ttl1h, l.edits.ttl1h = ttl == "1h", ttl == "1h" }

// request accounts for one more request of the side (see recovery).
func (l *loss) request(rebuilt bool) {
	l.all.request(rebuilt)
	l.edits.request(rebuilt)
}

// take counts needs found after a request of before tokens and prices
// their recovery.
func (l *loss) take(ns []need, before int64) {
	l.needed.count(ns)
	for _, n := range ns {
		every := n.kind == "edit"
		l.all.add(n.key, n.size, before, every)
		if every {
			l.edits.add(n.key, n.size, before, every)
		}
	}
}

// userTypedHidden records the user-typed blocks of messages the side's
// request v did not show.
func (l *loss) userTypedHidden(messages []msg, summaries map[string]bool, v *view) {
	for _, m := range messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if !userTyped(b, summaries) {
				continue
			}
			c := userContent(b)
			if c == "" || l.userHidden[c] || v.shows(c) {
				continue
			}
			if l.userHidden == nil {
				l.userHidden = map[string]bool{}
			}
			l.userHidden[c] = true
			if l.first == "" {
				l.first = clip(c, 80)
			}
		}
	}
}

// clip shortens s to at most n bytes for a message, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
