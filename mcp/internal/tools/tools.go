// Package tools defines synaxi's MCP tools over mapgen: repo_map,
// file_outline and find_symbol, plus profile (the guidance learned from the
// user's past sessions, read from synaxi's data directory) and the review
// pair behind /synaxi:review: review_candidates lists the learned rules
// awaiting the user's decision, review_decide records it. Every tool but
// review_decide is read-only (it writes one profile version, as the user
// decided, and publishes); the map tools are confined to the project root;
// a bad argument or a path outside the root comes back as a tool result
// with isError set, never as a protocol error. recall returns, by its
// reference, a command's or search's output the projection folded out of
// the conversation, from the proxy's store on this machine
// (internal/recall); it is the one tool listed with AlwaysLoadMeta, so
// Claude Code keeps its schema loaded while it defers the others behind
// ToolSearch.
package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/repomap"
	"github.com/synaxi/synaxi/mapgen/symbols"
	"github.com/synaxi/synaxi/mapgen/walk"
)

// ServerName is the server's name in .mcp.json; the model sees the tools as
// mcp__plugin_synaxi_synaxi__<tool>.
const ServerName = "synaxi"

// Tool names.
const (
	RepoMap     = "repo_map"
	FileOutline = "file_outline"
	FindSymbol  = "find_symbol"
)

// Budget bounds for repo_map, in estimated tokens.
const (
	MinBudget = 256
	MaxBudget = 16000
)

// MaxResultChars bounds a tool result: about 10k tokens, where Claude Code
// starts warning about large MCP output (it cuts at 25k). Longer results are
// truncated at a line boundary with a note saying how to narrow the request.
const MaxResultChars = 40000

// Options configure the server.
type Options struct {
	Root    walk.Root
	Store   cache.Store // the persisted index, shared with synaxi-mapgen
	Version string
}

const instructions = `synaxi maps this repository so you can find code before reading it.
Start with repo_map (the most referenced definitions, ranked, within a token budget; pass the files or identifiers you are working on as focus to rank what they use higher).
Then use find_symbol (definitions with signature, doc and key lines; set references to list uses) and file_outline (every definition of one file with line ranges) to pick narrow line ranges, and only then Read those ranges.
Paths are relative to the project root; paths outside it are refused.
Call profile (with a query naming the task's topic, such as "commit" or "tests") before planning work: it returns the rules this user taught in past sessions (ALWAYS/NEVER/BEFORE/WHEN guards) with the quotes behind them; follow them.
When a synaxi fold note lists an earlier command or search with [recall r…], call recall with that reference to get its full output back instead of running it again.
review_candidates and review_decide serve /synaxi:review: the rules synaxi learned wait there until the user accepts them; call review_decide only with the user's explicit decision.`

// New returns an MCP server with its tools registered.
func New(opts Options) *server.MCPServer {
	s := server.NewMCPServer(ServerName, opts.Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(instructions),
	)
	h := &handlers{
		root:    opts.Root,
		indexer: &repomap.Indexer{Root: opts.Root, Store: opts.Store},
	}
	s.AddTool(repoMapTool(), h.repoMap)
	s.AddTool(fileOutlineTool(), h.fileOutline)
	s.AddTool(findSymbolTool(), h.findSymbol)
	s.AddTool(profileTool(), profileHandler(opts.Root))
	s.AddTool(reviewCandidatesTool(), reviewCandidatesHandler(opts.Root))
	s.AddTool(reviewDecideTool(), reviewDecideHandler)
	s.AddTool(recallTool(), recallHandler(xdg.Resolve()))
	return s
}

// readOnly marks a tool as reading local files only.
func readOnly(title string) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithTitleAnnotation(title),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
}

func languages() string { return strings.Join(symbols.Languages(), ", ") }

func repoMapTool() mcp.Tool {
	opts := append(readOnly("Repository map"),
		mcp.WithDescription(fmt.Sprintf(`Ranked map of this repository: the most important definitions (signatures with line numbers), grouped by file, chosen by a PageRank over which files reference which definitions, cut to a token budget. Call it first when exploring unfamiliar code, before reading files. Pass the files (or identifiers) the task is about as focus to rank what they use, and what defines them, higher. Output is deterministic. Languages: %s; .gitignore, vendored, generated and binary files are left out.`, languages())),
		mcp.WithInteger("budget", mcp.Description(fmt.Sprintf("Approximate size of the map in tokens (default %d, %d to %d).", repomap.DefaultBudget, MinBudget, MaxBudget)),
			mcp.Min(MinBudget), mcp.Max(MaxBudget)),
		mcp.WithArray("focus", mcp.Description("Files (relative to the project root) or identifiers (Name or Type.Name) the task is about; the ranking is personalised towards them."),
			mcp.WithStringItems()),
	)
	return mcp.NewTool(RepoMap, opts...)
}

