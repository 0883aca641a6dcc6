package projection

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodingJSON is the reference jsonString must match byte for byte.
func encodingJSON(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\b\f\n\r\t\x00\x1f\x7f", "<&>", "é→✓😀",
		"\u2028\u2029", "\xff\xfe", "ok\xe2\x80", "\xed\xa0\x80", "tab\there\nline \"q\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := jsonString(s), encodingJSON(s)
		if !bytes.Equal(got, want) {
			t.Fatalf("jsonString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

// TestBlockJSON: the tool_use and tool_result blocks the engine writes are
// exact JSON whatever the id and name hold (Go's %q, which wrote them
// before, escapes control and non-ASCII characters its own way: \x01,
// \u2028 kept, invalid UTF-8 as \x.. — none of it JSON).
func TestBlockJSON(t *testing.T) {
	for _, id := range []string{"toolu_01ABC", `a"b\c`, "ü/ü", "\x01\t", "\u2028", "bad\xffutf8"} {
		var use struct{ Type, ID, Name string }
		raw := toolUseJSON(id, id+"!", []byte(`{"file_path":"/a"}`))
		require.True(t, json.Valid(raw), "%q: %s", id, raw)
		require.NoError(t, json.Unmarshal(raw, &use))
		want := strings.ToValidUTF8(id, "\ufffd")
		assert.Equal(t, "tool_use", use.Type)
		assert.Equal(t, want, use.ID)
		assert.Equal(t, want+"!", use.Name)

		var res struct {
			Type      string
			ToolUseID string `json:"tool_use_id"`
			Content   string
			IsError   bool `json:"is_error"`
		}
		raw = toolResultJSON(id, []byte(`"out"`))
		require.True(t, json.Valid(raw), "%q: %s", id, raw)
		require.NoError(t, json.Unmarshal(raw, &res))
		assert.Equal(t, want, res.ToolUseID)
		assert.Equal(t, "out", res.Content)
		raw = append(openToolResultJSON(id, []byte(`"out"`)), `,"is_error":true}`...)
		require.NoError(t, json.Unmarshal(raw, &res))
		assert.True(t, res.IsError)
	}
}
