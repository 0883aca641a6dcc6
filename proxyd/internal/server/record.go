package server

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/convlog"
	"github.com/synaxi/synaxi/proxyd/internal/gate"
	"github.com/synaxi/synaxi/proxyd/internal/measure"
	"github.com/synaxi/synaxi/proxyd/internal/metrics"
)

// startRecorder starts the goroutine that owns req's ledger row (and
// conversation log entry) and returns the channel to hand it the finished
// exchange on; the send never blocks. The recorder asks count_tokens about
// the original at once, beside the real call, then waits for the exchange,
// then for the row of the request before it in the same context, and writes.
// Wait covers it from here.
func (s *Server) startRecorder(ctx context.Context, req *request) chan<- *exchange {
	handOff := make(chan *exchange, 1)
	var after <-chan struct{}
	var written chan struct{}
	if req.gated {
		after, written = s.enqueue(req)
	}
	s.pending.Add(1)
	go s.record(ctx, req, handOff, after, written)
	return handOff
}

// counterfactual is count_tokens' answer for the original body, or why
// there is none, and for the conversation as its previous request sent it
// (cached: what a perfect prefix cache would have read; 0 for a
// conversation's first request, nil when unknown).
type counterfactual struct {
	tokens *int64
	null   string
	cached *int64
}

func (s *Server) record(ctx context.Context, req *request, handOff <-chan *exchange, after <-chan struct{}, written chan struct{}) {
	defer s.pending.Done()
	defer s.dequeue(req, written) // the context's next row may go, whatever happens here
	defer func() {
		if v := recover(); v != nil {
			s.ledgerErrors.Add(1)
			s.log.Error("record exchange", "id", req.id, "panic", v)
		}
	}()
	var cf counterfactual
	if req.gated {
		cf = s.probe(ctx, req)
	}
	x := <-handOff
	s.hook("record")
	row, res := s.row(x)
	if req.passed != "" {
		s.writeRow(row)
	}
	if req.gated {
		row.Counterfactual, row.CounterfactualNull = cf.tokens, cf.null
		if cf.tokens == nil {
			s.probeFailures.Add(1)
		}
		row.CounterfactualCached = cf.cached
		if after != nil {
			<-after
		}
		s.writeRow(row)
	}
	s.metrics.Request(outcome(row), row.Model)
	if s.o.ConvLog != nil {
		s.logConversation(x, row, res)
	}
}

// writeRow appends a row to the ledger.
func (s *Server) writeRow(row *ledger.Row) {
	if err := ledger.Record(s.o.Dirs, row); err != nil {
		s.ledgerErrors.Add(1)
		s.log.Error("write ledger row", "id", row.ID, "err", err)
		return
	}
	s.metrics.Row(row) // the row's own values, once it is written
}

func outcome(row *ledger.Row) metrics.Outcome {
	switch {
	case row.FailOpen:
		return metrics.FailOpen
	case row.Projected:
		return metrics.Projected
	}
	return metrics.Passed
}

// row reads a finished exchange into its ledger row, all but the
// counterfactual. A fault in measurement counts as a fail-open.
func (s *Server) row(x *exchange) (*ledger.Row, measure.Result) {
	req, a := x.req, x.answer
	res := measure.Result{Problem: a.proxyErr}
	if a.collector != nil {
		res = a.collector.Result(a.complete)
	}
	failOpen := x.served.failOpen
	if a.measureFault != "" {
		s.failOpens.Add(1)
		if failOpen == "" {
			failOpen = a.measureFault
		}
	}
	row := &ledger.Row{
		ID:             req.id,
		Upstrm:         a.upstreamID,
		Time:           req.start.UTC(),
		Session:        req.session,
		Agent:          req.agent,
		Model:          res.Model,
		Status:         a.status,
		Projected:      x.served.projected,
		Passed:         req.passed,
		FailOpen:       failOpen != "",
		FailOpenReason: failOpen,
		Usage:          res.Usage,
		Projection:     x.served.stats,
		Loops:          s.loops(req),
	}
	if row.Model == "" {
		row.Model = s.o.UpstreamModel
	}
	if row.Model == "" {
		row.Model = gjson.GetBytes(x.served.body, "model").Str
	}
	return row, res
}

