package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, src string) *Doc {
	t.Helper()
	d, err := Parse("settings.json", []byte(src))
	require.NoError(t, err)
	return d
}

type statusLine struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

func TestSet(t *testing.T) {
	sl := statusLine{Type: "command", Command: "/x/synaxi-statusline"}
	tests := []struct {
		name  string
		src   string
		value any
		keys  []string
		want  string
	}{
		{"empty file", "", sl, []string{"statusLine"},
			"{\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"/x/synaxi-statusline\"\n  }\n}\n"},
		{"blank file", " \n", "v", []string{"env", "K"},
			"{\n  \"env\": {\n    \"K\": \"v\"\n  }\n}\n"},
		{"empty object", "{}\n", "v", []string{"env", "K"},
			"{\n  \"env\": {\n    \"K\": \"v\"\n  }\n}\n"},
		{"append keeps layout", "{\n    \"model\": \"opus\"\n}\n", "true", []string{"env", "ENABLE_TOOL_SEARCH"},
			"{\n    \"model\": \"opus\",\n    \"env\": {\n        \"ENABLE_TOOL_SEARCH\": \"true\"\n    }\n}\n"},
		{"tabs", "{\n\t\"a\": 1,\n\t\"b\": 2\n}", map[string]int{"x": 1}, []string{"c"},
			"{\n\t\"a\": 1,\n\t\"b\": 2,\n\t\"c\": {\n\t\t\"x\": 1\n\t}\n}"},
		{"into existing nested", "{\n  \"env\": {\n    \"FOO\": \"bar\"\n  },\n  \"x\": 1\n}", "u", []string{"env", "ANTHROPIC_BASE_URL"},
			"{\n  \"env\": {\n    \"FOO\": \"bar\",\n    \"ANTHROPIC_BASE_URL\": \"u\"\n  },\n  \"x\": 1\n}"},
		{"into empty nested, pretty document", "{\n  \"env\": {},\n  \"x\": 1\n}", "u", []string{"env", "K"},
			"{\n  \"env\": {\n    \"K\": \"u\"\n  },\n  \"x\": 1\n}"},
		{"replace keeps neighbours", "{\"a\":1,  \"statusLine\" : {\"command\":\"old\"} ,\"b\":[1, 2]}", "new", []string{"statusLine", "command"},
			"{\"a\":1,  \"statusLine\" : {\"command\":\"new\"} ,\"b\":[1, 2]}"},
		{"replace an object, indented at its key", "{\n  \"statusLine\": \"x\",\n  \"b\": 1\n}", sl, []string{"statusLine"},
			"{\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"/x/synaxi-statusline\"\n  },\n  \"b\": 1\n}"},
		{"one-line object in a pretty document stays on one line", "{\n  \"statusLine\": {\"command\": \"x\"},\n  \"m\": 1\n}", "command", []string{"statusLine", "type"},
			"{\n  \"statusLine\": {\"command\": \"x\", \"type\": \"command\"},\n  \"m\": 1\n}"},
		{"compact stays compact", "{\"a\":{}}", "v", []string{"a", "k"}, "{\"a\":{\"k\":\"v\"}}"},
		{"compact sibling separator", "{\"a\":1,\"b\":2}", "v", []string{"c"}, "{\"a\":1,\"b\":2,\"c\":\"v\"}"},
		{"odd spacing copied", "{\"model\":\"opus\",\n\n      \"env\" :{ \"FOO\":\"bar\"}  }", "u", []string{"env", "URL"},
			"{\"model\":\"opus\",\n\n      \"env\" :{ \"FOO\":\"bar\", \"URL\":\"u\"}  }"},
		{"slashes in strings", "{\"u\": \"http://x/*y*/\"}", 2, []string{"n"}, "{\"u\": \"http://x/*y*/\", \"n\": 2}"},
		{"unicode and html characters kept", "{\"k\": \"é\"}", "a && b > c — ü", []string{"cmd"}, "{\"k\": \"é\", \"cmd\": \"a && b > c — ü\"}"},
		{"keys gjson would read as syntax", "{}", true, []string{"enabledPlugins", "synaxi@synaxi"},
			"{\n  \"enabledPlugins\": {\n    \"synaxi@synaxi\": true\n  }\n}"},
		{"dotted and starred keys", "{\"a.b\": {\"*\": 1}}", 2, []string{"a.b", "*"}, "{\"a.b\": {\"*\": 2}}"},
		{"colon-led key", "{\":x\": 1}", 2, []string{":x"}, "{\":x\": 2}"},
		{"raw message", "{\"a\": 1}", json.RawMessage(`{ "x" : [1, 2] }`), []string{"a"}, "{\"a\": {\"x\":[1,2]}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parse(t, tt.src)
			require.NoError(t, d.Set(tt.value, tt.keys...))
			assert.Equal(t, tt.want, string(d.Bytes()))
			assert.True(t, json.Valid(d.Bytes()), "result must stay valid: %s", d.Bytes())
		})
	}
}

