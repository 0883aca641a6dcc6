// Package cachesim simulates Anthropic's prompt cache over a sequence of
// Messages requests, following the documented rules: the cached prefix runs
// tools → system → messages up to a block carrying cache_control; writes
// happen only at breakpoints (at most four); a breakpoint's read looks back
// at most 20 blocks (itself included) for an earlier write; a prefix below
// the model's minimum length is never cached; entries live for their time
// to live (5 minutes or 1 hour) from the start of the request that wrote or
// last read them; tokens after the last breakpoint are uncached input.
package cachesim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Lookback is how many block positions a breakpoint's read examines.
const Lookback = 20

// Usage is what the simulated upstream bills for one request.
type Usage struct {
	Input   int64 `json:"input_tokens"` // uncached input after the last breakpoint (or all of it)
	Write5m int64 `json:"cache_write_5m_tokens"`
	Write1h int64 `json:"cache_write_1h_tokens"`
	Read    int64 `json:"cache_read_tokens"`
}

// Total is every input token of the request.
func (u Usage) Total() int64 { return u.Input + u.Write5m + u.Write1h + u.Read }

// BilledEquivalent weighs the usage at list-price multipliers: 1× input,
// 1.25× 5-minute writes, 2× 1-hour writes, 0.1× reads.
func (u Usage) BilledEquivalent() float64 {
	return float64(u.Input) + 1.25*float64(u.Write5m) + 2*float64(u.Write1h) + 0.1*float64(u.Read)
}

// Add sums usage.
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Write5m += o.Write5m
	u.Write1h += o.Write1h
	u.Read += o.Read
}

// Sim is one simulated cache (one organisation, one model family).
type Sim struct {
	// MinTokens is the minimum cacheable prefix; 0 means 1024.
	MinTokens int
	// Tokens estimates a block's tokens.
	Tokens func([]byte) int
	// Written, when set, is called with every block (canonical JSON) a
	// request bills as a cache write, in order (tests of what is written).
	Written func(block []byte)
	entries map[[32]byte]entry // prefix hash → cached entry
}

type entry struct {
	exp time.Time // zero: never expires
	ttl time.Duration
}

// New returns an empty cache.
func New(minTokens int, tok func([]byte) int) *Sim {
	if minTokens <= 0 {
		minTokens = 1024
	}
	return &Sim{MinTokens: minTokens, Tokens: tok, entries: map[[32]byte]entry{}}
}

type position struct {
	raw   []byte // the canonical block, kept only for Written
	hash  [32]byte
	cum   int64 // tokens through this block
	bp    bool
	ttl   time.Duration
	ttl1h bool
}

