package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/mcp/internal/tools"
)

// syncBuffer collects the server's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"store/store.go":  "// Package store keeps values.\npackage store\n\n// Store holds values.\ntype Store struct{ m map[string]string }\n\n// New makes a Store.\nfunc New() *Store { return &Store{m: map[string]string{}} }\n\n// Get returns the value for k.\nfunc (s *Store) Get(k string) string {\n\tif s == nil {\n\t\treturn \"\"\n\t}\n\treturn s.m[k]\n}\n",
		"cmd/app/main.go": "package main\n\nimport \"example.com/x/store\"\n\nfunc main() { println(store.New().Get(\"a\")) }\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// startServer runs the command's run() over pipes and returns an
// initialised client.
func startServer(t *testing.T, env map[string]string) (*client.Client, *syncBuffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, nil, inR, outW, stderr, func(k string) string { return env[k] })
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, nil))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() {
		c.Close()
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, 0, code, "stderr: %s", stderr.String())
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	assert.Equal(t, tools.ServerName, res.ServerInfo.Name)
	assert.NotEmpty(t, res.Instructions)
	assert.Less(t, len(res.Instructions), 2048)
	for _, tool := range []string{"repo_map", "find_symbol", "file_outline", "profile"} {
		assert.Contains(t, res.Instructions, tool, "the instructions say when to use every tool")
	}
	return c, stderr
}

// callTool calls a tool and joins its text content.
func callTool(c *client.Client, name string, args map[string]any) (string, bool, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		return "", false, err
	}
	var text strings.Builder
	for _, content := range res.Content {
		tc, ok := content.(mcp.TextContent)
		if !ok {
			return "", false, fmt.Errorf("content %T is not text", content)
		}
		text.WriteString(tc.Text)
	}
	return text.String(), res.IsError, nil
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	text, isErr, err := callTool(c, name, args)
	require.NoError(t, err, "a tool failure is a result, never a protocol error")
	return text, isErr
}

func TestServer(t *testing.T) {
	dir := writeProject(t)
	c, stderr := startServer(t, map[string]string{"CLAUDE_PROJECT_DIR": dir, "XDG_CACHE_HOME": t.TempDir()})

	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		full := "mcp__plugin_synaxi_synaxi__" + tool.Name
		assert.LessOrEqual(t, len(full), 64, full)
		assert.Less(t, len(tool.Description), 2048, tool.Name)
		a := tool.Annotations
		require.NotNil(t, a.ReadOnlyHint, tool.Name)
		// review_decide writes the user's decision (a profile version);
		// every other tool only reads.
		assert.Equal(t, tool.Name != tools.ReviewDecide, *a.ReadOnlyHint, tool.Name)
		require.NotNil(t, a.DestructiveHint, tool.Name)
		assert.False(t, *a.DestructiveHint, tool.Name)
		require.NotNil(t, a.OpenWorldHint, tool.Name)
		assert.False(t, *a.OpenWorldHint, tool.Name)
	}
	assert.ElementsMatch(t, []string{tools.RepoMap, tools.FileOutline, tools.FindSymbol, tools.Profile, tools.ReviewCandidates, tools.ReviewDecide, tools.Recall}, names)

	text, isErr := call(t, c, tools.RepoMap, map[string]any{"budget": 500})
	assert.False(t, isErr, text)
	assert.Contains(t, text, "store/store.go\n")
	assert.Contains(t, text, "L11: func (s *Store) Get(k string) string")

	text, isErr = call(t, c, tools.RepoMap, map[string]any{"focus": []string{"cmd/app/main.go", "nope.go"}, "budget": 10})
	assert.False(t, isErr, text)
	assert.Contains(t, text, "budget 10 is outside 256..16000; used 256")
	assert.Contains(t, text, `focus "nope.go" is neither an indexed source file nor a defined name; ignored`)

	text, isErr = call(t, c, tools.RepoMap, map[string]any{"focus": []string{"Store.Get"}, "budget": 256})
	assert.False(t, isErr, text)
	assert.NotContains(t, text, "# note:", "an identifier is a valid focus")
	assert.Contains(t, text, "store/store.go\n")

	text, isErr = call(t, c, tools.FileOutline, map[string]any{"path": "store/store.go"})
	assert.False(t, isErr, text)
	assert.Equal(t, "# outline of store/store.go (go, package store, 16 lines, 4 definitions)\n"+
		"L5 struct type Store struct  // Store holds values.\n"+
		"  L5 field m map[string]string\n"+
		"  L11-16 method func (s *Store) Get(k string) string  // Get returns the value for k.\n"+
		"L8 func New() *Store  // New makes a Store.\n", text)

	text, isErr = call(t, c, tools.FindSymbol, map[string]any{"name": "Store.Get", "references": true})
	assert.False(t, isErr, text)
	assert.Contains(t, text, "method Store.Get — store/store.go:11-16\n")
	assert.Contains(t, text, "  // Get returns the value for k.\n")
	assert.Contains(t, text, "  L15: \treturn s.m[k]\n")
	assert.Contains(t, text, "cmd/app/main.go:5: func main() { println(store.New().Get(\"a\")) }")

	outside := filepath.Join(t.TempDir(), "x.go")
	require.NoError(t, os.WriteFile(outside, []byte("package x\n"), 0o644))
	for _, p := range []string{"../x.go", outside, "/etc/passwd"} {
		text, isErr = call(t, c, tools.FileOutline, map[string]any{"path": p})
		assert.True(t, isErr, p)
		assert.Contains(t, text, "outside the project root")
	}
	text, isErr = call(t, c, tools.RepoMap, map[string]any{"focus": []string{"../../etc/passwd"}})
	assert.True(t, isErr)
	assert.Contains(t, text, "outside the project root")

	text, isErr = call(t, c, tools.FileOutline, map[string]any{})
	assert.True(t, isErr, text)
	text, isErr = call(t, c, tools.FindSymbol, map[string]any{"name": "a b"})
	assert.True(t, isErr, text)
	assert.Contains(t, text, "not an identifier")

	assert.NotContains(t, stderr.String(), "panic")
}

