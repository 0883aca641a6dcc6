package shellread

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// inf stands for "to the end of the file" inside range arithmetic.
const inf = 1 << 40

// selection is what a filter stage keeps of its input stream: the lines at
// the given stream positions, the last tail lines, or everything.
type selection struct {
	all    bool
	ranges []Range // stream positions, End 0 = to the end
	tail   int
}

// statementReads returns the reads of a statement and whether the statement
// is nothing but a read whose output the model sees.
func statementReads(s statement, dir string) ([]Read, bool) {
	first := s.stages[0]
	if first.heredoc {
		return nil, false
	}
	name, args := command(first.words)
	view, files, ok := readStage(name, args)
	if !ok {
		return nil, false
	}
	for _, r := range first.redirects {
		if r.op == "<" && len(files) == 0 {
			files = append(files, r.target)
		}
	}
	if len(files) == 0 {
		return nil, false
	}
	for _, st := range s.stages {
		if hidesOutput(st) {
			return nil, false
		}
	}
	for _, st := range s.stages[1:] {
		if st.heredoc {
			return nil, false
		}
		sel, ok := filterStage(command(st.words))
		if !ok {
			return nil, false
		}
		if sel.all {
			continue
		}
		if len(files) > 1 {
			return nil, false // a narrowed concatenation: which file shows is unknown
		}
		if view, ok = compose(view, sel); !ok {
			return nil, false
		}
	}
	if len(view.Ranges) == 0 && view.Tail == 0 {
		return nil, false
	}
	var reads []Read
	for _, f := range files {
		p, ok := resolve(dir, f)
		if !ok || special(p) {
			return nil, false
		}
		reads = append(reads, Read{Path: p, View: view})
	}
	return reads, true
}

// hidesOutput reports a stage whose standard output goes to a file (or to
// nowhere), so the model does not see it; in an earlier stage it starves
// the pipe.
func hidesOutput(st stage) bool {
	for _, r := range st.redirects {
		switch r.op {
		case ">", ">>", ">|", "&>", "&>>":
			if r.fd == "" || r.fd == "1" || r.op == "&>" || r.op == "&>>" {
				return true
			}
		case ">&":
			if (r.fd == "" || r.fd == "1") && !isDigits(r.target.text) {
				return true
			}
		}
	}
	return false
}

// special paths are never recorded: devices, process files, pipes.
func special(p string) bool {
	for _, pre := range []string{"/dev/", "/proc/", "/sys/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return p == "-"
}

// operands splits arguments into flags (with the values of flags listed in
// takesValue) and operands. "--" ends flags.
func operands(args []token, takesValue map[string]bool) (flags []flag, ops []token) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.text == "--" && !a.dynamic {
			return flags, append(ops, args[i+1:]...)
		}
		if len(a.text) > 1 && a.text[0] == '-' {
			f := flag{name: a.text}
			if eq := strings.IndexByte(a.text, '='); eq > 0 && strings.HasPrefix(a.text, "--") {
				f.name, f.value, f.hasValue = a.text[:eq], a.text[eq+1:], true
			} else if takesValue[a.text] && i+1 < len(args) {
				f.value, f.hasValue = args[i+1].text, true
				i++
			} else if len(a.text) > 2 && a.text[1] != '-' && takesValue[a.text[:2]] {
				f.name, f.value, f.hasValue = a.text[:2], a.text[2:], true
			}
			flags = append(flags, f)
			continue
		}
		ops = append(ops, a)
	}
	return flags, ops
}

type flag struct {
	name, value string
	hasValue    bool
}

var (
	headValues = map[string]bool{"-n": true, "-c": true, "--lines": true, "--bytes": true}
	tailValues = map[string]bool{"-n": true, "-c": true, "--lines": true, "--bytes": true, "-s": true,
		"--sleep-interval": true, "--pid": true, "--max-unchanged-stats": true}
	nlValues = map[string]bool{"-b": true, "-d": true, "-f": true, "-h": true, "-i": true, "-l": true,
		"-n": true, "-s": true, "-v": true, "-w": true}
	batValues = map[string]bool{"-l": true, "--language": true, "-r": true, "--line-range": true,
		"-H": true, "--highlight-line": true, "--tabs": true, "--wrap": true, "--terminal-width": true,
		"--theme": true, "--style": true, "--color": true, "--paging": true, "-m": true,
		"--map-syntax": true, "--decorations": true, "--italic-text": true, "--file-name": true}
	sedValues = map[string]bool{"-e": true, "-f": true, "--expression": true, "--file": true, "-l": true}
	awkValues = map[string]bool{"-F": true, "-v": true, "-f": true, "--field-separator": true, "--assign": true}
	noValues  = map[string]bool{}
)