// probe asks count_tokens what the original body costs, and beside it what
// the conversation cost as the request before it sent it (the part a
// perfect prefix cache would have read). Both are read off the request
// itself, so any replica, or a restarted proxy, records the same row for
// the same request. It never panics.
func (s *Server) probe(ctx context.Context, req *request) (cf counterfactual) {
	switch {
	case req.fault != "":
		return counterfactual{null: "not measured: " + req.fault}
	case !s.o.CountTokens:
		return counterfactual{null: "count_tokens disabled (proxy.count_tokens = false)"}
	}
	defer func() {
		if v := recover(); v != nil {
			cf = counterfactual{null: fmt.Sprintf("count_tokens panic: %v", v)}
		}
	}()
	s.hook("probe")
	if !req.body.Valid() {
		return counterfactual{null: "count_tokens body: " + measure.ErrNotObject.Error()}
	}
	body, err := measure.CountBody(req.body)
	if err != nil {
		return counterfactual{null: "count_tokens body: " + err.Error()}
	}
	prev, first, err := measure.PreviousCountBody(req.body)
	if err != nil {
		return counterfactual{null: "count_tokens body: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.ProbeTimeout)
	defer cancel()
	cached := make(chan *int64, 1)
	switch {
	case first:
		cached <- new(int64)
	default:
		go func() {
			defer func() {
				if v := recover(); v != nil {
					cached <- nil
				}
			}()
			n, err := s.prober.Count(ctx, req.query, req.header, prev)
			if err != nil {
				s.log.Debug("count_tokens on the previous request", "id", req.id, "err", err)
				cached <- nil
				return
			}
			cached <- &n
		}()
	}
	n, err := s.prober.Count(ctx, req.query, req.header, body)
	cf.cached = <-cached
	if err != nil {
		cf.null = err.Error()
		return cf
	}
	cf.tokens = &n
	return cf
}

// enqueue makes req its context's latest gated request: its row is written
// after the row of the one before it (after), and written is closed once
// its own is. Responses end in any order (the client may send the next
// request before the previous row is written), but one proxy's ledger
// follows the order the requests arrived in. Nothing else depends on it: a
// row is computed from its request alone (see probe).
func (s *Server) enqueue(req *request) (after <-chan struct{}, written chan struct{}) {
	key := req.context()
	written = make(chan struct{})
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	after = s.tails[key]
	s.tails[key] = written
	return after, written
}

// dequeue marks req's row written, releasing the context's next request.
func (s *Server) dequeue(req *request, written chan struct{}) {
	if written == nil {
		return
	}
	key := req.context()
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	if s.tails[key] == written {
		delete(s.tails, key)
	}
	close(written)
}

func (s *Server) logConversation(x *exchange, row *ledger.Row, res measure.Result) {
	req := x.req
	e := &convlog.Entry{
		Time: row.Time, ID: req.id, Session: req.session, Agent: req.agent, Path: req.path,
		Status: row.Status, Gated: req.gated, Projected: x.served.projected, FailOpen: row.FailOpenReason,
		Original: convlog.Summarize(req.body), Projection: x.served.stats, Problem: res.Problem,
		Millis: time.Since(req.start).Milliseconds(),
	}
	if res.Known {
		u := res.Usage
		e.Usage = &u
	}
	if !bytes.Equal(x.served.body, req.body.Bytes()) {
		sum := convlog.Summarize(gate.Parse(x.served.body))
		e.Served = &sum
	}
	if err := s.o.ConvLog.Write(e); err != nil {
		s.log.Warn("write conversation log", "id", req.id, "err", err)
	}
}
