package server

import (
	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/ledger"
)

// loops is the loop governor's fires completed by the tool results a gated
// request brought (governor.Latest over its original messages), for its
// ledger row. It runs in the recorder, after the response, so it adds
// nothing to the request's path; the hook, which sees the same calls, tells
// the agent. Commands are not parsed here (the hook's bash parser lives in
// the hooks module), so only edit tools count as edits. Nil with
// governor.mode off, for a request that was not gated, or on a panic.
func (s *Server) loops(req *request) (out []ledger.LoopFire) {
	if s.o.Governor == governor.Off || !req.gated || req.body == nil || !req.body.Valid() {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Warn("loop governor", "id", req.id, "panic", v)
			out = nil
		}
	}()
	for _, f := range governor.Latest([]byte(req.body.Field("messages").Raw), nil, governor.Defaults) {
		out = append(out, ledger.LoopFire{Rule: string(f.Rule), Subject: f.Subject, Count: f.Count})
	}
	return out
}
