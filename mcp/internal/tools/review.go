package tools

import (
	"context"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/mcptool"
	"github.com/synaxi/synaxi/learning/store"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// The review tools' names: the /synaxi:review skill lists the candidates
// synaxi learned and records what the user decides about each.
const (
	ReviewCandidates = "review_candidates"
	ReviewDecide     = "review_decide"
)

func reviewCandidatesTool() mcp.Tool {
	opts := append(readOnly("Learned rules awaiting review"),
		mcp.WithDescription(`The rules synaxi learned from this user's past sessions that wait for the user's decision (candidates): none is applied until the user accepts it. Each comes with its id, where it would apply, a warning if it is flagged dangerous, and the user's own words with the assistant message they answered. Use it for /synaxi:review: show the candidates to the user one at a time and ask what to do with each.`),
		mcp.WithBoolean("all", mcp.Description("List every project's candidates, not only this project's and the global ones.")),
	)
	return mcp.NewTool(ReviewCandidates, opts...)
}

func reviewDecideTool() mcp.Tool {
	return mcp.NewTool(ReviewDecide,
		mcp.WithTitleAnnotation("Record the user's decision about a learned rule"),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithDescription(`Records what the user decided about one candidate from review_candidates, as a new profile version (synaxi profile rollback undoes it), and publishes the result. Call it only with the user's explicit answer, never on your own judgement. accept applies the rule from the next session on (with text: in the user's words; with global: in every project); reject deletes it for good. A candidate flagged dangerous cannot be accepted here: tell the user to run synaxi profile review in a terminal.`),
		mcp.WithString("id", mcp.Required(), mcp.Description("The candidate's id, as review_candidates shows it in brackets.")),
		mcp.WithString("verdict", mcp.Required(), mcp.Enum("accept", "reject"), mcp.Description("accept or reject (to skip, do not call).")),
		mcp.WithString("text", mcp.Description("With accept: the rule in the user's own words, if they changed it.")),
		mcp.WithBoolean("global", mcp.Description("With accept: apply it in every project, not only the one it was learned in.")),
	)
}

func reviewCandidatesHandler(root walk.Root) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := mcptool.Candidates(xdg.Resolve(), store.ProjectRoot(root.Dir()), req.GetBool("all", false))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(bound(text)), nil
	}
}

func reviewDecideHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("id")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	verdict, err := req.RequireString("verdict")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	text, err := mcptool.Decide(ctx, xdg.Resolve(), os.Getenv, id, verdict, req.GetString("text", ""), req.GetBool("global", false))
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}
