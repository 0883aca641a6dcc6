package reads

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/hookio"

	"github.com/synaxi/synaxi/hooks/internal/shellread"
)

// ReadView is the lines a Read tool call with offset and limit returns.
func ReadView(a hookio.ReadArgs) shellread.View {
	start := max(a.Offset, 1)
	limit := a.Limit
	if limit <= 0 {
		limit = ReadDefaultLimit
	}
	return shellread.View{Ranges: []shellread.Range{{Start: start, End: start + limit - 1}}}
}

// absPath makes p absolute against cwd and cleans it.
func absPath(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return ""
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// Pre judges a PreToolUse call (Read or Bash).
func (s *Store) Pre(in *hookio.Input) (Decision, error) {
	if !s.Cfg.Enabled || in.SessionID == "" {
		return Decision{}, nil
	}
	switch in.ToolName {
	case "Read":
		a := in.ReadArgs()
		p := absPath(a.FilePath, in.Cwd)
		if p == "" {
			return Decision{}, nil
		}
		return s.preReads(in, []request{{path: p, view: ReadView(a), viaTool: true}})
	case "Bash":
		cmd := in.Command()
		if d, err := s.preLoop(in, cmd); err != nil || d.Deny {
			return d, err
		}
		an := shellread.Parse(cmd, in.Cwd)
		if !an.OnlyReads {
			return Decision{}, nil
		}
		rqs := make([]request, 0, len(an.Reads))
		for _, r := range an.Reads {
			p := absPath(r.Path, in.Cwd)
			if p == "" {
				return Decision{}, nil
			}
			rqs = append(rqs, request{path: p, view: r.View})
		}
		return s.preReads(in, rqs)
	}
	return Decision{}, nil
}

// preReads denies the requests only if every one of them is deniable (a
// command that also shows something new passes whole).
func (s *Store) preReads(in *hookio.Input, rqs []request) (Decision, error) {
	// Fast path without the lock: nothing recorded for any path → allow.
	raw, err := s.loadRaw(in.SessionID, in.AgentID)
	if err != nil {
		if isNotExist(err) {
			return Decision{}, nil
		}
		return Decision{}, err
	}
	known := false
	for _, rq := range rqs {
		if gjson.GetBytes(raw, "files."+escapePath(rq.path)).Exists() {
			known = true
			break
		}
	}
	if !known {
		return Decision{}, nil
	}
	vis := s.visibilityFor(in.SessionID, in.AgentID)

	var (
		dec      Decision
		booked   int64
		refunded int64
		refunds  int64
	)
	err = s.update(in.SessionID, in.AgentID, func(c *Context) error {
		dec, booked, refunded, refunds = Decision{}, 0, 0, 0
		var (
			changed  bool
			verdicts = make([]verdict, len(rqs))
			all      = true
		)
		for i, rq := range rqs {
			v := s.judge(c, rq, vis)
			if v.stale {
				c.forget(rq.path)
				c.edited()
				changed = true
			}
			verdicts[i] = v
			all = all && v.deniable
		}
		if !all {
			if !changed {
				return errSkip
			}
			return nil
		}
		granted := true
		for _, rq := range rqs {
			if _, ok := c.Grants[rq.path]; !ok {
				granted = false
			}
		}
		if granted {
			// The escape: the re-issued read passes and its booking is refunded.
			for _, rq := range rqs {
				refunded += c.Grants[rq.path]
				refunds++
				delete(c.Grants, rq.path)
			}
			return nil
		}
		var named []string
		for i, rq := range rqs {
			if _, ok := c.Grants[rq.path]; ok {
				continue
			}
			c.Grants[rq.path] = verdicts[i].tokens
			booked += verdicts[i].tokens
			named = append(named, fmt.Sprintf("%s (%s)", rq.path, verdicts[i].desc))
		}
		dec = Decision{Deny: true, Reason: denyReason(named, booked)}
		return nil
	})
	if err != nil {
		return Decision{}, err
	}
	switch {
	case dec.Deny:
		err = s.count(in.SessionID, func(c *hookio.Counters) {
			c.Denials++
			c.Blocked++
			c.TokensSaved += booked
		})
	case refunds > 0:
		err = s.count(in.SessionID, func(c *hookio.Counters) {
			c.Refunds += refunds
			c.Blocked -= refunds
			c.TokensSaved -= refunded
		})
	}
	return dec, err
}

func denyReason(named []string, tokens int64) string {
	what := named[0]
	if len(named) > 1 {
		what = strings.Join(named, "; ")
	}
	return fmt.Sprintf("synaxi: you already read %s earlier in this conversation and it is unchanged on disk, so use that content (~%d tokens not re-sent). "+
		"If it is no longer in your context, or you need it again anyway, re-issue the same read: it will be allowed once.", what, tokens)
}

// preLoop is the loop breaker: a command that already ran loop_threshold
// times with no edit in between is denied on alternate attempts.
func (s *Store) preLoop(in *hookio.Input, cmd string) (Decision, error) {
	n := s.Cfg.LoopThreshold
	key := shellread.Normalize(cmd)
	if n <= 0 || key == "" {
		return Decision{}, nil
	}
	raw, err := s.loadRaw(in.SessionID, in.AgentID)
	if err != nil {
		if isNotExist(err) {
			return Decision{}, nil
		}
		return Decision{}, err
	}
	if gjson.GetBytes(raw, "cmds."+escapePath(key)).Int() < int64(n) {
		return Decision{}, nil
	}
	var dec Decision
	err = s.update(in.SessionID, in.AgentID, func(c *Context) error {
		dec = Decision{}
		runs := c.Cmds[key]
		if runs < n {
			return errSkip
		}
		c.LoopTries[key]++
		if c.LoopTries[key]%2 == 1 {
			shown := key
			if len(shown) > 200 {
				shown = shown[:200] + "…"
			}
			dec = Decision{Deny: true, Reason: fmt.Sprintf("synaxi: `%s` has already run %d times with no edit in between, so its result will not change. "+
				"Use the earlier output or take a different step; re-issuing it once more is allowed.", shown, runs)}
		}
		return nil
	})
	if err != nil || !dec.Deny {
		return dec, err
	}
	return dec, s.count(in.SessionID, func(c *hookio.Counters) { c.LoopsBroken++ })
}

// escapePath escapes a map key for a gjson path.
func escapePath(k string) string { return gjson.Escape(k) }
