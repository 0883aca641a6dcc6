package fakeapi

import (
	"crypto/sha256"
	"sync"
	"time"
)

// lookback is how many block positions a breakpoint searches backwards
// (including itself) for an earlier cache entry.
const lookback = 20

var ttlDurations = map[string]time.Duration{"5m": 5 * time.Minute, "1h": time.Hour}

// Usage is the token usage the fake reported for a messages request, the way
// the real API reports it: InputTokens counts only the tokens after the last
// cache hit or write; the request's total input is InputTokens +
// CacheCreationInputTokens + CacheReadInputTokens, and
// CacheCreationInputTokens = Ephemeral5m + Ephemeral1h.
type Usage struct {
	InputTokens, CacheCreationInputTokens, CacheReadInputTokens, OutputTokens,
	Ephemeral5m, Ephemeral1h int64
}

// TotalInput returns InputTokens + CacheCreationInputTokens + CacheReadInputTokens.
func (u Usage) TotalInput() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// CacheStats are totals over every messages request the fake answered with
// usage (rejected and faulted requests excluded).
type CacheStats struct {
	Requests    int   `json:"requests"`
	Input       int64 `json:"input_tokens"`
	CacheWrite  int64 `json:"cache_creation_input_tokens"`
	CacheRead   int64 `json:"cache_read_input_tokens"`
	Output      int64 `json:"output_tokens"`
	Write5m     int64 `json:"ephemeral_5m_input_tokens"`
	Write1h     int64 `json:"ephemeral_1h_input_tokens"`
	Entries     int   `json:"entries"`
	Hits        int   `json:"hits"`
	CacheMisses int   `json:"misses"`
}

// HitRatio is CacheRead / (CacheRead + CacheWrite + Input), 0 with no input.
func (c CacheStats) HitRatio() float64 {
	total := c.CacheRead + c.CacheWrite + c.Input
	if total == 0 {
		return 0
	}
	return float64(c.CacheRead) / float64(total)
}

// BilledEquivalent is input weighted by price: 1× input, 1.25× 5-minute
// writes, 2× 1-hour writes, 0.1× reads.
func (c CacheStats) BilledEquivalent() float64 {
	return float64(c.Input) + 1.25*float64(c.Write5m) + 2*float64(c.Write1h) + 0.1*float64(c.CacheRead)
}

type cacheEntry struct {
	expires time.Time
	ttl     time.Duration
}

// cacheSim simulates the prompt cache. Entries are keyed by model and the
// cumulative hash of the prefix up to a breakpoint.
type cacheSim struct {
	mu        sync.Mutex
	minTokens int64
	entries   map[string]*cacheEntry
	stats     CacheStats
}

func newCacheSim(minTokens int) *cacheSim {
	return &cacheSim{minTokens: int64(minTokens), entries: map[string]*cacheEntry{}}
}

// position is one prefix block with its cumulative hash and token count.
type position struct {
	key    string // model + cumulative hash through this block
	cum    int64  // tokens from the start through this block
	cc     *cacheControl
	isMark bool
}

// positions hashes the prefix. Message boundaries and roles enter the hash so
// moving a block between messages changes the key.
func positions(p *parsedRequest) []position {
	h := sha256.New()
	h.Write([]byte("model\x00" + p.Model + "\x00"))
	var out []position
	var cum int64
	add := func(b *block) {
		h.Write(b.canon)
		h.Write([]byte{0})
		cum += Tokens(b.canon)
		out = append(out, position{key: p.Model + "\x00" + string(h.Sum(nil)), cum: cum, cc: b.cc, isMark: b.cc != nil})
	}
	for _, b := range p.Tools {
		add(b)
	}
	h.Write([]byte("\x00system\x00"))
	for _, b := range p.System {
		add(b)
	}
	for _, m := range p.Messages {
		h.Write([]byte("\x00" + m.Role + "\x00"))
		for _, b := range m.Blocks {
			add(b)
		}
	}
	if p.topCC != nil && len(out) > 0 && !out[len(out)-1].isMark {
		last := &out[len(out)-1]
		last.cc, last.isMark = p.topCC, true
	}
	return out
}

// account computes the usage of one request at time now and updates the
// cache: reads first (entries written by earlier requests only), then writes
// at breakpoints past the read point.
func (c *cacheSim) account(p *parsedRequest, now time.Time) Usage {
	pos := positions(p)
	var total int64
	if len(pos) > 0 {
		total = pos[len(pos)-1].cum
	}
	c.mu.Lock()
	defer c.mu.Unlock()

	live := func(key string) *cacheEntry {
		e := c.entries[key]
		if e == nil || !now.Before(e.expires) {
			return nil
		}
		return e
	}
	readAt := -1
	for i, ps := range pos {
		if !ps.isMark {
			continue
		}
		for j := i; j >= 0 && j > i-lookback; j-- {
			if live(pos[j].key) != nil {
				if j > readAt {
					readAt = j
				}
				break
			}
		}
	}
	var u Usage
	if readAt >= 0 {
		u.CacheReadInputTokens = pos[readAt].cum
		e := c.entries[pos[readAt].key]
		e.expires = now.Add(e.ttl)
		c.stats.Hits++
	} else {
		c.stats.CacheMisses++
	}
	boundary := int64(0)
	if readAt >= 0 {
		boundary = pos[readAt].cum
	}
	for i, ps := range pos {
		if !ps.isMark || ps.cum < c.minTokens {
			continue
		}
		ttl := ttlDurations[ps.cc.ttlOrDefault()]
		if e := live(ps.key); e != nil {
			// Already cached (inside the read prefix): refresh, no charge.
			if ttl > e.ttl {
				e.ttl = ttl
			}
			e.expires = now.Add(e.ttl)
			continue
		}
		c.entries[ps.key] = &cacheEntry{expires: now.Add(ttl), ttl: ttl}
		if i <= readAt {
			continue // inside the read prefix: recorded, not billed
		}
		written := ps.cum - boundary
		boundary = ps.cum
		if ttl == time.Hour {
			u.Ephemeral1h += written
		} else {
			u.Ephemeral5m += written
		}
	}
	u.CacheCreationInputTokens = u.Ephemeral5m + u.Ephemeral1h
	u.InputTokens = total - u.CacheReadInputTokens - u.CacheCreationInputTokens
	return u
}

// record adds a reported usage to the totals.
func (c *cacheSim) record(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Requests++
	c.stats.Input += u.InputTokens
	c.stats.CacheWrite += u.CacheCreationInputTokens
	c.stats.CacheRead += u.CacheReadInputTokens
	c.stats.Output += u.OutputTokens
	c.stats.Write5m += u.Ephemeral5m
	c.stats.Write1h += u.Ephemeral1h
}

func (c *cacheSim) snapshot() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.entries)
	return s
}
