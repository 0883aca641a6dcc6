package projection

import (
	"bytes"
	"encoding/json"
	"testing"
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
