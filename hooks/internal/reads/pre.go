package reads

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/ledger"

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

// Pre judges a PreToolUse call: a stop the governor holds (mode on) for any
// tool; re-reads and the loop breaker for Read and Bash.
func (s *Store) Pre(in *hookio.Input) (Decision, error) {
	if in.SessionID == "" {
		return Decision{}, nil
	}
	if d, err := s.preHeld(in); err != nil || d.Deny {
		return d, err
	}
	if !s.Cfg.Enabled {
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
	dir := Dir(s.Dirs, in.SessionID, in.AgentID)
	files := make([]string, len(rqs))
	recs := make([]*FileRec, len(rqs))
	for i, rq := range rqs {
		files[i] = recPath(dir, rq.path)
		if recs[i] = readRec(files[i], rq.path); recs[i] == nil {
			return Decision{}, nil // never read in this context
		}
	}
	vis := s.visibilityFor(in.SessionID, in.AgentID)
	projected := s.projected(in)
	verdicts := make([]verdict, len(rqs))
	all, stale := true, false
	for i, rq := range rqs {
		verdicts[i] = s.judge(recs[i], rq, vis, projected)
		if verdicts[i].stale {
			stale = true
			if err := forget(dir, rq.path); err != nil {
				return Decision{}, err
			}
		}
		all = all && verdicts[i].deniable
	}
	if stale {
		if err := resetLoops(dir); err != nil {
			return Decision{}, err
		}
	}
	if !all {
		return Decision{}, nil
	}

	var (
		dec              Decision
		booked, refunded int64
		refunds          int64
	)
	err := withLocks(files, func() error {
		cur := make([]*FileRec, len(rqs))
		granted := true
		for i, rq := range rqs {
			cur[i] = readRec(files[i], rq.path)
			if cur[i] == nil || cur[i].Size != recs[i].Size || cur[i].MtimeNs != recs[i].MtimeNs {
				return nil // changed under us: allow
			}
			granted = granted && cur[i].Grant != nil
		}
		if granted {
			// The escape: the re-issued read passes and its booking is refunded.
			for i, r := range cur {
				refunded += *r.Grant
				refunds++
				r.Grant = nil
				if err := writeRec(files[i], r); err != nil {
					return err
				}
			}
			return nil
		}
		var named []string
		for i, r := range cur {
			if r.Grant != nil {
				continue
			}
			tokens := verdicts[i].tokens
			r.Grant = &tokens
			if err := writeRec(files[i], r); err != nil {
				return err
			}
			booked += tokens
			named = append(named, fmt.Sprintf("%s (%s)", rqs[i].path, verdicts[i].desc))
		}
		dec = Decision{Deny: true, Reason: denyReason(named, booked)}
		return nil
	})
	if err != nil {
		return Decision{}, err
	}
	switch {
	case dec.Deny:
		err = s.count(in.SessionID, func(c *ledger.Counters) {
			c.Denials++
			c.Blocked++
			c.TokensSaved += booked
		})
	case refunds > 0:
		err = s.count(in.SessionID, func(c *ledger.Counters) {
			c.Refunds += refunds
			c.Blocked -= refunds
			c.TokensSaved -= refunded
		})
	}
	return dec, err
}

func denyReason(named []string, tokens int64) string {
	return fmt.Sprintf("synaxi: you already read %s earlier in this conversation and it is unchanged on disk, so use that content (~%d tokens not re-sent). "+
		"If it is no longer in your context, or you need it again anyway, re-issue the same read: it will be allowed once.",
		strings.Join(named, "; "), tokens)
}
