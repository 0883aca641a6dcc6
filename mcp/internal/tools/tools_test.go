package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	short := "a\nb\n"
	assert.Equal(t, short, bound(short))

	line := strings.Repeat("x", 99) + "\n"
	long := strings.Repeat(line, 1000) // 100,000 bytes
	got := bound(long)
	assert.Less(t, len(got), MaxResultChars+200)
	body, note, ok := strings.Cut(got, "… truncated: ")
	assert.True(t, ok)
	assert.Equal(t, 400, strings.Count(body, "\n"), "cut at a line boundary")
	assert.Contains(t, note, "600 more lines (60000 bytes) not shown")

	oneLine := strings.Repeat("é", MaxResultChars) // no newline, multibyte
	got = bound(oneLine)
	assert.True(t, strings.HasPrefix(got, strings.Repeat("é", MaxResultChars/2)))
	assert.Contains(t, got, "… truncated")
}
