package reads

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/synaxi/synaxi/internal/hookio"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/statefile"

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
	paths := make([]string, len(rqs))
	for i, rq := range rqs {
		paths[i] = rq.path
	}
	data, err := readLog(dir)
	if err != nil || data == nil {
		return Decision{}, nil // unreadable, or nothing read in this context
	}
	recs := fold(data, paths...)
	for _, p := range paths {
		if recs[p] == nil {
			return Decision{}, nil // never read in this context
		}
	}
	vis := s.visibilityFor(in.SessionID, in.AgentID)
	projected := s.projected(in)
	verdicts := make([]verdict, len(rqs))
	all := true
	var stale []entry
	for i, rq := range rqs {
		verdicts[i] = s.judge(recs[rq.path], rq, vis, projected)
		if verdicts[i].stale {
			stale = append(stale, entry{op: opForget, path: rq.path})
		}
		all = all && verdicts[i].deniable
	}
	if len(stale) > 0 {
		if _, err := appendLog(dir, stale...); err != nil {
			return Decision{}, err
		}
		if err := resetLoops(dir); err != nil {
			return Decision{}, err
		}
	}
	if !all {
		return Decision{}, nil
	}
	return s.decide(in.SessionID, dir, paths, verdicts)
}

// decide books a denial of deniable requests, or, when each holds a grant
// already, the escape: it passes and its booking is refunded. It runs under
// the log's lock, on the log as it is then, so parallel re-reads of a file
// alternate deny, pass.
func (s *Store) decide(session, dir string, paths []string, verdicts []verdict) (Decision, error) {
	var (
		dec              Decision
		booked, refunded int64
		refunds          int64
	)
	err := statefile.WithLock(logPath(dir), func() error {
		data, err := readLog(dir)
		if err != nil {
			return err
		}
		cur := fold(data, paths...)
		granted := true
		for i, p := range paths {
			if r := cur[p]; r == nil || !r.same(verdicts[i].st) {
				return nil // changed under us: allow
			}
			granted = granted && cur[p].Grant != nil
		}
		var es []entry
		var named []string
		for i, p := range paths {
			switch r := cur[p]; {
			case granted:
				// The escape: the re-issued read passes and its booking is refunded.
				refunded += *r.Grant
				refunds++
				es = append(es, entry{op: opUsed, path: p})
			case r.Grant == nil:
				booked += verdicts[i].tokens
				es = append(es, entry{op: opGrant, path: p, tokens: verdicts[i].tokens})
				named = append(named, fmt.Sprintf("%s (%s)", p, verdicts[i].desc))
			}
		}
		if _, err := appendLog(dir, es...); err != nil {
			return err
		}
		if !granted {
			dec = Decision{Deny: true, Reason: denyReason(named, booked)}
		}
		return nil
	})
	if err != nil {
		return Decision{}, err
	}
	switch {
	case dec.Deny:
		err = ledger.AddCounts(s.Dirs, session, ledger.Counts{Denials: 1, Blocked: 1, TokensSaved: booked})
	case refunds > 0:
		err = ledger.AddCounts(s.Dirs, session, ledger.Counts{Refunds: refunds, Blocked: -refunds, TokensSaved: -refunded})
	}
	return dec, err
}

func denyReason(named []string, tokens int64) string {
	return fmt.Sprintf("synaxi: you already read %s earlier in this conversation and it is unchanged on disk, so use that content (~%d tokens not re-sent). "+
		"If it is no longer in your context, or you need it again anyway, re-issue the same read: it will be allowed once.",
		strings.Join(named, "; "), tokens)
}
