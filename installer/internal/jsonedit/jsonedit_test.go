package jsonedit

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSet(t *testing.T) {
	sl := map[string]any{"type": "command", "command": "/x/synaxi-statusline"}
	tests := []struct {
		name  string
		src   string
		value any
		path  []string
		want  string
	}{
		{"empty file", "", sl, []string{"statusLine"},
			"{\n  \"statusLine\": {\n    \"command\": \"/x/synaxi-statusline\",\n    \"type\": \"command\"\n  }\n}\n"},
		{"empty object", "{}\n", "v", []string{"env", "K"},
			"{\n  \"env\": {\n    \"K\": \"v\"\n  }\n}\n"},
		{"append keeps layout", "{\n    \"model\": \"opus\"\n}\n", "true", []string{"env", "ENABLE_TOOL_SEARCH"},
			"{\n    \"model\": \"opus\",\n    \"env\": {\n        \"ENABLE_TOOL_SEARCH\": \"true\"\n    }\n}\n"},
		{"into existing nested", "{\n  \"env\": {\n    \"FOO\": \"bar\"\n  },\n  \"x\": 1\n}", "u", []string{"env", "ANTHROPIC_BASE_URL"},
			"{\n  \"env\": {\n    \"FOO\": \"bar\",\n    \"ANTHROPIC_BASE_URL\": \"u\"\n  },\n  \"x\": 1\n}"},
		{"replace keeps neighbours", "{\"a\":1,  \"statusLine\" : {\"command\":\"old\"} ,\"b\":[1, 2]}", "new", []string{"statusLine", "command"},
			"{\"a\":1,  \"statusLine\" : {\"command\":\"new\"} ,\"b\":[1, 2]}"},
		{"compact stays compact", "{\"a\":{}}", "v", []string{"a", "k"}, "{\"a\":{\"k\":\"v\"}}"},
		{"comments survive", "// mine\n{\n  \"model\": \"opus\", /* keep */\n  \"env\": {} // trailing\n}\n", "v", []string{"env", "K"},
			"// mine\n{\n  \"model\": \"opus\", /* keep */\n  \"env\": {\n    \"K\": \"v\"\n  } // trailing\n}\n"},
		{"string with slashes is not a comment", "{\"u\": \"http://x/*y*/\"}", 2, []string{"n"}, "{\"u\": \"http://x/*y*/\",\"n\": 2}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Set([]byte(tt.src), tt.value, tt.path...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			blank, _ := Blank(got)
			assert.True(t, json.Valid(blank), "result must stay valid: %s", got)
		})
	}
}

func TestSetNotObject(t *testing.T) {
	_, err := Set([]byte(`{"env": "x"}`), "v", "env", "K")
	require.ErrorIs(t, err, ErrNotObject)
	_, err = Set([]byte(`[1]`), "v", "K")
	require.ErrorIs(t, err, ErrNotObject)
	_, err = Set([]byte(`{"a":`), "v", "K")
	require.ErrorContains(t, err, "invalid JSON at line 1")
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name, src, want string
		path            []string
	}{
		{"last", "{\n  \"a\": 1,\n  \"b\": 2\n}\n", "{\n  \"a\": 1\n}\n", []string{"b"}},
		{"first", "{\n  \"a\": 1,\n  \"b\": 2\n}\n", "{\n  \"b\": 2\n}\n", []string{"a"}},
		{"only", "{\"env\": {\"K\": \"v\"}}", "{\"env\": {}}", []string{"env", "K"}},
		{"missing", "{\"a\": 1}", "{\"a\": 1}", []string{"zz", "K"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Delete([]byte(tt.src), tt.path...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestSetThenDeleteRoundTrip(t *testing.T) {
	src := []byte("{\n  \"model\": \"opus\",\n  \"env\": {\n    \"FOO\": \"bar\"\n  }\n}\n")
	out, err := Set(src, "u", "env", "ANTHROPIC_BASE_URL")
	require.NoError(t, err)
	out, err = Delete(out, "env", "ANTHROPIC_BASE_URL")
	require.NoError(t, err)
	assert.Equal(t, string(src), string(out))
}

func TestGet(t *testing.T) {
	src := []byte(`{"statusLine": {"command": "echo \"hi\""}, "n": 3}`)
	assert.Equal(t, `echo "hi"`, GetString(src, "statusLine", "command"))
	raw, ok, err := Get(src, "n")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "3", string(raw))
	_, ok, err = Get(src, "nope")
	require.NoError(t, err)
	assert.False(t, ok)
}

func FuzzSet(f *testing.F) {
	f.Add([]byte("{\n  \"a\": {\"b\": 1} // c\n}"), "a", "b")
	f.Add([]byte("{}"), "env", "K")
	f.Fuzz(func(t *testing.T, src []byte, k1, k2 string) {
		if Check(src) != nil || !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return
		}
		out, err := Set(src, "v", k1, k2)
		if err != nil {
			return
		}
		blank, _ := Blank(out)
		if !json.Valid(blank) {
			t.Fatalf("invalid result %q from %q", out, src)
		}
		if GetString(out, k1, k2) != "v" {
			t.Fatalf("value not set in %q", out)
		}
	})
}
