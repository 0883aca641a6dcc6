package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// waitRows is rows with a deadline: a stage that leaves the recorder
// waiting forever fails the test instead of hanging it.
func waitRows(t *testing.T, p *proxy) []ledger.Row {
	t.Helper()
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a ledger row is never written: Wait (and so Serve's drain) blocks")
	}
	return p.rows(t)
}

// A panic at any stage of a worker request still serves the client, leaves
// the ledger and the drain unblocked, and says what happened. The probe
// case is the one the issue names: a panic after the counterfactual is
// due but before it is delivered used to block the row and the drain.
func TestPanicAtEveryStage(t *testing.T) {
	tests := []struct {
		stage     string
		failOpen  string // the row's fail-open reason
		projected bool   // the projection was served
		null      string // the row's counterfactual null reason; "" when measured
		noRow     bool
	}{
		{stage: "gate", failOpen: "panic in gate: boom", null: "not measured: panic in gate: boom"},
		{stage: "project", failOpen: "panic in projection: boom"},
		{stage: "probe", projected: true, null: "count_tokens panic: boom"},
		// The projection was served; only its usage is unknown.
		{stage: "response", projected: true, failOpen: "panic in measurement: boom"},
		{stage: "record", noRow: true},
	}
	for _, tt := range tests {
		t.Run(tt.stage, func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, up.URL, nil)
			server.SetTestHook(p.Server, func(stage string) {
				if stage == tt.stage {
					panic("boom")
				}
			})
			body := workerBody(`[{"role":"user","content":"x"}]`)
			resp, got := do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), body)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Contains(t, string(got), `"id":"msg_1"`, "the upstream's answer reaches the client")
			assert.Equal(t, body, up.requests("/v1/messages")[0].Body)
			rows := waitRows(t, p)
			h := p.Health()
			if tt.noRow {
				assert.Empty(t, rows)
				assert.Equal(t, int64(1), h.LedgerErrors)
				// The context's next request is not held behind the lost row.
				server.SetTestHook(p.Server, nil)
				do(t, rawClient(), "POST", p.URL+"/v1/messages", claudeHeaders(), body)
				require.Len(t, waitRows(t, p), 1)
				return
			}
			require.Len(t, rows, 1)
			r := rows[0]
			assert.Equal(t, tt.failOpen, r.FailOpenReason)
			assert.Equal(t, tt.failOpen != "", r.FailOpen)
			assert.Equal(t, tt.projected, r.Projected)
			if tt.failOpen != "" {
				assert.Equal(t, int64(1), h.FailOpens)
			}
			assert.Equal(t, tt.null, r.CounterfactualNull)
			assert.Equal(t, tt.null == "", r.Counterfactual != nil)
			if tt.stage != "response" {
				assert.Equal(t, int64(11), r.Usage.Input, "billed usage is still recorded")
			}
		})
	}
}
