package reads

import (
	"errors"
	"os"

	"github.com/synaxi/synaxi/internal/hookio"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// Post records what a PostToolUse call read and forgets what it changed.
func (s *Store) Post(in *hookio.Input) error {
	if !s.Cfg.Enabled || in.SessionID == "" {
		return nil
	}
	dir := Dir(s.Dirs, in.SessionID, in.AgentID)
	switch in.ToolName {
	case "Read":
		a := in.ReadArgs()
		if p := absPath(a.FilePath, in.Cwd); p != "" {
			return s.record(dir, p, ReadView(a), true)
		}
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		if p := absPath(in.EditedPath(), in.Cwd); p != "" {
			return forget(dir, p)
		}
	case "Bash":
		return s.postBash(in, dir)
	}
	return nil
}

func (s *Store) postBash(in *hookio.Input, dir string) error {
	cmd := in.Command()
	an := shellread.Parse(cmd, in.Cwd)
	var errs []error
	switch {
	case an.Global:
		errs = append(errs, forgetAll(dir))
	case len(an.Edits) > 0:
		for _, e := range an.Edits {
			if p := absPath(e, in.Cwd); p != "" {
				errs = append(errs, forget(dir, p))
			}
		}
	}
	resp := in.ToolResponse
	if !resp.Get("interrupted").Bool() && len(resp.Get("stdout").Str) < BashOutputLimit {
		for _, r := range an.Reads {
			if p := absPath(r.Path, in.Cwd); p != "" {
				errs = append(errs, s.record(dir, p, r.View, false))
			}
		}
	}
	return errors.Join(errs...)
}

// record appends a read of view to the context's log (the fold merges it
// into the file's record, or starts afresh when the file changed since, a
// pending grant going with it), and compacts the log when it grew too big.
func (s *Store) record(dir, path string, view shellread.View, viaTool bool) error {
	st, ok := statFile(path)
	if !ok {
		return forget(dir, path)
	}
	var spans []span
	if view.Tail > 0 {
		// The last lines depend on the file's length: count them.
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		spans = resolve(view, indexLines(data).count())
	} else {
		for _, r := range view.Ranges {
			spans = append(spans, span{max(r.Start, 1), r.End})
		}
	}
	rec := FileRec{Size: st.size, MtimeNs: st.mtimeNs, Ino: st.ino, Spans: mergeOpen(spans), ViaTool: viaTool, At: s.Now()}
	size, err := appendLog(dir, entry{op: opRead, path: path, rec: rec})
	if err != nil || size <= compactAt {
		return err
	}
	return compact(dir)
}

// mergeOpen merges spans whose end may be 0 ("to the end of the file").
func mergeOpen(in []span) []span {
	const open = 1 << 40
	tmp := make([]span, len(in))
	for i, s := range in {
		if s[1] == 0 {
			s[1] = open
		}
		tmp[i] = s
	}
	out := merge(tmp)
	for i := range out {
		if out[i][1] >= open {
			out[i][1] = 0
		}
	}
	return out
}
