package gate

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

func TestGated(t *testing.T) {
	worker := []byte(`{"model":"m","system":[{"type":"text","text":"x-anthropic-billing"},{"type":"text","text":"You are SYNAXI-PROJECTION-WORKER."}],"messages":[]}`)
	workerString := []byte(`{"system":"SYNAXI-PROJECTION-WORKER","messages":[]}`)
	inMessages := []byte(`{"system":"plain","messages":[{"role":"system","content":"agents: SYNAXI-PROJECTION-WORKER"}]}`)
	noSystem := []byte(`{"messages":[{"role":"user","content":"hi"}]}`)
	malformed := []byte(`{"system":"SYNAXI-PROJECTION-WORKER`)
	tests := []struct {
		name   string
		rule   Rule
		method string
		path   string
		body   []byte
		want   bool
	}{
		{"worker array", Rule{}, "POST", "/v1/messages", worker, true},
		{"worker string", Rule{}, "POST", "/v1/messages", workerString, true},
		{"trailing slash", Rule{}, "POST", "/v1/messages/", worker, true},
		{"sentinel only in messages", Rule{}, "POST", "/v1/messages", inMessages, false},
		{"no system", Rule{}, "POST", "/v1/messages", noSystem, false},
		{"malformed", Rule{}, "POST", "/v1/messages", malformed, false},
		{"count_tokens", Rule{}, "POST", "/v1/messages/count_tokens", worker, false},
		{"GET", Rule{}, "GET", "/v1/messages", worker, false},
		{"other path", Rule{}, "POST", "/v1/complete", worker, false},
		{"project all", Rule{ProjectAll: true}, "POST", "/v1/messages", noSystem, true},
		{"project all malformed", Rule{ProjectAll: true}, "POST", "/v1/messages", []byte("{"), true},
		{"disabled", Rule{Disable: true}, "POST", "/v1/messages", worker, false},
		{"disabled beats all", Rule{Disable: true, ProjectAll: true}, "POST", "/v1/messages", worker, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.rule.Gated(tt.method, tt.path, Parse(tt.body)))
		})
	}
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
