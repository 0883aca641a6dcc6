package tokens

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want Features
	}{
		{"", Features{}},
		{"hello world", Features{Words: 2, Letters: 10}},
		{"getUserName", Features{Words: 1, Letters: 11, Humps: 2}},
		{"HTTPServer", Features{Words: 1, Letters: 10}},
		{"x := 42\n", Features{Words: 1, Letters: 1, Punct: 2, Digits: 2, Newlines: 1}},
		{"\tif a {\r\n\t\treturn\n", Features{Words: 3, Letters: 9, Punct: 1, Newlines: 2, Indents: 1}},
		{"    four", Features{Words: 1, Letters: 4, Indents: 1}},
		{"café 日本", Features{Words: 1, Letters: 3, NonASCII: 3}},
		{"\xff\xfe", Features{NonASCII: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Count([]byte(tt.in)))
			assert.Equal(t, EstimateBytes([]byte(tt.in)), Estimate(tt.in))
		})
	}
}

func TestEstimate(t *testing.T) {
	assert.Zero(t, Estimate(""))
	assert.Equal(t, 2, Estimate("hello world"))
	// Longer text costs more, and repeating text scales the estimate.
	s := "The quick brown fox jumps over the lazy dog.\n"
	one := Estimate(s)
	assert.Positive(t, one)
	assert.InDelta(t, 100*one, Estimate(strings.Repeat(s, 100)), float64(100))
}

// The histogram behind Estimate counts exactly what the full counter
// counts of the features the calibration weighs.
func TestHistogramMatchesCounter(t *testing.T) {
	require.True(t, Calibrated.contextFree(), "the calibration weighs a context feature: Estimate takes the full count")
	texts := []string{"", "a", "hello world", "getUserName(x, y) // ∑ naïve 日本語\n\t  indented\r\n42",
		string([]byte{0xff, 0xc3, 0x28, 'a', 0x80, '\n'})}
	session, err := os.ReadFile(sessionFixture)
	require.NoError(t, err)
	for line := range strings.Lines(string(session)) {
		texts = append(texts, line)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		var c counter
		c.addString(s)
		f := c.done()
		f.Words, f.Humps, f.Indents = 0, 0, 0
		assert.Equal(t, f, histogram(s))
		assert.Equal(t, Calibrated.Apply(c.done()), Estimate(s))
		assert.Equal(t, Estimate(s), EstimateBytes([]byte(s)))
	}
}

func TestCountJSON(t *testing.T) {
	text := func(s string) Features { return Count([]byte(s)) }
	tests := []struct {
		name string
		body string
		want func() Features
	}{
		{
			name: "config fields are not counted",
			body: `{"model":"claude-opus-4-6","max_tokens":32000,"stream":true,"metadata":{"user_id":"abc"},"temperature":1,"thinking":{"type":"enabled","budget_tokens":1024}}`,
			want: func() Features { return Features{Requests: 1} },
		},
		{
			name: "system string and blocks",
			body: `{"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi there"}]}`,
			want: func() Features {
				f := text("You are Claude Code.")
				f.Add(text("hi there"))
				f.Blocks, f.Messages, f.Requests = 1, 1, 1
				return f
			},
		},
		{
			name: "escapes are counted as the characters they stand for",
			body: `{"messages":[{"role":"user","content":"a\nb\t\t\"c\" \u00e9 \ud83d\ude00 \u0041"}]}`,
			want: func() Features {
				f := text("a\nb\t\t\"c\" é 😀 A")
				f.Messages, f.Requests = 1, 1
				return f
			},
		},
		{
			name: "tool use, result, thinking and image",
			body: `{"messages":[
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"plan it","signature":"c2lnbmF0dXJl"},
					{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a.go"}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"package a"}],"is_error":false},
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}`,
			want: func() Features {
				f := text("plan it")
				f.Add(text("Read"))
				f.Add(text(`{"file_path":"/a.go"}`))
				f.Add(text("package a"))
				f.Messages, f.Blocks, f.Images, f.Requests = 2, 5, 1, 1
				return f
			},
		},
		{
			name: "tools",
			body: `{"tools":[{"name":"Bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}],"messages":[]}`,
			want: func() Features {
				f := text("Bash")
				f.Add(text("Run a command"))
				f.Add(text(`{"type":"object","properties":{"command":{"type":"string"}}}`))
				f.Tools, f.Requests = 1, 1
				return f
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CountJSON([]byte(tt.body))
			require.True(t, ok)
			assert.Equal(t, tt.want(), got)
		})
	}
}

