package reads

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
)

// The context log. Everything the hook knows of a context's reads is one
// append-only text file, reads.log, one entry a line, the path last and
// quoted (strconv.Quote) so that any byte in it is safe:
//
//	r SIZE MTIME_NS INODE VIA AT_NS SPANS "PATH"   a read (VIA t: the Read tool, else -;
//	                                               SPANS 1-40,90-0 or ., an end of 0 meaning
//	                                               "to the end")
//	g TOKENS "PATH"                                a denial's escape grant
//	u "PATH"                                       the grant was used (refund)
//	x "PATH"                                       forget the path (edited, changed on disk)
//	X                                              forget everything (a command that may edit
//	                                               anything)
//
// A file's record is the fold of its lines in order: a read of the same
// identity (size, mtime, inode) merges its spans into the record and keeps
// its grant; a read of another identity starts afresh. A line that does not
// parse is skipped, so a torn line (a writer killed mid-append; the next
// append starts with a newline) costs at most that entry, which only ever
// allows a read.
//
// Recording a read (or forgetting a path) is one O_APPEND write, with no
// lock: the kernel does not interleave appends to a local file, and losing
// one (see compaction) only allows a later re-read, since a changed file
// fails the identity check whatever the log says. A denial and its refund are decided under the log's sidecar lock
// (so parallel re-reads of one file alternate deny, pass), and so is a
// compaction. A reset removes the file.
const logName = "reads.log"

// Compaction: when an append leaves the log above compactAt bytes it is
// rewritten as one line per record, the newest records first up to
// compactTo bytes; older records are dropped (their files' re-reads pass).
// An append racing the rename may be lost; that too only allows a re-read.
const (
	compactAt = 512 << 10
	compactTo = 256 << 10
)

// Entry kinds.
const (
	opRead   = 'r'
	opGrant  = 'g'
	opUsed   = 'u'
	opForget = 'x'
	opReset  = 'X'
)

func logPath(dir string) string { return filepath.Join(dir, logName) }

// entry is one line of the log.
type entry struct {
	op     byte
	path   string
	rec    FileRec // opRead
	tokens int64   // opGrant
}

// encode renders e as one line, newline included.
func (e entry) encode() []byte {
	b := []byte{e.op}
	switch e.op {
	case opReset:
		return append(b, '\n')
	case opRead:
		r := &e.rec
		via := "-"
		if r.ViaTool {
			via = "t"
		}
		b = fmt.Appendf(b, " %d %d %d %s %d %s", r.Size, r.MtimeNs, r.Ino, via, r.At.UnixNano(), encodeSpans(r.Spans))
	case opGrant:
		b = fmt.Appendf(b, " %d", e.tokens)
	}
	b = append(b, ' ')
	b = strconv.AppendQuote(b, e.path)
	return append(b, '\n')
}

func encodeSpans(spans []span) string {
	if len(spans) == 0 {
		return "."
	}
	parts := make([]string, len(spans))
	for i, s := range spans {
		parts[i] = strconv.Itoa(s[0]) + "-" + strconv.Itoa(s[1])
	}
	return strings.Join(parts, ",")
}

// parseEntry reads one line (without its newline); false when it is not a
// well-formed entry.
func parseEntry(line []byte) (entry, bool) {
	if len(line) == 0 {
		return entry{}, false
	}
	e := entry{op: line[0]}
	if e.op == opReset {
		return e, len(line) == 1
	}
	fields := 0
	switch e.op {
	case opRead:
		fields = 6
	case opGrant:
		fields = 1
	case opUsed, opForget:
	default:
		return entry{}, false
	}
	rest := string(line[1:])
	vals := make([]string, fields)
	for i := range vals {
		if !strings.HasPrefix(rest, " ") {
			return entry{}, false
		}
		rest = rest[1:]
		j := strings.IndexByte(rest, ' ')
		if j <= 0 {
			return entry{}, false
		}
		vals[i], rest = rest[:j], rest[j:]
	}
	if !strings.HasPrefix(rest, " \"") {
		return entry{}, false
	}
	p, err := strconv.Unquote(rest[1:])
	if err != nil || p == "" {
		return entry{}, false
	}
	e.path = p
	var ok bool
	switch e.op {
	case opGrant:
		e.tokens, ok = nonNegative(vals[0])
		return e, ok
	case opRead:
		return e, e.rec.parse(vals)
	}
	return e, true
}

