package reads

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/governor"
)

// fullState sets every field of governor.State.
func fullState() governor.State {
	return governor.State{
		Runs:    map[string]governor.Seen{"a1b2": {Output: "o1", Count: 3}, "c3": {Output: "", Count: 1}},
		Tries:   map[string]int{"a1b2": 2},
		Fails:   map[string]governor.Seen{"f": {Output: "x\"y\\z\n\x01é", Count: 2}},
		Reads:   map[string]governor.Seen{"p:r": {Output: "h", Count: 1}},
		Swaps:   []governor.Swap{{File: "/w/a.go", Old: "x", New: "y"}, {File: "/w/b.go", New: "z"}},
		Reverts: map[string]int{"k": 1},
		Touched: map[string]bool{"t1": true, "t2": true},
		Quiet:   7,
		Base:    123456,
		Stalled: true,
		Held:    &governor.Fire{Rule: governor.Repeat, Count: 4, Subject: "go test ./...", Tokens: 9},
	}
}

// Files written by either encoding read the same in the other.
func TestGovernorCodecRoundTrip(t *testing.T) {
	for _, st := range []governor.State{{}, fullState()} {
		std, err := json.Marshal(&st)
		require.NoError(t, err)
		got, err := decodeState(std)
		require.NoError(t, err)
		assert.Equal(t, st, got, "encoding/json's file read by the codec")

		ours, err := encodeState(&st)
		require.NoError(t, err)
		var back governor.State
		require.NoError(t, json.Unmarshal(ours, &back), "%s", ours)
		assert.Equal(t, st, back, "the codec's file read by encoding/json")
	}
}

// TestGovernorCodecKnowsEveryField: a field added to governor.State must be
// added to the codec, or the hook would drop it on every write.
func TestGovernorCodecKnowsEveryField(t *testing.T) {
	st := fullState()
	v := reflect.ValueOf(st)
	for i := range v.NumField() {
		assert.False(t, v.Field(i).IsZero(), "fullState leaves %s unset: set it, and teach govcodec.go", v.Type().Field(i).Name)
	}
	ours, err := encodeState(&st)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(ours, &keys))
	assert.Len(t, keys, v.NumField(), "every field is written")
}

func TestGovernorCodecRejects(t *testing.T) {
	for _, s := range []string{``, `not json`, `[1]`, `"x"`, `{"runs":`, `{"swaps":{"file":1}}`} {
		_, err := decodeState([]byte(s))
		assert.Error(t, err, s)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\x00\x1f\t\n\r", "é😀", "bad\xffutf8\xc3", "\u2028"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		var a, b string
		require.NoError(t, json.Unmarshal(want, &a))
		require.NoError(t, json.Unmarshal(appendString(nil, s), &b), "%q", appendString(nil, s))
		assert.Equal(t, a, b, "%q", s)
	}
}

func FuzzGovernorCodec(f *testing.F) {
	full := fullState()
	seed, _ := json.Marshal(&full)
	f.Add(seed, "k", "out", 3, int64(5))
	f.Add([]byte(`{}`), "", "", 0, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, key, out string, n int, base int64) {
		// Any bytes: no panic, and what decodes encodes as valid JSON.
		if st, err := decodeState(data); err == nil {
			enc, err := encodeState(&st)
			require.NoError(t, err)
			require.True(t, json.Valid(enc), "%s", enc)
		}
		if !utf8.ValidString(key) || !utf8.ValidString(out) || strings.ContainsRune(key+out, utf8.RuneError) {
			return
		}
		st := governor.State{
			Runs:    map[string]governor.Seen{key: {Output: out, Count: n}},
			Tries:   map[string]int{key: n},
			Touched: map[string]bool{key: true, out: false},
			Base:    base,
			Swaps:   []governor.Swap{{File: key, Old: out, New: key}},
		}
		std, err := json.Marshal(&st)
		require.NoError(t, err)
		got, err := decodeState(std)
		require.NoError(t, err)
		require.Equal(t, st, got)
		ours, err := encodeState(&st)
		require.NoError(t, err)
		var back governor.State
		require.NoError(t, json.Unmarshal(ours, &back), "%s", ours)
		require.Equal(t, st, back)
	})
}
