package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capture is one request recorded from the real client (see
// ../testdata/captured/README.md).
type capture struct {
	Name     string
	Method   string              `json:"method"`
	Path     string              `json:"path"`
	Query    string              `json:"query"`
	Headers  map[string][]string `json:"headers"`
	BodyFile string              `json:"body_file"`
	Body     []byte
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	dir := filepath.Join("..", "testdata", "captured")
	metas, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	var out []capture
	for _, m := range metas {
		if strings.HasSuffix(m, ".body.json") {
			continue
		}
		raw, err := os.ReadFile(m)
		require.NoError(t, err)
		var c capture
		require.NoError(t, json.Unmarshal(raw, &c), m)
		c.Name = strings.TrimSuffix(filepath.Base(m), ".json")
		if c.BodyFile != "" {
			c.Body, err = os.ReadFile(filepath.Join(dir, c.BodyFile))
			require.NoError(t, err)
		}
		out = append(out, c)
	}
	require.GreaterOrEqual(t, len(out), 8, "captures present")
	return out
}

func loadCapture(t testing.TB, name string) capture {
	for _, c := range loadCaptures(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no capture %s", name)
	return capture{}
}

// replay sends a capture to the server with its own method, path, query and
// headers.
func replay(t *testing.T, s *Server, c capture) (*http.Response, []byte) {
	t.Helper()
	url := s.URL() + c.Path
	if c.Query != "" {
		url += "?" + c.Query
	}
	req, err := http.NewRequest(c.Method, url, bytes.NewReader(c.Body))
	require.NoError(t, err)
	for k, vs := range c.Headers {
		if k == "Content-Length" || k == "Accept-Encoding" {
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}

// TestCapturedRequestsAccepted replays every request the real client sent
// and expects the fake to accept it, and count_tokens on the same body to
// agree with the usage reported.
func TestCapturedRequestsAccepted(t *testing.T) {
	s := New(Options{RequireAuth: true})
	defer s.Close()
	for _, c := range loadCaptures(t) {
		t.Run(c.Name, func(t *testing.T) {
			resp, raw := replay(t, s, c)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
			reqs := s.Requests()
			last := reqs[len(reqs)-1]
			assert.Empty(t, last.Invalid)
			if c.Path != "/v1/messages" {
				return
			}
			events, err := readSSE(bytes.NewReader(raw))
			require.NoError(t, err)
			rebuild(t, events)

			var m map[string]any
			require.NoError(t, json.Unmarshal(c.Body, &m))
			for _, k := range []string{"max_tokens", "stream", "metadata"} {
				delete(m, k)
			}
			ct := js(t, m)
			resp, raw = post(t, s, "/v1/messages/count_tokens", ct)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
			assert.Equal(t, float64(last.Usage.TotalInput()), decodeJSON(t, raw)["input_tokens"])
		})
	}
}

func TestCapturedSideRequests(t *testing.T) {
	s := New(Options{Agent: AgentFunc(func(v *View) Reply {
		t.Errorf("agent called for %q", v.FirstUserText())
		return Reply{}
	})})
	defer s.Close()
	resp, raw := replay(t, s, loadCapture(t, "interactive-title"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events, err := readSSE(bytes.NewReader(raw))
	require.NoError(t, err)
	_, blocks, _ := rebuild(t, events)
	require.Len(t, blocks, 1)
	var title map[string]string
	require.NoError(t, json.Unmarshal([]byte(blocks[0].Text), &title), "the title answer is the JSON the schema asks for")
	assert.NotEmpty(t, title["title"])
	assert.True(t, s.Requests()[0].Side)

	resp, _ = replay(t, s, loadCapture(t, "interactive-hello"))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func viewOf(t *testing.T, name string) *View {
	t.Helper()
	c := loadCapture(t, name)
	p, err := parseRequest(c.Body)
	require.NoError(t, err)
	require.NoError(t, validate(p, false, false))
	return newView(p, http.Header(c.Headers), c.Body)
}

func TestViewOfCapturedMainLoop(t *testing.T) {
	v := viewOf(t, "main-tools")
	assert.Equal(t, "claude-opus-5-5", v.Model)
	assert.False(t, v.IsSideRequest())
	assert.True(t, v.HasTool("Read"))
	assert.False(t, v.HasTool("Grep"), "2.1.332 declares no Grep tool")
	assert.Equal(t, "TOOLTEST please read hello.txt", v.FirstUserText(), "system reminders are stripped")
	assert.Contains(t, v.System, "You are a Claude agent")

	calls := v.Calls()
	require.Len(t, calls, 8)
	for _, c := range calls {
		assert.True(t, c.Answered, c.ID)
	}
	byID := map[string]Call{}
	for _, c := range calls {
		byID[c.ID] = c
	}
	assert.True(t, byID["toolu_01DDDD"].IsError, "missing file")
	assert.Contains(t, byID["toolu_01DDDD"].Result, "File does not exist")
	assert.Equal(t, "Exit code 3", byID["toolu_01EEEE"].Result)
	assert.True(t, strings.HasPrefix(byID["toolu_01BBBB"].Result, "hi\n"), byID["toolu_01BBBB"].Result)

	last, ok := v.LastToolResult()
	require.True(t, ok)
	assert.Equal(t, "toolu_01HHHH", last.ID)
	assert.Equal(t, "Read", last.Name)

	content, ok := v.FileContent("/tmp/w1/hello.txt")
	require.True(t, ok)
	assert.Equal(t, "line one\nline 2\nline three\n\tindented four\nline five\n", content, "the edit is visible")
	_, ok = v.FileContent("/tmp/w1/nope.txt")
	assert.False(t, ok)
	assert.Contains(t, v.VisibleText(), "indented four")
}

func TestViewOfCapturedWrites(t *testing.T) {
	v := viewOf(t, "main-write")
	for _, tc := range []struct {
		path, want string
		whole      bool
	}{
		{"/tmp/w1/new.txt", "gamma\n", true},
		{"/tmp/w1/empty.txt", "", true},
		{"/tmp/w1/crlf.txt", "a\nb\n", true},
		{"/tmp/w1/long.txt", "row 8\nrow 9\nrow 10\nrow 11\nrow 12\n", false},
	} {
		got, whole := v.FileContent(tc.path)
		assert.Equal(t, tc.want, got, tc.path)
		assert.Equal(t, tc.whole, whole, tc.path)
	}
	assert.Equal(t, map[int]string{8: "row 8", 9: "row 9", 10: "row 10", 11: "row 11", 12: "row 12", 13: ""},
		v.FileLines("/tmp/w1/long.txt"))
	_, ok := v.FileContent("/tmp/w1")
	assert.False(t, ok, "reading a directory shows nothing")
}

func TestViewOfCapturedWorker(t *testing.T) {
	v := viewOf(t, "worker-thinking")
	assert.Contains(t, v.System, "SYNAXI-PROJECTION-WORKER")
	assert.Equal(t, []string{"Read", "Bash", "Edit", "DeferredToolPlaceholder", "Write"}, v.ToolNames)
	require.Len(t, v.Messages, 4)
	assert.Equal(t, "system", v.Messages[1].Role)
	assert.Equal(t, "thinking", v.Messages[2].Blocks[0].Type)
	assert.Equal(t, "I should list files.", v.Messages[2].Blocks[0].Thinking)
	assert.Equal(t, 1, v.Turns())
	assert.Regexp(t, `^[0-9a-f-]{36}$`, v.Header.Get("X-Claude-Code-Session-Id"))
}