// readStage recognises a stage that prints (part of) files: it returns the
// view and the file operands.
func readStage(name string, args []token) (View, []token, bool) {
	switch name {
	case "cat", "tac", "less", "more", "most":
		_, ops := operands(args, noValues)
		return Whole(), withoutStdin(ops), true
	case "nl":
		_, ops := operands(args, nlValues)
		return Whole(), withoutStdin(ops), true
	case "bat", "batcat":
		flags, ops := operands(args, batValues)
		v := Whole()
		for _, f := range flags {
			if f.name == "-r" || f.name == "--line-range" {
				r, ok := batRange(f.value)
				if !ok {
					return View{}, nil, false
				}
				v = View{Ranges: []Range{r}}
			}
		}
		return v, withoutStdin(ops), true
	case "head", "tail", "sed", "awk", "gawk", "mawk", "nawk":
		sel, ops, ok := parseFilter(name, args)
		if !ok {
			return View{}, nil, false
		}
		v, ok := compose(Whole(), sel)
		return v, withoutStdin(ops), ok
	}
	return View{}, nil, false
}

func withoutStdin(ops []token) []token {
	out := ops[:0:0]
	for _, o := range ops {
		if o.text != "-" {
			out = append(out, o)
		}
	}
	return out
}

// filterStage recognises a downstream stage that narrows its input without
// changing it. It must read stdin (no file operands).
func filterStage(name string, args []token) (selection, bool) {
	switch name {
	case "cat", "nl", "less", "more", "most", "bat", "batcat":
		var values map[string]bool
		switch name {
		case "nl":
			values = nlValues
		case "bat", "batcat":
			values = batValues
		}
		flags, ops := operands(args, values)
		if len(withoutStdin(ops)) > 0 {
			return selection{}, false
		}
		for _, f := range flags {
			if f.name == "-r" || f.name == "--line-range" {
				r, ok := batRange(f.value)
				return selection{ranges: []Range{r}}, ok
			}
		}
		return selection{all: true}, true
	case "head", "tail", "sed", "awk", "gawk", "mawk", "nawk":
		sel, ops, ok := parseFilter(name, args)
		if !ok || len(withoutStdin(ops)) > 0 {
			return selection{}, false
		}
		return sel, true
	}
	return selection{}, false
}

// parseFilter parses head, tail, sed and awk invocations that select lines
// unchanged, returning the selection and the file operands.
func parseFilter(name string, args []token) (selection, []token, bool) {
	switch name {
	case "head":
		return parseHeadTail(args, false)
	case "tail":
		return parseHeadTail(args, true)
	case "sed":
		return parseSed(args)
	default:
		return parseAwk(args)
	}
}

func parseHeadTail(args []token, tail bool) (selection, []token, bool) {
	values := headValues
	if tail {
		values = tailValues
	}
	n, from := 10, 0
	// "-20" is an obsolete form of "-n 20".
	var rest []token
	for _, a := range args {
		if len(a.text) > 1 && a.text[0] == '-' && isDigits(a.text[1:]) {
			n, _ = strconv.Atoi(a.text[1:])
			continue
		}
		rest = append(rest, a)
	}
	flags, ops := operands(rest, values)
	for _, f := range flags {
		switch f.name {
		case "-n", "--lines":
			v := f.value
			switch {
			case tail && strings.HasPrefix(v, "+"):
				k, err := strconv.Atoi(v[1:])
				if err != nil {
					return selection{}, nil, false
				}
				from = max(k, 1)
			case strings.HasPrefix(v, "-"): // head -n -K: all but the last K
				return selection{}, nil, false
			default:
				k, err := strconv.Atoi(v)
				if err != nil {
					return selection{}, nil, false
				}
				n, from = k, 0
			}
		case "-c", "--bytes", "-f", "-F", "--follow", "--retry":
			return selection{}, nil, false
		case "-q", "-v", "--quiet", "--silent", "--verbose", "-z", "-s", "--sleep-interval", "--pid":
		default:
			if !strings.HasPrefix(f.name, "--") && strings.ContainsAny(f.name[1:], "cfF") {
				return selection{}, nil, false
			}
		}
	}
	if n <= 0 && from == 0 {
		return selection{}, nil, false
	}
	switch {
	case from > 0:
		return selection{ranges: []Range{{from, 0}}}, ops, true
	case tail:
		return selection{tail: n}, ops, true
	default:
		return selection{ranges: []Range{{1, n}}}, ops, true
	}
}

