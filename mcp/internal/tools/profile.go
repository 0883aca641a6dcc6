package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/guidance"
	"github.com/synaxi/synaxi/internal/profile"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// Profile is the name of the tool that shows the learned guidance.
const Profile = "profile"

func profileTool() mcp.Tool {
	opts := append(readOnly("Learned guidance"),
		mcp.WithDescription(`The guidance synaxi learned from this user's past sessions for this project: guards (ALWAYS / NEVER / BEFORE / WHEN rules), a short user archetype and the assistant's known weaknesses, and the profile entries behind them with their evidence (the user's own words, with session and message). Give a query to see only what concerns a topic (for example "tests" or "commit").`),
		mcp.WithString("query", mcp.Description("Words that every shown entry must contain (in its text, dimension, id or quotes), case-insensitive; empty shows everything.")),
	)
	return mcp.NewTool(Profile, opts...)
}

// profileHandler answers the profile tool for the project at root, reading
// synaxi's data directory at call time.
func profileHandler(root walk.Root) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := profileText(xdg.Resolve(), guidance.ProjectRoot(root.Dir()), req.GetString("query", ""))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(bound(text)), nil
	}
}

// profileText renders the project's current guidance and the entries it
// cites, keeping only what matches every word of query.
func profileText(d xdg.Dirs, project, query string) (string, error) {
	p, err := profile.Open(guidance.ProfileDir(d)).Load()
	if err != nil {
		return "", fmt.Errorf("cannot read the learned profile: %v (run `synaxi profile history` and `synaxi profile rollback` to repair it)", err)
	}
	g, err := guidance.Current(d, project)
	if err != nil {
		return "", fmt.Errorf("cannot read the published guidance: %v", err)
	}
	if g == nil {
		return fmt.Sprintf("synaxi has learned nothing for %s yet (profile v%d): guidance comes from corrections and preferences in finished sessions.\n", project, p.Version), nil
	}
	words := strings.Fields(strings.ToLower(query))
	byID := map[string]profile.Entry{}
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
	keep := func(items []guidance.Item) []guidance.Item {
		var out []guidance.Item
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
	b.WriteString(guidance.Render(&shown, MaxResultChars/2))
	b.WriteString("\n## Entries behind it\n")
	var seen []string
	for _, list := range [][]guidance.Item{shown.Guards, shown.Archetype, shown.Weaknesses} {
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
	return b.String(), nil
}
