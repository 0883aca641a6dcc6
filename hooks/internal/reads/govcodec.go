package reads

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/governor"
)

// The governor's state is JSON (governor.State's own encoding), but it is
// decoded and encoded here by hand: the post hook does both on every call,
// and with its maps full (hundreds of reads, files and commands; 50 KB)
// encoding/json's reflection took about 1.4 ms a call, where this takes a
// tenth of it. The two encodings read each other's output
// (FuzzGovernorCodec); a field this file does not know fails
// TestGovernorCodecKnowsEveryField.

// errGovernorJSON is a governor file that is not a JSON object.
var errGovernorJSON = errors.New("not a JSON object")

// decodeState reads a governor state. Values of the wrong type read as
// their zero value, as a state that does not decode at all counts as a
// fresh one.
func decodeState(data []byte) (governor.State, error) {
	var st governor.State
	if !gjson.ValidBytes(data) {
		return st, errGovernorJSON
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return st, errGovernorJSON
	}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "runs":
			st.Runs = seenMap(v)
		case "fails":
			st.Fails = seenMap(v)
		case "reads":
			st.Reads = seenMap(v)
		case "tries":
			st.Tries = intMap(v)
		case "reverts":
			st.Reverts = intMap(v)
		case "touched":
			st.Touched = make(map[string]bool, len(v.Raw)/entryBytes)
			v.ForEach(func(k, v gjson.Result) bool {
				st.Touched[k.Str] = v.Bool()
				return true
			})
		case "quiet":
			st.Quiet = int(v.Int())
		case "base":
			st.Base = v.Int()
		case "stalled":
			st.Stalled = v.Bool()
		case "swaps":
			err = json.Unmarshal([]byte(v.Raw), &st.Swaps)
		case "held":
			err = json.Unmarshal([]byte(v.Raw), &st.Held)
		}
		return err == nil
	})
	if err != nil {
		return governor.State{}, err
	}
	return st, nil
}

// entryBytes is about the smallest encoded map entry: sizing a map by it
// saves its growth (rehashing was a twentieth of a post hook's time).
const entryBytes = 24

func seenMap(v gjson.Result) map[string]governor.Seen {
	m := make(map[string]governor.Seen, len(v.Raw)/(2*entryBytes))
	v.ForEach(func(k, v gjson.Result) bool {
		var s governor.Seen
		v.ForEach(func(f, v gjson.Result) bool {
			switch f.Str {
			case "output":
				s.Output = v.String()
			case "count":
				s.Count = int(v.Int())
			}
			return true
		})
		m[k.Str] = s
		return true
	})
	return m
}

func intMap(v gjson.Result) map[string]int {
	m := make(map[string]int, len(v.Raw)/entryBytes)
	v.ForEach(func(k, v gjson.Result) bool {
		m[k.Str] = int(v.Int())
		return true
	})
	return m
}

// encodeState writes a governor state as encoding/json would (the same
// names, empty fields left out), in map iteration order.
func encodeState(st *governor.State) ([]byte, error) {
	b := make([]byte, 0, 4096)
	b = append(b, '{')
	field := func(name string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, name)
		b = append(b, ':')
	}
	seen := func(b []byte, s governor.Seen) []byte {
		b = append(b, `{"output":`...)
		b = appendString(b, s.Output)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(s.Count), 10)
		return append(b, '}')
	}
	num := func(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
	if len(st.Runs) > 0 {
		field("runs")
		b = appendObject(b, st.Runs, seen)
	}
	if len(st.Tries) > 0 {
		field("tries")
		b = appendObject(b, st.Tries, num)
	}
	if len(st.Fails) > 0 {
		field("fails")
		b = appendObject(b, st.Fails, seen)
	}
	if len(st.Reads) > 0 {
		field("reads")
		b = appendObject(b, st.Reads, seen)
	}
	if len(st.Swaps) > 0 {
		raw, err := json.Marshal(st.Swaps)
		if err != nil {
			return nil, err
		}
		field("swaps")
		b = append(b, raw...)
	}
	if len(st.Reverts) > 0 {
		field("reverts")
		b = appendObject(b, st.Reverts, num)
	}
	if len(st.Touched) > 0 {
		field("touched")
		b = appendObject(b, st.Touched, strconv.AppendBool)
	}
	if st.Quiet != 0 {
		field("quiet")
		b = strconv.AppendInt(b, int64(st.Quiet), 10)
	}
	if st.Base != 0 {
		field("base")
		b = strconv.AppendInt(b, st.Base, 10)
	}
	if st.Stalled {
		field("stalled")
		b = append(b, "true"...)
	}
	if st.Held != nil {
		raw, err := json.Marshal(st.Held)
		if err != nil {
			return nil, err
		}
		field("held")
		b = append(b, raw...)
	}
	return append(b, '}'), nil
}

// appendObject appends m as a JSON object, each value written by val.
func appendObject[V any](b []byte, m map[string]V, val func([]byte, V) []byte) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = val(b, v)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD,
// as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