// The regular expressions are compiled on first use, not at start-up:
// every hook call pays a package's init, and most never look at sed or awk.
var sedCmd = lazyRegexp(`^(\d+|\$)(?:\s*,\s*(\d+|\$|\+\d+))?\s*([pq])$`)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func parseSed(args []token) (selection, []token, bool) {
	flags, ops := operands(args, sedValues)
	quiet := false
	var scripts []string
	for _, f := range flags {
		switch {
		case f.name == "-n" || f.name == "--quiet" || f.name == "--silent":
			quiet = true
		case f.name == "-e" || f.name == "--expression":
			scripts = append(scripts, f.value)
		case f.name == "-E" || f.name == "-r" || f.name == "--regexp-extended" || f.name == "-u" || f.name == "-s":
		case !strings.HasPrefix(f.name, "--") && strings.Trim(f.name[1:], "nEurs") == "":
			quiet = quiet || strings.Contains(f.name, "n")
		default: // -i, -f, -z and anything unknown
			return selection{}, nil, false
		}
	}
	if len(scripts) == 0 {
		if len(ops) == 0 || ops[0].dynamic {
			return selection{}, nil, false
		}
		scripts, ops = []string{ops[0].text}, ops[1:]
	}
	var sel selection
	quit := 0
	for _, sc := range scripts {
		for _, part := range strings.FieldsFunc(sc, func(r rune) bool { return r == ';' || r == '\n' }) {
			m := sedCmd().FindStringSubmatch(strings.TrimSpace(part))
			if m == nil {
				return selection{}, nil, false
			}
			if m[3] == "q" {
				if m[2] != "" || m[1] == "$" {
					return selection{}, nil, false
				}
				q, _ := strconv.Atoi(m[1])
				if quit == 0 || q < quit {
					quit = q
				}
				continue
			}
			if !quiet {
				return selection{}, nil, false // p without -n prints every line twice
			}
			if m[1] == "$" {
				if m[2] != "" {
					return selection{}, nil, false
				}
				sel.tail = 1
				continue
			}
			lo, _ := strconv.Atoi(m[1])
			hi := lo
			switch {
			case m[2] == "$":
				hi = 0
			case strings.HasPrefix(m[2], "+"):
				k, _ := strconv.Atoi(m[2][1:])
				hi = lo + k
			case m[2] != "":
				hi, _ = strconv.Atoi(m[2])
			}
			if lo < 1 || hi != 0 && hi < lo {
				return selection{}, nil, false
			}
			sel.ranges = append(sel.ranges, Range{lo, hi})
		}
	}
	if sel.tail > 0 && len(sel.ranges) > 0 {
		return selection{}, nil, false
	}
	if quit > 0 {
		if !quiet {
			return selection{ranges: []Range{{1, quit}}}, ops, true
		}
		sel.ranges = clip(sel.ranges, quit)
	}
	if len(sel.ranges) == 0 && sel.tail == 0 {
		return selection{}, nil, false
	}
	return sel, ops, true
}

// clip limits ranges to lines up to n.
func clip(rs []Range, n int) []Range {
	var out []Range
	for _, r := range rs {
		if r.Start > n {
			continue
		}
		if r.End == 0 || r.End > n {
			r.End = n
		}
		out = append(out, r)
	}
	return out
}

var (
	awkCond   = lazyRegexp(`^\(?\s*F?NR\s*(==|>=|<=|>|<)\s*(\d+)\s*\)?$`)
	awkPrint  = lazyRegexp(`^print(\s+.*)?$`)
	awkFields = lazyRegexp(`\$[1-9A-Za-z(]`)
)

