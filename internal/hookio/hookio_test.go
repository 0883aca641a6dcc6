package hookio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shapes as Claude Code sends them (platform-facts §2.3), with extra fields
// a newer version might add.
const (
	preRead = `{"session_id":"s1","transcript_path":"/h/t.jsonl","cwd":"/w","permission_mode":"bypassPermissions",
		"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/a.go","offset":10,"limit":20},
		"tool_use_id":"toolu_1","effort":{"level":"high"},"prompt_id":"p","future":{"x":[1,2]}}`
	preBashAgent = `{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash",
		"tool_input":{"command":"cat a.go | head -5","description":"show"},"agent_id":"a77","agent_type":"synaxi:synaxi-worker"}`
	postWrite = `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Write",
		"tool_input":{"file_path":"/w/b.go","content":"x"},"tool_response":{"filePath":"/w/b.go","success":true},"duration_ms":3}`
	sessionStart = `{"session_id":"s2","hook_event_name":"SessionStart","source":"compact","model":"claude-opus-4-7","agent_type":"synaxi:synaxi-chat"}`
	preCompact   = `{"session_id":"s2","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`
	sessionEnd   = `{"session_id":"s2","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`
)

func TestParseEvents(t *testing.T) {
	in, err := Parse([]byte(preRead))
	require.NoError(t, err)
	assert.Equal(t, "s1", in.SessionID)
	assert.Equal(t, "/w", in.Cwd)
	assert.Equal(t, "PreToolUse", in.HookEventName)
	assert.Equal(t, "Read", in.ToolName)
	assert.Equal(t, "toolu_1", in.ToolUseID)
	assert.Equal(t, ReadArgs{FilePath: "/w/a.go", Offset: 10, Limit: 20}, in.ReadArgs())
	assert.Empty(t, in.AgentID)

	in, err = Parse([]byte(preBashAgent))
	require.NoError(t, err)
	assert.Equal(t, "cat a.go | head -5", in.Command())
	assert.Equal(t, "a77", in.AgentID)
	assert.Equal(t, "synaxi:synaxi-worker", in.AgentType)

	in, err = Parse([]byte(postWrite))
	require.NoError(t, err)
	assert.Equal(t, "/w/b.go", in.EditedPath())
	assert.True(t, in.ToolResponse.Get("success").Bool())

	in, err = Parse([]byte(sessionStart))
	require.NoError(t, err)
	assert.Equal(t, "compact", in.Source)
	assert.Equal(t, "claude-opus-4-7", in.Model)

	in, err = Parse([]byte(preCompact))
	require.NoError(t, err)
	assert.Equal(t, "auto", in.Trigger)

	in, err = Parse([]byte(sessionEnd))
	require.NoError(t, err)
	assert.Equal(t, "prompt_input_exit", in.Reason)
}

