package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/recall"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Recall is the name of the tool that returns output the projection
// folded out of the conversation.
const Recall = "recall"

// AlwaysLoadMeta is the _meta key by which Claude Code keeps a tool's
// schema in every request instead of deferring it behind ToolSearch.
const AlwaysLoadMeta = "anthropic/alwaysLoad"

// recallTool is the one synaxi tool listed with AlwaysLoadMeta: a fold
// note names it, and with its schema already in the request recovering
// folded output is one call, not ToolSearch and then recall. The map,
// profile and review tools stay deferred so the cached prefix stays small.
func recallTool() mcp.Tool {
	opts := append(readOnly("Recall folded output"),
		mcp.WithDescription(`Returns the full output of an earlier command or search that synaxi folded out of this conversation to keep it small. A fold note lists such calls with "[recall r…]"; pass that reference. Cheaper and safer than running the command again (its result may have changed, or running it may have side effects).`),
		mcp.WithString("ref", mcp.Required(), mcp.Description(`The reference the fold note names: "r" and 16 hex digits.`)),
	)
	tool := mcp.NewTool(Recall, opts...)
	tool.Meta = mcp.NewMetaFromMap(map[string]any{AlwaysLoadMeta: true})
	return tool
}

// recallHandler answers the recall tool from the proxy's store on this
// machine (internal/recall).
func recallHandler(d xdg.Dirs) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := recall.Get(d, req.GetString("ref", ""))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(bound(string(text))), nil
	}
}
