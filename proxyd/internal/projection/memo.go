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
	m     map[memoKey]*fold
	order []memoKey // insertion order, oldest first
}

type memoKey struct {
	cfg    string
	prefix prefixHash
}

func newMemo(max int) *memo { return &memo{max: max, m: map[memoKey]*fold{}} }

func (m *memo) get(cfg string, prefix prefixHash) *fold {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[memoKey{cfg, prefix}]
}

func (m *memo) put(cfg string, prefix prefixHash, f *fold) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoKey{cfg, prefix}
	if _, ok := m.m[k]; ok {
		return
	}
	m.m[k] = f
	m.order = append(m.order, k)
	for len(m.order) > m.max {
		delete(m.m, m.order[0])
		m.order = m.order[1:]
	}
}
