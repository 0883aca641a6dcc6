// Command synaxi-mcp is synaxi's stdio MCP server: repo_map, file_outline
// and find_symbol over the project at $CLAUDE_PROJECT_DIR (or the working
// directory). JSON-RPC goes to stdout; logs go to stderr only.
//
//	synaxi-mcp            serve on stdin/stdout
//	synaxi-mcp -version   print the version
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/server"

	"github.com/synaxi/synaxi/internal/buildinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/mapgen/cache"
	"github.com/synaxi/synaxi/mapgen/walk"
	"github.com/synaxi/synaxi/mcp/internal/tools"
)

var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// projectRoot is $CLAUDE_PROJECT_DIR when set, else the working directory.
func projectRoot(getenv func(string) string) (walk.Root, error) {
	dir := getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return walk.Root{}, fmt.Errorf("find project root: %w", err)
		}
		dir = wd
	}
	return walk.NewRoot(dir)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	logger := log.New(stderr, "synaxi-mcp: ", 0)
	if len(args) > 0 {
		switch args[0] {
		case "-version", "--version", "version":
			fmt.Fprintln(stdout, "synaxi-mcp", buildinfo.Version(version))
			return 0
		default:
			logger.Printf("unknown argument %q; usage: synaxi-mcp [-version]", args[0])
			return 2
		}
	}
	root, err := projectRoot(getenv)
	if err != nil {
		logger.Print(err)
		return 1
	}
	store := cache.Store{Dir: cache.Dir(xdg.FromEnv(getenv))}
	s := tools.New(tools.Options{Root: root, Store: store, Version: buildinfo.Version(version)})
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(logger)
	if err := stdio.Listen(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
		logger.Print(err)
		return 1
	}
	return 0
}