// parse fills r from a read line's fields.
func (r *FileRec) parse(vals []string) bool {
	var ok [4]bool
	var ino, at int64
	r.Size, ok[0] = nonNegative(vals[0])
	r.MtimeNs, ok[1] = parseInt(vals[1])
	ino, ok[2] = nonNegative(vals[2])
	r.Ino = uint64(ino)
	at, ok[3] = parseInt(vals[4])
	r.At = time.Unix(0, at)
	switch vals[3] {
	case "t":
		r.ViaTool = true
	case "-":
	default:
		return false
	}
	spans, sok := parseSpans(vals[5])
	r.Spans = spans
	return ok == [4]bool{true, true, true, true} && sok
}

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func nonNegative(s string) (int64, bool) {
	n, ok := parseInt(s)
	return n, ok && n >= 0
}

// parseSpans reads "1-40,90-0" (or "." for none); every span starts at 1
// or later and ends at or after its start, or at 0 ("to the end").
func parseSpans(s string) ([]span, bool) {
	if s == "." {
		return nil, true
	}
	var out []span
	for part := range strings.SplitSeq(s, ",") {
		a, b, found := strings.Cut(part, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if !found || err1 != nil || err2 != nil || lo < 1 || hi != 0 && hi < lo {
			return nil, false
		}
		out = append(out, span{lo, hi})
	}
	return out, true
}

// fold applies the log's lines in order. With paths given, only the lines
// naming one of them (and resets) are parsed, so a call judging one file
// pays for little more than reading the log.
func fold(data []byte, paths ...string) map[string]*FileRec {
	var tails [][]byte
	for _, p := range paths {
		tails = append(tails, strconv.AppendQuote([]byte{' '}, p))
	}
	recs := map[string]*FileRec{}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			break // a torn last line: its writer did not finish
		}
		if len(line) == 0 {
			continue
		}
		if len(tails) > 0 && line[0] != opReset && !slices.ContainsFunc(tails, func(t []byte) bool { return bytes.HasSuffix(line, t) }) {
			continue
		}
		e, ok := parseEntry(line)
		if !ok {
			continue
		}
		apply(recs, e)
	}
	return recs
}

// apply is one entry's effect on the records.
func apply(recs map[string]*FileRec, e entry) {
	cur := recs[e.path]
	switch e.op {
	case opReset:
		clear(recs)
	case opForget:
		delete(recs, e.path)
	case opGrant:
		if cur != nil {
			t := e.tokens
			cur.Grant = &t
		}
	case opUsed:
		if cur != nil {
			cur.Grant = nil
		}
	case opRead:
		r := e.rec
		if cur == nil || !cur.same(fileState{r.Size, r.MtimeNs, r.Ino}) {
			r.Path = e.path
			recs[e.path] = &r
			return
		}
		cur.Spans = mergeOpen(append(cur.Spans, r.Spans...))
		cur.ViaTool = cur.ViaTool || r.ViaTool
		cur.At = r.At
	}
}

// readLog returns the log's bytes; nil when there is none.
func readLog(dir string) ([]byte, error) {
	data, err := os.ReadFile(logPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// appendLog appends entries in one write, creating the context directory
// and the log as needed; it returns the log's size after the write. The
// write starts with a newline, which ends a line a killed writer left torn
// (the fold skips it and the blank lines).
func appendLog(dir string, es ...entry) (int64, error) {
	b := []byte{'\n'}
	for _, e := range es {
		b = append(b, e.encode()...)
	}
	file := logPath(dir)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, statefile.FileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o700); err == nil {
			f, err = os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, statefile.FileMode)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", file, err)
	}
	_, werr := f.Write(b)
	end, serr := f.Seek(0, io.SeekCurrent)
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		return 0, fmt.Errorf("append %s: %w", file, err)
	}
	return end, nil
}

// compact rewrites an oversized log as one line per record, under its lock.
func compact(dir string) error {
	file := logPath(dir)
	return statefile.WithLock(file, func() error {
		data, err := readLog(dir)
		if err != nil || len(data) <= compactAt {
			return err
		}
		recs := fold(data)
		list := make([]*FileRec, 0, len(recs))
		for _, r := range recs {
			list = append(list, r)
		}
		slices.SortFunc(list, func(a, b *FileRec) int { return b.At.Compare(a.At) })
		var out []byte
		for _, r := range list {
			lines := entry{op: opRead, path: r.Path, rec: *r}.encode()
			if r.Grant != nil {
				lines = append(lines, entry{op: opGrant, path: r.Path, tokens: *r.Grant}.encode()...)
			}
			if len(out)+len(lines) > compactTo {
				break
			}
			out = append(out, lines...)
		}
		return statefile.WriteBytes(file, out, statefile.NoSync)
	})
}
