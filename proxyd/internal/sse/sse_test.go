package sse

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type got struct{ name, data string }

func parseAll(chunks ...[]byte) ([]got, int) {
	var out []got
	p := &Parser{OnEvent: func(e Event) { out = append(out, got{e.Name, string(e.Data)}) }}
	for _, c := range chunks {
		_, _ = p.Write(c)
	}
	return out, p.Close()
}

func TestParser(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"basic", "event: ping\ndata: {\"type\":\"ping\"}\n\n", []got{{"ping", `{"type":"ping"}`}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n", []got{{"a", "1"}, {"b", "2"}}},
		{"cr", "event: a\rdata: 1\r\r", []got{{"a", "1"}}},
		{"multi data", "data: x\ndata: y\n\n", []got{{"message", "x\ny"}}},
		{"comment and unknown field", ": hi\nid: 3\nretry: 9\nevent: e\ndata:z\n\n", []got{{"e", "z"}}},
		{"no data no dispatch", "event: a\n\ndata: b\n\n", []got{{"message", "b"}}},
		{"incomplete tail dropped", "event: a\ndata: 1\n\nevent: b\ndata: 2\n", []got{{"a", "1"}}},
		{"field without colon", "data\n\n", []got{{"message", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole, _ := parseAll([]byte(tt.in))
			assert.Equal(t, tt.want, whole)
			// Byte-at-a-time gives the same events (CRLF split across writes).
			var chunks [][]byte
			for i := range len(tt.in) {
				chunks = append(chunks, []byte{tt.in[i]})
			}
			split, _ := parseAll(chunks...)
			assert.Equal(t, tt.want, split)
		})
	}
}

func TestParserOverlongLine(t *testing.T) {
	long := bytes.Repeat([]byte("a"), MaxLine+10)
	in := append(append([]byte("data: "), long...), "\n\ndata: ok\n\n"...)
	out, dropped := parseAll(in[:100], in[100:])
	require.Equal(t, []got{{"message", "ok"}}, out)
	assert.Equal(t, 1, dropped)
}

func FuzzParser(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"), 3)
	f.Add([]byte("data: a\r\n\r\ndata: b\r\r"), 1)
	f.Add([]byte(":\n\n\r\n\revent\ndata"), 7)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		whole, _ := parseAll(in)
		if split <= 0 || split > len(in) {
			split = len(in) / 2
		}
		parts, _ := parseAll(in[:split], in[split:])
		// Splitting the stream anywhere never changes the events.
		require.Equal(t, whole, parts)
		for _, e := range whole {
			require.NotEmpty(t, e.name)
			require.LessOrEqual(t, len(e.data), MaxLine)
		}
	})
}