func parseAwk(args []token) (selection, []token, bool) {
	flags, ops := operands(args, awkValues)
	for _, f := range flags {
		if f.name == "-f" || f.name == "--file" {
			return selection{}, nil, false
		}
	}
	if len(ops) == 0 || ops[0].dynamic {
		return selection{}, nil, false
	}
	prog, ops := strings.TrimSpace(ops[0].text), ops[1:]
	pattern, action := prog, ""
	if i := strings.IndexByte(prog, '{'); i >= 0 {
		if !strings.HasSuffix(prog, "}") {
			return selection{}, nil, false
		}
		pattern, action = strings.TrimSpace(prog[:i]), strings.TrimSpace(prog[i+1:len(prog)-1])
	}
	action = strings.TrimSpace(strings.TrimSuffix(action, ";"))
	if action != "" {
		if !awkPrint().MatchString(action) || strings.Contains(action, ";") || awkFields().MatchString(action) ||
			action != "print" && !strings.Contains(action, "$0") {
			return selection{}, nil, false
		}
	}
	if pattern == "" {
		return selection{}, nil, false
	}
	// Range pattern: NR==a,NR==b.
	if a, b, ok := strings.Cut(pattern, ","); ok {
		ma, mb := awkCond().FindStringSubmatch(strings.TrimSpace(a)), awkCond().FindStringSubmatch(strings.TrimSpace(b))
		if ma == nil || mb == nil || ma[1] != "==" || mb[1] != "==" {
			return selection{}, nil, false
		}
		lo, _ := strconv.Atoi(ma[2])
		hi, _ := strconv.Atoi(mb[2])
		if lo < 1 || hi < lo {
			return selection{}, nil, false
		}
		return selection{ranges: []Range{{lo, hi}}}, ops, true
	}
	lo, hi := 1, inf
	for _, c := range strings.Split(pattern, "&&") {
		m := awkCond().FindStringSubmatch(strings.TrimSpace(c))
		if m == nil {
			return selection{}, nil, false
		}
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "==":
			lo, hi = max(lo, n), min(hi, n)
		case ">=":
			lo = max(lo, n)
		case ">":
			lo = max(lo, n+1)
		case "<=":
			hi = min(hi, n)
		case "<":
			hi = min(hi, n-1)
		}
	}
	if hi < lo {
		return selection{}, nil, false
	}
	if hi == inf {
		hi = 0
	}
	return selection{ranges: []Range{{lo, hi}}}, ops, true
}

// batRange parses bat's "A:B", "A:", ":B" and "A" line ranges.
func batRange(s string) (Range, bool) {
	a, b, found := strings.Cut(s, ":")
	lo, hi := 1, 0
	var err error
	if a != "" {
		if lo, err = strconv.Atoi(a); err != nil || lo < 1 {
			return Range{}, false
		}
	}
	switch {
	case !found:
		hi = lo
	case b != "":
		if hi, err = strconv.Atoi(b); err != nil || hi < lo {
			return Range{}, false
		}
	}
	return Range{lo, hi}, true
}

// compose applies a filter's selection to a view of a file.
func compose(v View, sel selection) (View, bool) {
	if sel.all {
		return v, true
	}
	if v.Tail > 0 {
		if sel.tail > 0 {
			return View{Tail: min(v.Tail, sel.tail)}, true
		}
		return View{}, false
	}
	if sel.tail > 0 {
		last := v.Ranges[len(v.Ranges)-1]
		if last.End == 0 {
			if len(v.Ranges) > 1 {
				return View{}, false
			}
			return View{Tail: sel.tail}, true
		}
		// The last sel.tail lines of the concatenated ranges.
		need := sel.tail
		var out []Range
		for i := len(v.Ranges) - 1; i >= 0 && need > 0; i-- {
			r := v.Ranges[i]
			n := r.End - r.Start + 1
			if n > need {
				r.Start = r.End - need + 1
				n = need
			}
			out = append([]Range{r}, out...)
			need -= n
		}
		return View{Ranges: out}, true
	}
	var out []Range
	for _, s := range sel.ranges {
		sEnd := s.End
		if sEnd == 0 {
			sEnd = inf
		}
		pos := 0 // stream lines before the current view range
		for _, r := range v.Ranges {
			rEnd := r.End
			if rEnd == 0 {
				rEnd = inf
			}
			n := rEnd - r.Start + 1
			lo, hi := max(s.Start, pos+1), min(sEnd, pos+n)
			if lo <= hi {
				a, b := r.Start+lo-pos-1, r.Start+hi-pos-1
				if b >= inf/2 {
					b = 0
				}
				out = append(out, Range{a, b})
			}
			if n >= inf/2 {
				break
			}
			pos += n
		}
	}
	if len(out) == 0 {
		return View{}, false
	}
	return View{Ranges: out}, true
}
