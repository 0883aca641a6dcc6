package shellread

import "strings"

// tokKind tells words from operators.
type tokKind int

const (
	tWord tokKind = iota
	tOp
)

// token is one lexical unit of a command line. A word's text has its quotes
// removed; dynamic is set when it contains an unquoted expansion ($var,
// $(…), `…`) or glob character, so its value is not known statically.
type token struct {
	kind    tokKind
	text    string
	dynamic bool
	fd      string // for a redirect operator, the file descriptor written before it ("2" in 2>)
}

// lex splits a command line into words and operators the way a POSIX shell
// would, as far as deciding what is read and what is written requires:
// quotes, backslashes, command substitutions, comments, and here-documents
// (whose bodies are dropped: they are data, never commands).
func lex(s string) []token {
	var (
		toks    []token
		heredoc []heredocSpec
		i       int
	)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			toks = append(toks, token{kind: tOp, text: "\n"})
			i++
			if len(heredoc) > 0 {
				i = skipHeredocs(s, i, heredoc)
				heredoc = heredoc[:0]
			}
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' && (i == 0 || isSpace(s[i-1]) || s[i-1] == ';' || s[i-1] == '\n'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case isOpStart(c):
			op, n := readOp(s[i:])
			toks = append(toks, token{kind: tOp, text: op})
			i += n
			if op == "<<" || op == "<<-" {
				w, n := readWord(s[i:])
				i += n
				if w.text != "" {
					heredoc = append(heredoc, heredocSpec{delim: w.text, strip: op == "<<-"})
					toks = append(toks, w)
				}
			}
		default:
			w, n := readWord(s[i:])
			i += n
			if n == 0 {
				i++ // cannot happen for a non-operator byte; never loop
				continue
			}
			// "2>" and friends: a word of digits glued to a redirection.
			if i < len(s) && (s[i] == '>' || s[i] == '<') && isDigits(w.text) && !w.dynamic {
				op, n := readOp(s[i:])
				toks = append(toks, token{kind: tOp, text: op, fd: w.text})
				i += n
				continue
			}
			toks = append(toks, w)
		}
	}
	return toks
}

type heredocSpec struct {
	delim string
	strip bool
}

// skipHeredocs skips the bodies of pending here-documents starting at i (the
// start of the line after the operator) and returns the index after them.
func skipHeredocs(s string, i int, specs []heredocSpec) int {
	for _, h := range specs {
		for i < len(s) {
			end := strings.IndexByte(s[i:], '\n')
			line := s[i:]
			next := len(s)
			if end >= 0 {
				line = s[i : i+end]
				next = i + end + 1
			}
			i = next
			if h.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				break
			}
		}
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isOpStart(c byte) bool {
	switch c {
	case '|', '&', ';', '<', '>', '(', ')':
		return true
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ops lists operators longest first.
var ops = []string{
	"&>>", "<<<", "<<-", ">>", "<<", "&&", "||", "|&", ";;", "&>", ">|", ">&", "<&", "<>",
	"|", "&", ";", "<", ">", "(", ")",
}

func readOp(s string) (string, int) {
	for _, op := range ops {
		if strings.HasPrefix(s, op) {
			return op, len(op)
		}
	}
	return s[:1], 1
}

// readWord reads one shell word starting at s[0] and returns it with the
// number of bytes consumed.
func readWord(s string) (token, int) {
	// Skip leading blanks (after an operator such as "<<").
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	var b strings.Builder
	tok := token{kind: tWord}
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case isSpace(c) || isOpStart(c):
			if i == start {
				return tok, i
			}
			tok.text = b.String()
			return tok, i
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					b.WriteByte(s[i+1])
				}
				i += 2
			} else {
				i++
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
			} else {
				b.WriteString(s[i+1 : i+1+end])
				i += end + 2
			}
		case c == '"':
			i++
			for i < len(s) && s[i] != '"' {
				switch {
				case s[i] == '\\' && i+1 < len(s):
					b.WriteByte(s[i+1])
					i += 2
				case s[i] == '$' || s[i] == '`':
					tok.dynamic = true
					n := skipExpansion(s[i:])
					b.WriteString(s[i : i+n])
					i += n
				default:
					b.WriteByte(s[i])
					i++
				}
			}
			i++ // closing quote
		case c == '$' || c == '`':
			tok.dynamic = true
			n := skipExpansion(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		case c == '*' || c == '?' || c == '[' || c == '~' && i == start:
			tok.dynamic = true
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	tok.text = b.String()
	return tok, i
}

// skipExpansion returns the length of the expansion starting at s[0] ('$' or
// '`'): $(…) and `…` balanced and quote-aware, ${…}, or $name.
func skipExpansion(s string) int {
	if s[0] == '`' {
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return len(s)
		}
		return end + 2
	}
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '(', '{':
		open, closeC := s[1], byte(')')
		if open == '{' {
			closeC = '}'
		}
		depth := 0
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\'':
				if open == '(' {
					if end := strings.IndexByte(s[i+1:], '\''); end >= 0 {
						i += end + 1
					}
				}
			case '\\':
				i++
			case open:
				depth++
			case closeC:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	default:
		i := 1
		for i < len(s) && (isNameByte(s[i]) || (i == 1 && strings.IndexByte("?#@*!$-0123456789", s[i]) >= 0)) {
			i++
			if i == 2 && !isNameByte(s[1]) {
				break
			}
		}
		return i
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