func fileOutlineTool() mcp.Tool {
	opts := append(readOnly("File outline"),
		mcp.WithDescription(fmt.Sprintf(`Outline of one source file: every definition (functions, methods, types, fields, constants, variables, classes) with its kind, signature, line range and the first line of its doc comment, nested (methods under their type, fields under their struct or class). Use it to pick the exact line range to Read instead of reading the whole file. Languages: %s.`, languages())),
		mcp.WithString("path", mcp.Required(), mcp.Description("File path relative to the project root (an absolute path inside the root also works).")),
	)
	return mcp.NewTool(FileOutline, opts...)
}

func findSymbolTool() mcp.Tool {
	opts := append(readOnly("Find symbol"),
		mcp.WithDescription(fmt.Sprintf(`Find where a name is defined in this repository: each definition site with kind, file:line range, signature, doc comment and key lines (the whole body when short; otherwise the control flow, returns and errors). Give a bare name (Resolve) or Type.method (Dirs.StatePath). Set references to true to also list the lines that use the name. Languages: %s.`, languages())),
		mcp.WithString("name", mcp.Required(), mcp.Description("Identifier to look up: a bare name, or Type.method / Class.method.")),
		mcp.WithBoolean("references", mcp.Description("Also list lines that use the name (default false)."), mcp.DefaultBool(false)),
	)
	return mcp.NewTool(FindSymbol, opts...)
}

type handlers struct {
	root    walk.Root
	indexer *repomap.Indexer
}

func (h *handlers) repoMap(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	budget := req.GetInt("budget", repomap.DefaultBudget)
	var notes []string
	if clamped := min(max(budget, MinBudget), MaxBudget); clamped != budget {
		notes = append(notes, fmt.Sprintf("budget %d is outside %d..%d; used %d", budget, MinBudget, MaxBudget, clamped))
		budget = clamped
	}
	focus := req.GetStringSlice("focus", nil)
	for _, f := range focus {
		if _, _, err := h.root.Resolve(f); errors.Is(err, walk.ErrOutsideRoot) {
			return mcp.NewToolResultError("focus " + err.Error()), nil
		}
	}
	ix, err := h.indexer.Build(ctx)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("cannot index %s: %v", h.root.Dir(), err)), nil
	}
	res := ix.Map(repomap.MapOptions{Budget: budget, Focus: focus})
	for _, f := range res.UnknownFocus {
		notes = append(notes, fmt.Sprintf("focus %q is neither an indexed source file nor a defined name; ignored", f))
	}
	text := res.Text
	if len(notes) > 0 {
		text += "\n# note: " + strings.Join(notes, "\n# note: ") + "\n"
	}
	return mcp.NewToolResultText(bound(text)), nil
}

func (h *handlers) fileOutline(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, err := req.RequireString("path")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	rel, f, err := repomap.ParseFile(h.root, p)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(bound(repomap.Outline(rel, f))), nil
}

func (h *handlers) findSymbol(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, err := req.RequireString("name")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, " \t\n/") {
		return mcp.NewToolResultError(fmt.Sprintf("name %q is not an identifier: give a bare name or Type.method", name)), nil
	}
	ix, err := h.indexer.Build(ctx)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("cannot index %s: %v", h.root.Dir(), err)), nil
	}
	return mcp.NewToolResultText(bound(ix.Find(name, req.GetBool("references", false)))), nil
}

// bound truncates text to MaxResultChars at a line boundary, with a note.
func bound(text string) string {
	if len(text) <= MaxResultChars {
		return text
	}
	cut := strings.LastIndexByte(text[:MaxResultChars], '\n') + 1
	if cut == 0 {
		cut = MaxResultChars
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	rest := strings.Count(text[cut:], "\n")
	return text[:cut] + fmt.Sprintf("… truncated: %d more lines (%d bytes) not shown; narrow the request (a smaller budget, a more specific name, references off).\n", rest, len(text)-cut)
}