func TestSetRefuses(t *testing.T) {
	err := parse(t, `{"env": "x"}`).Set("v", "env", "K")
	require.ErrorIs(t, err, ErrNotObject)
	assert.ErrorContains(t, err, "settings.json: env: not a JSON object")
	err = parse(t, `{"env": {}, "env": {"A": "1"}}`).Set("v", "env", "K")
	assert.ErrorContains(t, err, `key "env" appears 2 times in the top level; Claude Code uses the last one`)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line, col int
		want      string
	}{
		{"unterminated", "{\n  \"model\": \"opus\",\n", 3, 1, "unexpected end of JSON input"},
		{"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "invalid character '\"' after object key:value pair"},
		{"trailing comma", "{\"a\": 1,}", 1, 9, "invalid character '}'"},
		{"comment", "{\n  // mine\n  \"a\": 1\n}", 2, 3, "remove the comments"},
		{"column counts characters", "{\"ü\": 1 x}", 1, 9, "invalid character 'x'"},
		{"top level array", "  [1]", 1, 3, "the top level is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/h/.claude/settings.json", []byte(tt.src))
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.line, se.Line, "line")
			assert.Equal(t, tt.col, se.Col, "column")
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "/h/.claude/settings.json:"), err.Error())
		})
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name, src, want string
		keys            []string
	}{
		{"last", "{\n  \"a\": 1,\n  \"b\": 2\n}\n", "{\n  \"a\": 1\n}\n", []string{"b"}},
		{"first", "{\n  \"a\": 1,\n  \"b\": 2\n}\n", "{\n  \"b\": 2\n}\n", []string{"a"}},
		{"middle", "{\"a\": 1, \"b\": 2, \"c\": 3}", "{\"a\": 1, \"c\": 3}", []string{"b"}},
		{"only", "{\"env\": {\"K\": \"v\"}}", "{\"env\": {}}", []string{"env", "K"}},
		{"missing", "{\"a\": 1}", "{\"a\": 1}", []string{"zz", "K"}},
		{"empty file", "", "", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parse(t, tt.src)
			require.NoError(t, d.Delete(tt.keys...))
			assert.Equal(t, tt.want, string(d.Bytes()))
		})
	}
}

