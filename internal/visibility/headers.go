package visibility

import "strings"

// Header is one line of ANTHROPIC_CUSTOM_HEADERS.
type Header struct{ Name, Value string }

// CustomHeaders parses ANTHROPIC_CUSTOM_HEADERS as Claude Code reads it: one
// "Name: value" per line, both trimmed; lines without a colon or a name are
// skipped. (The no-reread hook reads it without net/http, see package remote.)
func CustomHeaders(v string) []Header {
	var out []Header
	for _, line := range strings.Split(v, "\n") {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			continue
		}
		out = append(out, Header{name, strings.TrimSpace(value)})
	}
	return out
}

// HasHeader reports whether headers name the header name (in any case).
func HasHeader(headers []Header, name string) bool {
	for _, h := range headers {
		if strings.EqualFold(h.Name, name) && h.Value != "" {
			return true
		}
	}
	return false
}
