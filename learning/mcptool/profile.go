// Package mcptool is the learning side of synaxi's MCP server: what the
// profile, review_candidates and review_decide tools answer. The server
// (mcp/internal/tools) owns the tools' schemas and transport.
//
// Invariants: profile and review_candidates only read; a profile or
// guidance that cannot be read is an error telling how to repair it;
// every entry profile shows is one the current (confirmed-only) guidance
// cites. review_decide is the one writer: it records what the user
// decided through review.Decide as an agent, which may not accept a
// candidate flagged dangerous, and publishes.
package mcptool

import (
	"fmt"
	"slices"
	"strings"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/store"
)

// Profile renders the project's current guidance (its rendered part within
// renderChars) and the entries it cites, keeping only what matches every
// word of query.
func Profile(d xdg.Dirs, project, query string, renderChars int) (string, error) {
	p, err := store.Open(store.Dir(d)).Load()
	if err != nil {
		return "", fmt.Errorf("cannot read the learned profile: %v (run `synaxi profile history` and `synaxi profile rollback` to repair it)", err)
	}
	g, err := publish.Current(d, project)
	if err != nil {
		return "", fmt.Errorf("cannot read the published guidance: %v", err)
	}
	waiting := ""
	if n := len(p.Candidates(project)); n > 0 {
		waiting = fmt.Sprintf("%d learned rule(s) wait for the user's review and are not applied yet: /synaxi:review (review_candidates) puts them to the user.\n", n)
	}
	if g == nil {
		return fmt.Sprintf("synaxi has learned nothing for %s yet that the user accepted (profile v%d): guidance comes from corrections and preferences in finished sessions, once the user accepts them.\n", project, p.Version) + waiting, nil
	}
	words := strings.Fields(strings.ToLower(query))
	byID := map[string]store.Entry{}
	for _, e := range p.ForProject(project) {
		byID[e.ID] = e
	}
	match := func(id string) bool {
		e, ok := byID[id]
		if !ok {
			return false
		}
		hay := strings.ToLower(strings.Join([]string{e.ID, e.Dimension, e.Text}, " "))
		for _, ev := range e.Evidence {
			hay += " " + strings.ToLower(ev.Quote)
		}
		for _, w := range words {
			if !strings.Contains(hay, w) {
				return false
			}
		}
		return true
	}
	keep := func(items []publish.Item) []publish.Item {
		var out []publish.Item
		for _, it := range items {
			if slices.ContainsFunc(it.Cites, match) {
				out = append(out, it)
			}
		}
		return out
	}
	shown := *g
	shown.Archetype, shown.Guards, shown.Weaknesses = keep(g.Archetype), keep(g.Guards), keep(g.Weaknesses)
	if shown.Empty() {
		return fmt.Sprintf("Nothing in the guidance for %s matches %q (profile v%d); call profile without a query to see all of it.\n", project, query, g.ProfileVersion), nil
	}
	var b strings.Builder
	b.WriteString(publish.Render(&shown, renderChars))
	b.WriteString("\n## Entries behind it\n")
	var seen []string
	for _, list := range [][]publish.Item{shown.Guards, shown.Archetype, shown.Weaknesses} {
		for _, it := range list {
			for _, id := range it.Cites {
				if slices.Contains(seen, id) || !match(id) {
					continue
				}
				seen = append(seen, id)
				e := byID[id]
				scope := e.Scope
				if e.Project != "" {
					scope += " " + e.Project
				}
				fmt.Fprintf(&b, "- [%s] %s, %s, weight %.2f, seen in %d session(s): %s\n", e.ID, e.Dimension, scope, e.Weight, e.Count, e.Text)
				for _, ev := range e.Evidence {
					fmt.Fprintf(&b, "  - %q (session %s, message %s, %s)\n", ev.Quote, ev.Session, ev.UUID, ev.Timestamp.UTC().Format("2006-01-02 15:04"))
				}
			}
		}
	}
	if waiting != "" {
		b.WriteString("\n" + waiting)
	}
	return b.String(), nil
}
