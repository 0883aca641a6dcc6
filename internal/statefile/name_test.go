package statefile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "_"},
		{"258c7280-ae70-4798-800f-63464d01a85d", "258c7280-ae70-4798-800f-63464d01a85d"},
		{"agent_a881341", "agent_a881341"},
		{"v1.2", "v1.2"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, SafeName(tt.in), tt.in)
	}
	// Anything unsafe is replaced and disambiguated by a hash.
	for _, in := range []string{"../etc/passwd", "a/b", ".hidden", "x y", strings.Repeat("a", 200)} {
		got := SafeName(in)
		assert.NotContains(t, got, "/", in)
		assert.False(t, strings.HasPrefix(got, "."), in)
		assert.LessOrEqual(t, len(got), 96, in)
	}
	assert.NotEqual(t, SafeName("a/b"), SafeName("a_b"), "distinct ids never share a name")
	assert.NotEqual(t, SafeName("a/b"), SafeName("a?b"))
}
