package gate

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/config"
)

func TestDecide(t *testing.T) {
	worker := []byte(`{"model":"m","system":[{"type":"text","text":"x-anthropic-billing"},{"type":"text","text":"You are SYNAXI-PROJECTION-WORKER."}],"messages":[]}`)
	workerString := []byte(`{"system":"SYNAXI-PROJECTION-WORKER","messages":[]}`)
	inMessages := []byte(`{"system":"plain","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"system","content":"agents: SYNAXI-PROJECTION-WORKER"}]}`)
	main := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`)
	noTools := []byte(`{"model":"m","max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`)
	emptyTools := []byte(`{"model":"m","tools":[ ],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`)
	structured := []byte(`{"model":"m","tools":[{"name":"Read"}],"output_config":{"format":{"type":"json_schema"}},"messages":[{"role":"user","content":"hi"}]}`)
	quota := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	compact := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"Your task is to create a detailed summary of the conversation so far"}]}]}`)
	compact2 := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":128000,"messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"text","text":"CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary of the conversation so far, paying close attention"}]}]}`)
	quotedCompact := []byte(`{"model":"m","tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"Your task is to create a detailed summary of it"},{"role":"assistant","content":"ok"},{"role":"user","content":"thanks"}]}`)
	noMessages := []byte(`{"model":"m","tools":[{"name":"Read"}]}`)
	all, worker1, off := Rule{config.ScopeAll}, Rule{config.ScopeWorker}, Rule{config.ScopeOff}
	tests := []struct {
		name   string
		rule   Rule
		method string
		path   string
		agent  string
		body   []byte
		gated  bool
		passed string // a prefix of the reason
	}{
		{"worker array", worker1, "POST", "/v1/messages", "", worker, true, ""},
		{"worker string", worker1, "POST", "/v1/messages", "", workerString, true, ""},
		{"trailing slash", worker1, "POST", "/v1/messages/", "", worker, true, ""},
		{"worker scope: sentinel only in messages", worker1, "POST", "/v1/messages", "", inMessages, false, ""},
		{"worker scope: main session", worker1, "POST", "/v1/messages", "", main, false, ""},
		{"worker scope: malformed", worker1, "POST", "/v1/messages", "", []byte(`{"system":"SYNAXI-PROJECTION-WORKER`), false, ""},
		{"count_tokens", all, "POST", "/v1/messages/count_tokens", "", main, false, ""},
		{"GET", all, "GET", "/v1/messages", "", main, false, ""},
		{"other path", all, "POST", "/v1/complete", "", main, false, ""},
		{"all: main session", all, "POST", "/v1/messages", "", main, true, ""},
		{"all: subagent", all, "POST", "/v1/messages", "a1b2", main, true, ""},
		{"all: the worker", all, "POST", "/v1/messages", "", worker, true, ""},
		{"all: sentinel in messages is a conversation", all, "POST", "/v1/messages", "", inMessages, true, ""},
		{"all: no tools", all, "POST", "/v1/messages", "", noTools, false, "side request: no tools"},
		{"all: empty tools", all, "POST", "/v1/messages", "", emptyTools, false, "side request: no tools"},
		{"all: structured output", all, "POST", "/v1/messages", "", structured, false, "side request: structured output"},
		{"all: quota probe", all, "POST", "/v1/messages", "", quota, false, "side request: max_tokens 1"},
		{"all: compaction prompt", all, "POST", "/v1/messages", "", compact, false, "compaction"},
		{"all: compaction prompt after a preamble (2.1.332)", all, "POST", "/v1/messages", "", compact2, false, "compaction"},
		{"all: compaction agent", all, "POST", "/v1/messages", "acompact-fffbd0", main, false, "compaction"},
		{"all: the prompt quoted earlier", all, "POST", "/v1/messages", "", quotedCompact, true, ""},
		{"all: no messages", all, "POST", "/v1/messages", "", noMessages, false, "no conversation"},
		{"all: malformed", all, "POST", "/v1/messages", "", []byte("{"), false, "no conversation"},
		{"off", off, "POST", "/v1/messages", "", worker, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.agent != "" {
				h.Set(AgentHeader, tt.agent)
			}
			d := tt.rule.Decide(tt.method, tt.path, h, Parse(tt.body))
			assert.Equal(t, tt.gated, d.Gated)
			if tt.passed == "" {
				assert.Empty(t, d.Passed)
			} else {
				assert.True(t, strings.HasPrefix(d.Passed, tt.passed), d.Passed)
			}
		})
	}
}

