package reads

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/synaxi/synaxi/internal/visibility"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// Decision is the outcome of a PreToolUse judgement.
type Decision struct {
	Deny   bool
	Reason string
	// Stop, when set, also stops Claude, showing it to the user (a loop
	// the governor caught in mode on).
	Stop string
}

// fileState is a file's identity on disk now: a change of content that
// keeps all three (same size, mtime restored, written in place) is one the
// hook cannot see, as before the inode was recorded.
type fileState struct {
	size    int64
	mtimeNs int64
	ino     uint64
}

func statFile(path string) (fileState, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileState{}, false
	}
	st := fileState{size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st, true
}

// same reports whether the record was made of the file as it is now.
func (r *FileRec) same(st fileState) bool {
	return r.Size == st.size && r.MtimeNs == st.mtimeNs && r.Ino == st.ino
}

// request is one file read being judged.
type request struct {
	path    string
	view    shellread.View
	viaTool bool
}

// verdict is the judgement of one request against its record.
type verdict struct {
	st       fileState // the file as judged
	deniable bool
	stale    bool // the record no longer matches the disk: forget it
	tokens   int64
	desc     string // what was read, for the reason
}

// skipExt are files whose Read is not plain text (images, PDFs, notebooks);
// bytes/4 says nothing about their tokens, so they are never denied.
var skipExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true,
	".pdf": true, ".ipynb": true, ".bmp": true, ".svgz": true}

// judge decides whether one request may be denied given its record (all
// conditions but the escape grant); projected says whether the context may
// be projected by the proxy (see shown).
func (s *Store) judge(rec *FileRec, rq request, vis *visibility.Export, projected bool) verdict {
	if rec == nil {
		return verdict{}
	}
	st, ok := statFile(rq.path)
	if !ok || !rec.same(st) {
		return verdict{stale: true}
	}
	if rq.viaTool && !rec.ViaTool {
		// Claude Code's Edit needs a Read-tool read of the file; a shell
		// read does not count, so this Read must pass.
		return verdict{}
	}
	if skipExt[strings.ToLower(filepath.Ext(rq.path))] {
		return verdict{}
	}
	data, err := os.ReadFile(rq.path)
	if err != nil || int64(len(data)) != rec.Size {
		return verdict{}
	}
	if i := min(len(data), 8192); strings.IndexByte(string(data[:i]), 0) >= 0 {
		return verdict{} // binary
	}
	ix := indexLines(data)
	want := resolve(rq.view, ix.count())
	have := clampSpans(rec.Spans, ix.count())
	if len(want) == 0 || !covered(want, have) {
		return verdict{}
	}
	if !shown(vis, projected, rq.path, want, rec.At) {
		return verdict{}
	}
	tokens := s.Tokens(pick(ix, want))
	if tokens < int64(s.Cfg.MinTokens) {
		return verdict{}
	}
	return verdict{st: st, deniable: true, tokens: tokens, desc: describe(have, ix.count())}
}

// pick returns the bytes of the spans.
func pick(ix lineIndex, spans []span) []byte {
	if len(spans) == 1 {
		s := spans[0]
		end := len(ix.data)
		if s[1] < len(ix.starts) {
			end = ix.starts[s[1]]
		}
		return ix.data[ix.starts[s[0]-1]:end]
	}
	out := make([]byte, 0, ix.bytesOf(spans))
	for _, s := range spans {
		out = append(out, pick(ix, []span{s})...)
	}
	return out
}

// describe names what was read: "the whole file" or "lines 1-40, 90-120".
func describe(have []span, n int) string {
	if len(have) == 1 && have[0][0] == 1 && have[0][1] >= n {
		return "the whole file"
	}
	parts := make([]string, 0, len(have))
	for _, h := range have {
		if h[0] == h[1] {
			parts = append(parts, fmt.Sprint(h[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", h[0], h[1]))
		}
	}
	if len(parts) > 4 {
		parts = append(parts[:4], "…")
	}
	return "lines " + strings.Join(parts, ", ")
}
