package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/governor"
	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/proxyd/internal/server"
)

// loopMessages is a conversation whose agent ran the same failing check n
// times, each result in its own user message.
func loopMessages(n int) string {
	msgs := []string{`{"role":"user","content":"make the check pass"}`}
	for i := range n {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"sh check.sh"}}]}`, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","is_error":true,"content":"Exit code 1\nFAIL (0.0%ds)"}]}`, i, i))
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// TestLoopsInLedgerRow: the row of the request that brings the third
// identical failure records the governor's fire; the requests before and
// after it record none, and mode off records nothing.
func TestLoopsInLedgerRow(t *testing.T) {
	for _, mode := range []governor.Mode{governor.Advise, governor.Off} {
		t.Run(string(mode), func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, up.URL, func(o *server.Options) { o.Governor = mode })
			h := claudeHeaders()
			h.Set("X-Claude-Code-Agent-Id", "w1")
			for n := 2; n <= 4; n++ {
				resp, _ := do(t, rawClient(), "POST", p.URL+"/v1/messages", h, workerBody(loopMessages(n)))
				require.Equal(t, 200, resp.StatusCode)
			}
			rows := p.rows(t)
			require.Len(t, rows, 3)
			assert.Empty(t, rows[0].Loops)
			assert.Empty(t, rows[2].Loops, "the fire belongs to the request that brought it")
			if mode == governor.Off {
				assert.Empty(t, rows[1].Loops)
				return
			}
			assert.Equal(t, []ledger.LoopFire{{Rule: "repeat", Subject: "sh check.sh", Count: 3}}, rows[1].Loops)
		})
	}
}
