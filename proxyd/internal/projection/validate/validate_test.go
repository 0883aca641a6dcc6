package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

const tools = `"tools":[{"name":"Read","input_schema":{"type":"object"}}]`

func req(msgs string) string {
	return `{"model":"m","max_tokens":5,` + tools + `,"messages":[` + msgs + `]}`
}

func TestRequest(t *testing.T) {
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}`
	res := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`
	cc := `"cache_control":{"type":"ephemeral"}`
	for _, tc := range []struct {
		name, body, err string
	}{
		{"ok", req(`{"role":"user","content":"hi"},` + use + `,` + res), ""},
		{"system message carried", req(`{"role":"user","content":"hi"},{"role":"system","content":"env"},` + use + `,` + res), ""},
		{"missing result", req(`{"role":"user","content":"hi"},` + use + `,{"role":"user","content":"x"}`), "without tool_result"},
		{"result first", req(`{"role":"user","content":"hi"},` + use + `,{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`), "must come first"},
		{"orphan result", req(`{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},` + res), "unexpected tool_use_id"},
		{"alternation", req(`{"role":"user","content":"hi"},{"role":"user","content":"again"}`), "alternate"},
		{"first is user", req(`{"role":"assistant","content":"hi"}`), "first message"},
		{"empty text", req(`{"role":"user","content":[{"type":"text","text":""}]}`), "non-empty"},
		{"thinking without signature", req(`{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}`), "signature"},
		{"empty tools", `{"model":"m","max_tokens":5,"tools":[],"messages":[{"role":"user","content":"hi"}]}`, "non-empty list"},
		{"tools required", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},` + use + `,` + res + `]}`, "must define tools"},
		{"five breakpoints", req(`{"role":"user","content":[` + strings.Repeat(`{"type":"text","text":"a",`+cc+`},`, 4) + `{"type":"text","text":"a",` + cc + `}]}`), "maximum of 4"},
		{"ttl order", req(`{"role":"user","content":[{"type":"text","text":"a",` + cc + `},{"type":"text","text":"b","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`), "ttl=1h"},
		{"duplicate ids", req(`{"role":"user","content":"hi"},` + use + `,` + res + `,` + use + `,` + res), "unique"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Request([]byte(tc.body))
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tc.err)
			}
		})
	}
}

func TestPrefixBreak(t *testing.T) {
	a := req(`{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"full"}`)
	b := req(`{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"curated"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}`)
	assert.Equal(t, -1, PrefixBreak([]byte(a), []byte(b)), "the previous current turn may change")
	c := req(`{"role":"user","content":"HI"},{"role":"assistant","content":"a"},{"role":"user","content":"x"}`)
	assert.Equal(t, 0, PrefixBreak([]byte(a), []byte(c)))
}