// Request bills one request body sent at time at (zero: entries never
// expire).
func (s *Sim) Request(body []byte, at time.Time) (Usage, error) {
	if !gjson.ValidBytes(body) {
		return Usage{}, fmt.Errorf("body is not valid JSON")
	}
	r := gjson.ParseBytes(body)
	h := sha256.Sum256([]byte("model:" + r.Get("model").String()))
	var pos []position
	var cum int64
	add := func(kind string, raw []byte) {
		cc := gjson.GetBytes(raw, "cache_control")
		canon := Canonical(raw)
		hh := sha256.New()
		hh.Write(h[:])
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(kind)))
		hh.Write(n[:])
		hh.Write([]byte(kind))
		hh.Write(canon)
		copy(h[:], hh.Sum(nil))
		t := int64(max(1, s.Tokens(canon)))
		cum += t
		p := position{hash: h, cum: cum}
		if s.Written != nil {
			p.raw = canon
		}
		if cc.Exists() {
			p.bp = true
			p.ttl = 5 * time.Minute
			if cc.Get("ttl").String() == "1h" {
				p.ttl, p.ttl1h = time.Hour, true
			}
		}
		pos = append(pos, p)
	}
	r.Get("tools").ForEach(func(_, t gjson.Result) bool { add("tool", []byte(t.Raw)); return true })
	if sys := r.Get("system"); sys.Type == gjson.String {
		add("system", textJSON(sys.Str))
	} else {
		sys.ForEach(func(_, b gjson.Result) bool { add("system", []byte(b.Raw)); return true })
	}
	r.Get("messages").ForEach(func(_, m gjson.Result) bool {
		role := m.Get("role").String()
		c := m.Get("content")
		if c.Type == gjson.String {
			add("msg:"+role, textJSON(c.Str))
			return true
		}
		first := true
		c.ForEach(func(_, b gjson.Result) bool {
			kind := "block"
			if first {
				kind = "msg:" + role // a message boundary is part of the prefix
				first = false
			}
			add(kind, []byte(b.Raw))
			return true
		})
		return true
	})
	if len(pos) == 0 {
		return Usage{}, nil
	}
	if r.Get("cache_control").Exists() {
		// Automatic caching: a breakpoint on the last block.
		l := &pos[len(pos)-1]
		l.bp, l.ttl = true, 5*time.Minute
		if r.Get("cache_control.ttl").String() == "1h" {
			l.ttl, l.ttl1h = time.Hour, true
		}
	}
	live := func(hash [32]byte) bool {
		e, ok := s.entries[hash]
		return ok && (e.exp.IsZero() || at.IsZero() || at.Before(e.exp))
	}
	readEnd := -1
	for i, p := range pos {
		if !p.bp {
			continue
		}
		for q := i; q >= 0 && q > i-Lookback; q-- {
			if live(pos[q].hash) {
				readEnd = max(readEnd, q)
				break
			}
		}
	}
	total := pos[len(pos)-1].cum
	var u Usage
	if readEnd >= 0 {
		u.Read = pos[readEnd].cum
	}
	// Writes: every breakpoint past the read point that reaches the
	// minimum length bills the tokens since the previous write (or the
	// read point) at its own TTL; breakpoints already cached are refreshed.
	boundary, from := u.Read, readEnd+1
	for i, p := range pos {
		if !p.bp || p.cum < int64(s.MinTokens) {
			continue
		}
		if live(p.hash) {
			ttl := max(p.ttl, s.entries[p.hash].ttl)
			s.entries[p.hash] = entry{expiry(at, ttl), ttl}
			continue
		}
		s.entries[p.hash] = entry{expiry(at, p.ttl), p.ttl}
		if i <= readEnd {
			continue
		}
		if p.ttl1h {
			u.Write1h += p.cum - boundary
		} else {
			u.Write5m += p.cum - boundary
		}
		for _, w := range pos[from : i+1] {
			if s.Written != nil {
				s.Written(w.raw)
			}
		}
		boundary, from = p.cum, i+1
	}
	if readEnd >= 0 {
		e := s.entries[pos[readEnd].hash]
		s.entries[pos[readEnd].hash] = entry{expiry(at, e.ttl), e.ttl}
	}
	u.Input = total - u.Read - u.Write5m - u.Write1h
	return u, nil
}

func expiry(at time.Time, ttl time.Duration) time.Time {
	if at.IsZero() {
		return time.Time{}
	}
	return at.Add(ttl)
}

// MinTokensFor is the minimum cacheable prompt length of a model
// (platform facts §9.4); unknown models get 1024.
func MinTokensFor(model string) int {
	switch {
	case containsAny(model, "opus-5", "fable-5", "mythos-5"):
		return 512
	case containsAny(model, "opus-4-6", "opus-4-5", "haiku-4-5"):
		return 4096
	case containsAny(model, "opus-4-7", "haiku-3-5", "mythos-preview"):
		return 2048
	default:
		return 1024
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Canonical is a block's form for hashing and counting: its JSON object
// with cache_control removed, re-encoded with sorted keys (encoding/json's
// rules), so moving a breakpoint changes neither hash nor count. It is the
// same canonical form e2e/fakeapi uses, so both simulators bill alike.
func Canonical(raw []byte) []byte {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return raw
	}
	delete(obj, "cache_control")
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}

// textJSON is a string content's canonical block: it renders like one text
// block.
func textJSON(s string) []byte {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return b
}
