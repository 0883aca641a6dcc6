package projection

import "sync"

// memoSize bounds the memo: folded states of the most recent requests, one
// per active conversation context in practice.
const memoSize = 32

// memo maps a configuration and a message-prefix hash to the fold state
// after that prefix. States are never mutated once stored; callers clone.
type memo struct {
	mu    sync.Mutex
	max   int
	m     map[memoKey]memoEntry
	order []memoKey // insertion order, oldest first
	// firsts counts the states per configuration and hash of their first
	// message (prefix hashes are chained, so a state can only match a
	// request that starts with the same message).
	firsts map[memoKey]int
}

type memoKey struct {
	cfg    string
	prefix prefixHash
}

type memoEntry struct {
	f     *fold
	first prefixHash
}

func newMemo(max int) *memo {
	return &memo{max: max, m: map[memoKey]memoEntry{}, firsts: map[memoKey]int{}}
}

func (m *memo) get(cfg string, prefix prefixHash) *fold {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[memoKey{cfg, prefix}].f
}

// holds reports whether any state was memoised for a request whose first
// message hashes to first.
func (m *memo) holds(cfg string, first prefixHash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.firsts[memoKey{cfg, first}] > 0
}

func (m *memo) put(cfg string, first, prefix prefixHash, f *fold) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoKey{cfg, prefix}
	if _, ok := m.m[k]; ok {
		return
	}
	m.m[k] = memoEntry{f, first}
	m.firsts[memoKey{cfg, first}]++
	m.order = append(m.order, k)
	for len(m.order) > m.max {
		old := m.order[0]
		fk := memoKey{old.cfg, m.m[old].first}
		if m.firsts[fk]--; m.firsts[fk] == 0 {
			delete(m.firsts, fk)
		}
		delete(m.m, old)
		m.order = m.order[1:]
	}
}