func TestServerRootFromWorkingDir(t *testing.T) {
	dir := writeProject(t)
	t.Chdir(dir)
	c, _ := startServer(t, map[string]string{"XDG_CACHE_HOME": t.TempDir()})
	text, isErr := call(t, c, tools.FindSymbol, map[string]any{"name": "New"})
	assert.False(t, isErr)
	assert.Contains(t, text, "func New — store/store.go:8")
}

func TestVersionAndBadArgs(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-version"}, nil, &out, &errb, os.Getenv))
	assert.Contains(t, out.String(), "synaxi-mcp ")
	assert.Equal(t, 2, run(context.Background(), []string{"--bogus"}, nil, &out, &errb, os.Getenv))
	env := map[string]string{"CLAUDE_PROJECT_DIR": filepath.Join(t.TempDir(), "missing")}
	assert.Equal(t, 1, run(context.Background(), nil, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] }))
}

func TestServerConcurrentCalls(t *testing.T) {
	dir := writeProject(t)
	c, _ := startServer(t, map[string]string{"CLAUDE_PROJECT_DIR": dir, "XDG_CACHE_HOME": t.TempDir()})
	want, isErr := call(t, c, tools.RepoMap, map[string]any{"budget": 400})
	require.False(t, isErr)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0:
				text, isErr, err := callTool(c, tools.RepoMap, map[string]any{"budget": 400})
				assert.NoError(t, err)
				assert.False(t, isErr)
				assert.Equal(t, want, text, "the same map every time")
			case 1:
				text, isErr, err := callTool(c, tools.FindSymbol, map[string]any{"name": "New", "references": true})
				assert.NoError(t, err)
				assert.False(t, isErr)
				assert.Contains(t, text, "func New — store/store.go:8")
			default:
				text, isErr, err := callTool(c, tools.FileOutline, map[string]any{"path": "cmd/app/main.go"})
				assert.NoError(t, err)
				assert.False(t, isErr)
				assert.Contains(t, text, "L5 func main()")
			}
		}()
	}
	wg.Wait()
}
