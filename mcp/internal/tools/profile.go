package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/learning/mcptool"
	"github.com/synaxi/synaxi/learning/store"
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
		text, err := mcptool.Profile(xdg.Resolve(), store.ProjectRoot(root.Dir()), req.GetString("query", ""), MaxResultChars/2)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(bound(text)), nil
	}
}