func TestCountJSONRejects(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `"text"`, `{"messages":[`, `{"a":1} trailing`, `{"a":tru}`,
		`{"messages":"` + "\x00" + `\q"}`, strings.Repeat(`{"a":[`, 1000),
	} {
		f, ok := CountJSON([]byte(body))
		assert.False(t, ok, body)
		assert.Zero(t, f, body)
	}
}

func TestCountJSONRealBodies(t *testing.T) {
	// Every captured body is well-formed and estimated above zero.
	for _, s := range requestSamples(t) {
		assert.Positive(t, Calibrated.Apply(s.f), s.name)
	}
}

func FuzzCountJSON(f *testing.F) {
	f.Add([]byte(`{"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi \u00e9"}]}],"tools":[{"name":"n","input_schema":{}}]}`))
	f.Add([]byte(`{"messages":[{"content":"\ud83d"}]}`))
	f.Add([]byte(`{"a":-1.5e3,"b":[true,false,null]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		feat, ok := CountJSON(in)
		if again, _ := CountJSON(in); again != feat {
			t.Fatal("not deterministic")
		}
		if n := Calibrated.Apply(feat); n < 0 {
			t.Fatalf("negative estimate %d", n)
		}
		if !ok && json.Valid(in) && bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{")) && bytes.Count(in, []byte("{"))+bytes.Count(in, []byte("[")) < maxDepth {
			t.Fatalf("rejected a valid JSON object %q", in)
		}
		if !ok && feat != (Features{}) {
			t.Fatal("features on failure")
		}
		if Estimate(string(in)) != EstimateBytes(in) {
			t.Fatal("Estimate and EstimateBytes disagree")
		}
	})
}

// megabyteBody is a real request body whose messages are repeated until
// the body is over 1 MB.
func megabyteBody(b *testing.B) []byte {
	f, err := os.Open(requestsFile)
	require.NoError(b, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(b, err)
	all, err := io.ReadAll(zr)
	require.NoError(b, err)
	var largest apiRequest
	for line := range bytes.Lines(all) {
		var r apiRequest
		require.NoError(b, json.Unmarshal(line, &r))
		if len(r.Body) > len(largest.Body) {
			largest = r
		}
	}
	var body map[string]json.RawMessage
	require.NoError(b, json.Unmarshal(largest.Body, &body))
	var msgs []json.RawMessage
	require.NoError(b, json.Unmarshal(body["messages"], &msgs))
	var out []json.RawMessage
	for size := len(largest.Body); size < 1<<20; size += len(body["messages"]) {
		out = append(out, msgs...)
	}
	body["messages"], err = json.Marshal(out)
	require.NoError(b, err)
	raw, err := json.Marshal(body)
	require.NoError(b, err)
	return raw
}

func BenchmarkEstimateBytes(b *testing.B) {
	body := megabyteBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		EstimateBytes(body)
	}
}

func BenchmarkEstimate(b *testing.B) {
	body := string(megabyteBody(b))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Estimate(body)
	}
}

// FuzzEstimateSpan: one pass gives what two estimates give.
func FuzzEstimateSpan(f *testing.F) {
	f.Add(`{"type":"tool_result","tool_use_id":"t","content":"     1→x\n"}`, 48, 62)
	f.Add("", 0, 0)
	f.Add("héllo wörld", 1, 7)
	f.Fuzz(func(t *testing.T, s string, i, j int) {
		if i < 0 || j < i || j > len(s) {
			return
		}
		whole, part := EstimateSpan(s, i, j)
		assert.Equal(t, Estimate(s), whole)
		assert.Equal(t, Estimate(s[i:j]), part)
	})
}
