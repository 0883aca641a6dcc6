package reads

import (
	"os"

	"github.com/synaxi/synaxi/internal/hookio"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// Post records what a PostToolUse call read and forgets what it changed.
func (s *Store) Post(in *hookio.Input) error {
	if !s.Cfg.Enabled || in.SessionID == "" {
		return nil
	}
	switch in.ToolName {
	case "Read":
		a := in.ReadArgs()
		p := absPath(a.FilePath, in.Cwd)
		if p == "" {
			return nil
		}
		return s.update(in.SessionID, in.AgentID, func(c *Context) error {
			return s.record(c, p, ReadView(a), true)
		})
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		p := absPath(in.EditedPath(), in.Cwd)
		return s.update(in.SessionID, in.AgentID, func(c *Context) error {
			if p != "" {
				c.forget(p)
			}
			c.edited()
			return nil
		})
	case "Bash":
		return s.postBash(in)
	}
	return nil
}

func (s *Store) postBash(in *hookio.Input) error {
	cmd := in.Command()
	an := shellread.Parse(cmd, in.Cwd)
	key := shellread.Normalize(cmd)
	resp := in.ToolResponse
	truncated := resp.Get("interrupted").Bool() || len(resp.Get("stdout").Str) >= BashOutputLimit
	if len(an.Reads) == 0 && len(an.Edits) == 0 && !an.Global && (s.Cfg.LoopThreshold <= 0 || key == "") {
		return nil
	}
	return s.update(in.SessionID, in.AgentID, func(c *Context) error {
		switch {
		case an.Global:
			clear(c.Files)
			clear(c.Grants)
			c.edited()
		case len(an.Edits) > 0:
			for _, e := range an.Edits {
				if p := absPath(e, in.Cwd); p != "" {
					c.forget(p)
				}
			}
			c.edited()
		}
		if !truncated {
			for _, r := range an.Reads {
				if p := absPath(r.Path, in.Cwd); p != "" {
					if err := s.record(c, p, r.View, false); err != nil {
						return err
					}
				}
			}
		}
		if s.Cfg.LoopThreshold > 0 && key != "" && !an.Global && len(an.Edits) == 0 {
			c.Cmds[key]++
		}
		return nil
	})
}

// record adds a read of view to path's record, starting afresh when the
// file changed since the last record.
func (s *Store) record(c *Context, path string, view shellread.View, viaTool bool) error {
	st, ok := statFile(path)
	if !ok {
		c.forget(path)
		return nil
	}
	rec := c.Files[path]
	if rec == nil || rec.Size != st.size || rec.MtimeNs != st.mtimeNs {
		if rec != nil {
			delete(c.Grants, path)
		}
		rec = &FileRec{Size: st.size, MtimeNs: st.mtimeNs}
		c.Files[path] = rec
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
	rec.Spans = mergeOpen(append(rec.Spans, spans...))
	rec.ViaTool = rec.ViaTool || viaTool
	rec.At = s.Now()
	return nil
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