// TestRealSettingsRoundTrip edits a settings file like a user's (schema,
// permissions, hooks, unicode, their own status line and env) the way
// install does, checks that every member install did not touch keeps its
// bytes, and that undoing the edits gives the original bytes back.
func TestRealSettingsRoundTrip(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "real.json"))
	require.NoError(t, err)
	d := parse(t, string(orig))
	require.NoError(t, d.Set("/home/u/.local/share/synaxi/bin/synaxi-statusline", "statusLine", "command"))
	require.NoError(t, d.Set("http://127.0.0.1:4517", "env", "ANTHROPIC_BASE_URL"))
	require.NoError(t, d.Set("true", "env", "ENABLE_TOOL_SEARCH"))
	require.NoError(t, d.Set(true, "enabledPlugins", "synaxi@synaxi"))

	got := parse(t, string(d.Bytes()))
	assert.Equal(t, "/home/u/.local/share/synaxi/bin/synaxi-statusline", got.String("statusLine", "command"))
	assert.Equal(t, "grüß dich — こんにちは 👋", got.String("env", "GREETING"))
	for _, k := range []string{"$schema", "model", "permissions", "hooks", "includeCoAuthoredBy"} {
		a, _, _ := parse(t, string(orig)).Get(k)
		b, _, _ := got.Get(k)
		assert.Equal(t, string(a), string(b), "%s keeps its bytes", k)
	}
	assert.Contains(t, string(d.Bytes()), "    \"ENABLE_TOOL_SEARCH\": \"true\"\n  },", "new env keys are laid out like the user's")
	assert.Contains(t, string(d.Bytes()), "  \"includeCoAuthoredBy\": false,\n  \"enabledPlugins\": {\n    \"synaxi@synaxi\": true\n  }\n}\n")

	require.NoError(t, d.Delete("enabledPlugins"))
	require.NoError(t, d.Delete("env", "ENABLE_TOOL_SEARCH"))
	require.NoError(t, d.Delete("env", "ANTHROPIC_BASE_URL"))
	require.NoError(t, d.Set("~/.claude/statusline.sh", "statusLine", "command"))
	assert.Equal(t, string(orig), string(d.Bytes()))
}

func TestGet(t *testing.T) {
	d := parse(t, `{"statusLine": {"command": "echo \"hi\""}, "n": 3}`)
	assert.Equal(t, `echo "hi"`, d.String("statusLine", "command"))
	assert.Empty(t, d.String("n"), "not a string")
	raw, ok, err := d.Get("n")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "3", string(raw))
	_, ok, err = d.Get("nope", "deeper")
	require.NoError(t, err)
	assert.False(t, ok)
	_, _, err = d.Get("n", "deeper")
	assert.ErrorIs(t, err, ErrNotObject)
}

func TestReadMissingFile(t *testing.T) {
	d, err := Read(filepath.Join(t.TempDir(), "settings.json"))
	require.NoError(t, err)
	assert.Empty(t, d.Bytes())
	assert.Empty(t, d.String("statusLine", "command"))
}

func FuzzSet(f *testing.F) {
	f.Add([]byte("{\n  \"a\": {\"b\": 1},\n  \"c\": [1]\n}"), "a", "b")
	f.Add([]byte("{}"), "env", "K")
	f.Add([]byte(""), "enabledPlugins", "synaxi@synaxi")
	f.Add([]byte(`{"x": {"y": 1}, "z": 2}`), "x", "w")
	f.Fuzz(func(t *testing.T, src []byte, k1, k2 string) {
		d, err := Parse("f", src)
		if err != nil {
			return
		}
		before := topLevel(t, src)
		if err := d.Set("v", k1, k2); err != nil {
			return
		}
		out := d.Bytes()
		got, err := Parse("f", out)
		if err != nil {
			t.Fatalf("invalid result %q from %q: %v", out, src, err)
		}
		if got.String(k1, k2) != "v" {
			t.Fatalf("value not set in %q", out)
		}
		after := topLevel(t, out)
		for k, raw := range before {
			if k != k1 && after[k] != raw {
				t.Fatalf("untouched %q changed from %s to %s", k, raw, after[k])
			}
		}
		if err := got.Delete(k1, k2); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, ok, _ := got.Get(k1, k2); ok {
			t.Fatalf("not deleted from %q", got.Bytes())
		}
	})
}

// topLevel maps each top-level key to its raw bytes ("" when a key repeats).
func topLevel(t *testing.T, src []byte) map[string]string {
	d := &Doc{src: src}
	out := map[string]string{}
	if d.empty() {
		return out
	}
	for _, m := range members(d.root()) {
		if _, dup := out[m.key.Str]; dup {
			out[m.key.Str] = ""
			continue
		}
		out[m.key.Str] = m.val.Raw
	}
	return out
}