// TestDecideCaptured classifies the real client's requests recorded by
// the e2e fixtures (Claude Code 2.1.332): every agent-loop request is
// gated, the title generation passes.
func TestDecideCaptured(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "e2e", "testdata", "captured")
	want := map[string]bool{
		"main-first": true, "main-tools": true, "main-write": true, "interactive-tools": true,
		"worker-first": true, "worker-thinking": true, "system-prompt-flag": true,
		"interactive-title": false,
	}
	for name, gated := range want {
		raw, err := os.ReadFile(filepath.Join(dir, name+".body.json"))
		require.NoError(t, err)
		d := Rule{config.ScopeAll}.Decide("POST", "/v1/messages", http.Header{}, Parse(raw))
		assert.Equal(t, gated, d.Gated, "%s: %s", name, d.Passed)
		assert.Equal(t, !gated, d.Passed != "", name)
	}
}

// FuzzDecide: any body, under any scope, gets an answer without a panic;
// a gated request never carries a pass reason, and off gates nothing.
func FuzzDecide(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"Read"}],"max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`), "")
	f.Add([]byte(`{"tools":[],"messages":[{"role":"user","content":[{"type":"text","text":"Your task is to create a detailed summary of"}]}]}`), "acompact-1")
	f.Add([]byte(`{"tools":[1],"messages":[{"role":"user","content":"Your task is to create a detailed summary of"}`), "")
	f.Add([]byte(`{"system":"SYNAXI-PROJECTION-WORKER","tools":"x","max_tokens":"1"}`), "a")
	f.Fuzz(func(t *testing.T, body []byte, agent string) {
		h := http.Header{}
		h.Set(AgentHeader, agent)
		for _, scope := range []string{config.ScopeAll, config.ScopeWorker, config.ScopeOff} {
			d := Rule{scope}.Decide("POST", "/v1/messages", h, Parse(body))
			if d.Gated && d.Passed != "" {
				t.Fatalf("%s: gated with a pass reason %q", scope, d.Passed)
			}
			if scope == config.ScopeOff && (d.Gated || d.Passed != "") {
				t.Fatalf("off decided %+v", d)
			}
		}
	})
}

func TestSession(t *testing.T) {
	h := http.Header{}
	body := Parse([]byte(`{"metadata":{"user_id":"u1"}}`))
	assert.Equal(t, "u1", Session(h, body))
	h.Set("x-claude-code-session-id", "s1")
	assert.Equal(t, "s1", Session(h, body))
	assert.Equal(t, "", Session(http.Header{}, Parse([]byte("nope"))))
	h.Set("x-claude-code-agent-id", "a1")
	assert.Equal(t, "a1", Agent(h))
}

func TestBody(t *testing.T) {
	raw := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	b := Parse(raw)
	assert.Equal(t, raw, b.Bytes())
	msgs := b.JSON().Get("messages")
	assert.Same(t, &raw[24], unsafe.StringData(msgs.Raw), "the parse shares the body's memory")
	b.Check()
	b.Check()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); assert.True(t, b.Valid()) }()
	}
	wg.Wait()

	for _, bad := range []string{`{"model":"m"`, `{"a":1}x`, ``, `{"a":tru}`} {
		assert.False(t, Parse([]byte(bad)).Valid(), bad)
	}
	assert.True(t, Parse([]byte(` [1] `)).Valid())
}