func TestParseTolerant(t *testing.T) {
	for name, src := range map[string]string{
		"wrong types":    `{"session_id":5,"tool_name":["Read"],"tool_input":"nope"}`,
		"numeric string": `{"tool_name":"Read","tool_input":{"file_path":"/a","offset":"7","limit":-3}}`,
		"model object":   `{"model":{"id":"m1","display_name":"M"}}`,
		"empty":          `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			in, err := Parse([]byte(src))
			require.NoError(t, err)
			_ = in.ReadArgs()
			_ = in.EditedPath()
		})
	}
	in, _ := Parse([]byte(`{"tool_name":"Read","tool_input":{"file_path":"/a","offset":"7","limit":-3}}`))
	assert.Equal(t, ReadArgs{FilePath: "/a", Offset: 7}, in.ReadArgs())
	in, _ = Parse([]byte(`{"model":{"id":"m1"}}`))
	assert.Equal(t, "m1", in.Model)
	in, _ = Parse([]byte(`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/n.ipynb"}}`))
	assert.Equal(t, "/n.ipynb", in.EditedPath())

	for _, bad := range []string{``, `[]`, `"x"`, `{"a":`, `nul`} {
		_, err := Parse([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// blockingReader yields data and then blocks forever, like a stdin that is
// never closed.
type blockingReader struct {
	data []byte
	done bool
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if !b.done {
		b.done = true
		return copy(p, b.data), nil
	}
	select {}
}

func TestReadValueWithoutEOF(t *testing.T) {
	start := time.Now()
	raw, err := ReadValue(&blockingReader{data: []byte(sessionEnd + "\n")}, MaxInput, 5*time.Second)
	require.NoError(t, err)
	assert.JSONEq(t, sessionEnd, string(raw))
	assert.Less(t, time.Since(start), 4*time.Second, "must not wait for EOF")
}

func TestReadValueDeadline(t *testing.T) {
	_, err := ReadValue(&blockingReader{data: []byte(`{"session_id":`)}, MaxInput, 50*time.Millisecond)
	assert.ErrorIs(t, err, ErrDeadline)
}

func TestReadValueLimit(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", 200) + `"}`
	_, err := ReadValue(strings.NewReader(big), 100, time.Second)
	assert.ErrorIs(t, err, ErrTooLarge)
	raw, err := ReadValue(strings.NewReader(big), 1000, time.Second)
	require.NoError(t, err)
	assert.Equal(t, big, string(raw))
}

func TestReadValueGarbage(t *testing.T) {
	_, err := ReadValue(strings.NewReader("not json"), 100, time.Second)
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrDeadline))
	_, err = ReadValue(strings.NewReader(""), 100, time.Second)
	assert.ErrorIs(t, err, io.EOF)
}

func TestStatus(t *testing.T) {
	src := `{"session_id":"s9","transcript_path":"/t","cwd":"/w/sub","version":"2.1.332",
		"model":{"id":"claude-opus-4-7","display_name":"Opus 4.7"},
		"workspace":{"current_dir":"/w/proj","project_dir":"/w/proj","added_dirs":[]},
		"cost":{"total_cost_usd":0.42},"context_window":{"total_input_tokens":1234,"used_percentage":null}}`
	raw, err := ReadValue(&blockingReader{data: []byte(src)}, MaxStatusInput, StatusDeadline)
	require.NoError(t, err)
	s, err := ParseStatus(raw)
	require.NoError(t, err)
	assert.Equal(t, "s9", s.SessionID)
	assert.Equal(t, "Opus 4.7", s.Model())
	assert.Equal(t, "/w/proj", s.Dir())
	assert.Equal(t, int64(1234), s.ContextInput)
	assert.InDelta(t, 0.42, s.CostUSD, 1e-9)

	s, err = ParseStatus([]byte(`{"model":{"id":"m"},"cwd":"/c"}`))
	require.NoError(t, err)
	assert.Equal(t, "m", s.Model())
	assert.Equal(t, "/c", s.Dir())
}

func TestWriteDeny(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteDeny(&b, "already read a.go"))
	var got map[string]map[string]string
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, map[string]string{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": "already read a.go",
	}, got["hookSpecificOutput"])
	assert.Equal(t, byte('{'), b.Bytes()[0])
}

func TestWriteSessionContext(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteSessionContext(&b, strings.Repeat("é", 8000), ""))
	var got struct {
		H struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, "SessionStart", got.H.Event)
	assert.LessOrEqual(t, len(got.H.Context), MaxText)
	assert.True(t, strings.HasSuffix(got.H.Context, "…"))
	assert.NotContains(t, b.String(), "systemMessage")
}

func TestWriteToolContext(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteToolContext(&b, "PostToolUseFailure", "loop"))
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"loop"}}`, b.String())
	b.Reset()
	require.NoError(t, WriteStop(&b, "loop", "stopped"))
	assert.JSONEq(t, `{"continue":false,"stopReason":"stopped","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"loop"}}`, b.String())
	in, err := Parse([]byte(`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"Exit code 1"}`))
	require.NoError(t, err)
	assert.Equal(t, "Exit code 1", in.ToolError)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{preRead, preBashAgent, postWrite, sessionStart, preCompact, sessionEnd,
		`{"tool_input":{"offset":1e300}}`, `{"model":null}`, `[`, `{"a":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, err := ReadValue(bytes.NewReader(data), 1<<16, time.Second)
		if err != nil {
			return
		}
		in, err := Parse(raw)
		if err == nil {
			a := in.ReadArgs()
			if a.Offset < 0 || a.Limit < 0 {
				t.Fatalf("negative range %+v", a)
			}
			_ = in.EditedPath()
			_ = in.Command()
		}
		if s, err := ParseStatus(raw); err == nil {
			_ = s.Dir()
			_ = s.Model()
		}
	})
}
