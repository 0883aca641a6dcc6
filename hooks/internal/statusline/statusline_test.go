package statusline

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestRender(t *testing.T) {
	saved := &ledger.Summary{Requests: 10, Measured: 8, SavedTokens: 12_400, SavedUSD: 0.31,
		All: ledger.Usage{Input: 100, CacheRead: 870, CacheWrite5m: 30}}
	overhead := &ledger.Summary{Requests: 2, Measured: 2, SavedTokens: -1_260, SavedUSD: -0.02,
		All: ledger.Usage{Input: 50, CacheWrite5m: 50}, FailOpens: 2}
	counters := &ledger.Counters{Denials: 4, Refunds: 1, Blocked: 3, TokensSaved: 4_100, LoopsBroken: 1}
	cases := []struct {
		name string
		f    Facts
		want string
	}{
		{"nothing yet", Facts{Model: "Opus 4.7", Dir: "/home/u/repo"},
			"Opus 4.7 · repo · ⌁ synaxi watching · not routed"},
		{"routed, nothing measured", Facts{Model: "Opus 4.7", Dir: "/r", Proxy: Routed},
			"Opus 4.7 · r · ⌁ synaxi watching · routed"},
		{"savings and counters", Facts{Model: "Opus 4.7", Dir: "/r", Summary: saved, Counters: counters, Proxy: Routed},
			"Opus 4.7 · r · ⌁ synaxi saved 12.4k tok ($0.31) · cache 87% · 3 re-reads blocked (~4.1k tok) · 1 loop broken · routed"},
		{"overhead is shown as overhead", Facts{Model: "Sonnet", Dir: "/r", Summary: overhead, Proxy: Down},
			"Sonnet · r · ⌁ synaxi overhead 1.3k tok (−$0.02) · cache 0% · proxy down · 2 fail-opens"},
		{"hook counters only", Facts{Dir: "/r", Counters: &ledger.Counters{Denials: 1, Blocked: 1, TokensSaved: 300}},
			"r · ⌁ synaxi 1 re-read blocked (~300 tok) · not routed"},
		{"refunded denial leaves only loops", Facts{Dir: "/r", Counters: &ledger.Counters{Denials: 1, Refunds: 1, LoopsBroken: 2}},
			"r · ⌁ synaxi 2 loops broken · not routed"},
		{"governor advised", Facts{Dir: "/r", Counters: &ledger.Counters{Loops: map[string]int64{"repeat": 1, "unchanged": 1},
			LastLoop: &ledger.LoopFire{Rule: "unchanged"}}},
			"r · ⌁ synaxi ⟳ 2 loops flagged: unchanged · not routed"},
		{"governor stopped", Facts{Dir: "/r", Counters: &ledger.Counters{Loops: map[string]int64{"revert": 1}, Stops: 1,
			LastLoop: &ledger.LoopFire{Rule: "revert"}}},
			"r · ⌁ synaxi ⟳ 1 loop stopped: revert · not routed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Render(c.f))
		})
	}
}

func TestRenderColour(t *testing.T) {
	got := Render(Facts{Model: "M", Dir: "/r", Proxy: Down, Color: true})
	assert.Equal(t, "\x1b[36mM\x1b[0m · r · ⌁ synaxi \x1b[2mwatching\x1b[0m · \x1b[31mproxy down\x1b[0m", got)
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 9_999: "10.0k", 4_100: "4.1k", 12_449: "12.4k", 3_140_000: "3.1M", -12_400: "−12.4k"} {
		assert.Equal(t, want, Tokens(n))
	}
	for v, want := range map[float64]string{0: "$0", 1.234: "$1.23", 0.03: "$0.03", 0.0042: "$0.004", -0.02: "−$0.02"} {
		assert.Equal(t, want, Dollars(v))
	}
}

func TestRunPrevious(t *testing.T) {
	ctx := context.Background()
	got := RunPrevious(ctx, `read -r line; printf 'mine: %s\nsecond\n\n' "$line"`, []byte(`{"a":1}`+"\n"), 2*time.Second)
	assert.Equal(t, []string{`mine: {"a":1}`, "second"}, got)

	assert.Nil(t, RunPrevious(ctx, "", nil, time.Second))
	assert.Equal(t, []string{"partial"}, RunPrevious(ctx, "echo partial; exit 3", nil, time.Second))

	start := time.Now()
	assert.Nil(t, RunPrevious(ctx, "echo early; sleep 30", nil, 200*time.Millisecond), "timed out")
	assert.Less(t, time.Since(start), 2*time.Second, "killed at the deadline, with its children")

	t.Setenv(DepthEnv, "1")
	assert.Nil(t, RunPrevious(ctx, "echo nested", nil, time.Second), "never composes with itself")
}

func TestProbeProxy(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	busy := &ledger.Summary{Requests: 3}
	assert.Equal(t, NotRouted, ProbeProxy(d, false, nil))
	assert.Equal(t, NotRouted, ProbeProxy(d, false, &ledger.Summary{}))
	assert.Equal(t, Down, ProbeProxy(d, true, nil), "no proxy record")
	assert.Equal(t, Down, ProbeProxy(d, false, busy), "the session was routed, no proxy")

	require.NoError(t, statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: os.Getpid(), Port: 1}))
	assert.Equal(t, Routed, ProbeProxy(d, true, nil))
	require.NoError(t, statefile.WriteJSON(proxyinfo.Path(d), proxyinfo.Info{PID: 1 << 30, Port: 1}))
	assert.Equal(t, Down, ProbeProxy(d, true, nil), "stale record")
}