func TestMembers(t *testing.T) {
	b := Parse([]byte(`{"model":"m","messages":[{"role":"user","content":"a \"system\": b"}],"sys\u0074em":"s1","system":"s2","metadata":{"user_id":"u"}}`))
	var keys []string
	for _, m := range b.Members() {
		keys = append(keys, m.Key.Str)
	}
	assert.Equal(t, []string{"model", "messages", "system", "system", "metadata"}, keys, "every member, in order, duplicates too")
	for _, k := range []string{"model", "messages", "system", "metadata", "tools"} {
		assert.Equal(t, b.JSON().Get(k).Raw, b.Field(k).Raw, "Field(%q) is what Get finds", k)
	}
	assert.Equal(t, "u", b.Field("metadata").Get("user_id").Str)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); assert.Len(t, b.Members(), 5) }()
	}
	wg.Wait()
	for _, notObject := range []string{`[1,2]`, `"s"`, ``} {
		assert.Nil(t, Parse([]byte(notObject)).Members(), notObject)
		assert.False(t, Parse([]byte(notObject)).Field("system").Exists(), notObject)
	}
}

type projFunc func(context.Context, *Input) (*Output, error)

func (f projFunc) Project(ctx context.Context, in *Input) (*Output, error) { return f(ctx, in) }

func TestRun(t *testing.T) {
	in := &Input{Body: Parse([]byte(`{"a":1}`))}
	out, err := Run(context.Background(), Identity{}, in)
	require.NoError(t, err)
	assert.Equal(t, in.Body.Bytes(), out.Body)

	_, err = Run(context.Background(), projFunc(func(context.Context, *Input) (*Output, error) { panic("boom") }), in)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)

	sentinel := errors.New("nope")
	_, err = Run(context.Background(), projFunc(func(context.Context, *Input) (*Output, error) { return nil, sentinel }), in)
	require.ErrorIs(t, err, sentinel)

	_, err = Run(context.Background(), projFunc(func(context.Context, *Input) (*Output, error) { return &Output{}, nil }), in)
	require.Error(t, err)
}

func FuzzIsWorker(f *testing.F) {
	f.Add([]byte(`{"system":"SYNAXI-PROJECTION-WORKER"}`))
	f.Add([]byte(`{"system":[{"type":"text","text":"x SYNAXI-PROJECTION-WORKER"}]}`))
	f.Add([]byte(`{"messages":[{"content":"SYNAXI-PROJECTION-WORKER"}],"system":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b := Parse(body)
		if IsWorker(b) {
			assert.Contains(t, string(body), Sentinel)
		}
		_ = Session(http.Header{}, b)
	})
}

func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"model":"m","system":"x","system":"y"}`, `{"a\u0022":1,"messages":[{"x":"}"}]}`, `[]`, `{"system":[{"text":"SYNAXI-PROJECTION-WORKER"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := Parse(raw)
		if !b.Valid() {
			return
		}
		for _, k := range []string{"model", "messages", "system", "tools", "metadata"} {
			if got, want := b.Field(k).Raw, b.JSON().Get(k).Raw; got != want {
				t.Fatalf("Field(%q) = %q, Get finds %q in %q", k, got, want, raw)
			}
		}
	})
}

// FuzzValid holds Body.Valid to gjson's validator, which the engine's
// readers (gjson and fastjson, neither validating) were written against.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi \"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00"}]}`,
		` [1, -0, 0.5, -1.5e+10, 2E-3, true, false, null, {}, [], ""] `, `"\u12"`, `"\u12G4"`, `"\x"`, "\"a\tb\"",
		"\"\x01\"", `01`, `-`, `1.`, `1e`, `.5`, `+1`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `{"a":1}x`, `{"a":1} `, ``, ` `,
		`nul`, `truex`, "\"\x13\\\\b\"", "\"\xff\xfe\"", `{"\u0061":"b"}`, `[[[[[[]]]]]]`, `{"a":[1,{"b":"]"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := Parse(raw).Valid(), gjson.ValidBytes(raw); got != want {
			t.Fatalf("Valid(%q) = %t, gjson says %t", raw, got, want)
		}
	})
}

func TestHasControl(t *testing.T) {
	for i := range 256 {
		for _, at := range []int{0, 5, 7, 8, 13, 16} {
			b := []byte("abcdefghijklmnopq")
			b[at] = byte(i)
			assert.Equal(t, i < 0x20, hasControl(b), "byte %#x at %d", i, at)
		}
	}
	assert.False(t, hasControl(nil))
}
