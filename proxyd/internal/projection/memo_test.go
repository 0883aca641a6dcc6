package projection

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The memo counts its states by first message, so a cold request (whose
// first message no state starts with) starts parsing before hashing the
// rest; evicted states stop counting.
func TestMemoHolds(t *testing.T) {
	m := newMemo(2)
	a, b := prefixHash{1}, prefixHash{2}
	assert.False(t, m.holds("c", a))
	m.put("c", a, prefixHash{10}, &fold{})
	m.put("c", a, prefixHash{11}, &fold{})
	assert.True(t, m.holds("c", a))
	assert.False(t, m.holds("d", a), "another configuration")
	m.put("c", b, prefixHash{20}, &fold{})
	assert.True(t, m.holds("c", a), "one of a's two states is left")
	m.put("c", b, prefixHash{21}, &fold{})
	assert.False(t, m.holds("c", a), "both of a's states evicted")
	assert.True(t, m.holds("c", b))
	assert.Len(t, m.firsts, 1)
}
