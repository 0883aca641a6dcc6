package savings

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/ledger"
	"github.com/synaxi/synaxi/internal/xdg"
)

func i64(v int64) *int64 { return &v }

// syntheticRows covers every kind of row: measured, probe failure,
// fail-open, pass-through, and an unknown cached part.
func syntheticRows() []ledger.Row {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	son, opus := "claude-sonnet-4-5", "claude-opus-4-1"
	return []ledger.Row{
		{ID: "1", Time: t0, Session: "A", Model: son, Status: 200, Projected: true,
			Counterfactual: i64(10000), CounterfactualCached: i64(0),
			Usage:      ledger.Usage{Input: 100, CacheWrite5m: 2000, Output: 50},
			Projection: &ledger.ProjectionStats{OriginalMessages: 10, ServedMessages: 6, OriginalBytes: 40960, ServedBytes: 20480, Evicted: 2}},
		{ID: "2", Time: t0.Add(time.Minute), Session: "A", Model: son, Status: 200, Projected: true,
			Counterfactual: i64(12000), CounterfactualCached: i64(10000),
			Usage:      ledger.Usage{Input: 50, CacheWrite5m: 500, CacheRead: 2000, Output: 40},
			Projection: &ledger.ProjectionStats{OriginalMessages: 12, ServedMessages: 7, OriginalBytes: 51200, ServedBytes: 22528, Reprojected: true}},
		{ID: "3", Time: t0.Add(2 * time.Minute), Session: "A", Model: son, Status: 200, Projected: true,
			CounterfactualNull: "count_tokens: status 529", Usage: ledger.Usage{Input: 10, CacheRead: 3000}},
		{ID: "4", Time: t0.Add(3 * time.Minute), Session: "A", Model: son, Status: 200, FailOpen: true, FailOpenReason: "projection panic",
			Counterfactual: i64(5000), Usage: ledger.Usage{Input: 5000}},
		{ID: "5", Time: t0.Add(4 * time.Minute), Session: "A", Model: son, Status: 200,
			Usage: ledger.Usage{Input: 7, CacheRead: 1000}},
		{ID: "6", Time: t0.Add(5 * time.Minute), Session: "B", Model: opus, Status: 200, Projected: true,
			Counterfactual: i64(1000), Usage: ledger.Usage{Input: 100}},
	}
}

func TestBuildExactNumbers(t *testing.T) {
	rep := Build(syntheticRows(), "")
	require.Len(t, rep.Sessions, 2)
	b, a := rep.Sessions[0], rep.Sessions[1] // newest first
	require.Equal(t, "A", a.Session)
	require.Equal(t, "B", b.Session)

	assert.Equal(t, int64(5), a.Requests)
	assert.Equal(t, int64(3), a.Projected)
	assert.Equal(t, int64(2), a.Measured)
	assert.Equal(t, int64(22000), a.Counterfactual)
	// 10000-(100+2000) + 12000-(50+500+2000)
	assert.Equal(t, int64(7900+9450), a.SavedTokens)
	assert.Equal(t, int64(1), a.ProbeFailures)
	assert.Equal(t, int64(1), a.FailOpenRows)
	// Sonnet $3/MTok: row 1 saves 3e-6*(1.25*10000) - 3e-6*(100+1.25*2000) = 0.0297;
	// row 2 saves 3e-6*(0.1*10000+1.25*2000) - 3e-6*(50+1.25*500+0.1*2000) = 0.007875.
	assert.InDelta(t, 0.0297+0.007875, a.SavedUSD, 1e-12)
	assert.Equal(t, ledger.Usage{Input: 5167, CacheWrite5m: 2500, CacheRead: 6000, Output: 90}, a.All)
	assert.InDelta(t, 6000.0/13667.0, a.CacheHit, 1e-12)
	assert.InDelta(t, 100*17350.0/22000.0, a.SavedPercent, 1e-9)

	// Unknown cached part: the baseline is priced as all cache reads, so
	// 900 tokens saved are worth 15e-6*(0.1*1000) - 15e-6*100 = 0 dollars.
	assert.Equal(t, int64(900), b.SavedTokens)
	assert.InDelta(t, 0, b.SavedUSD, 1e-12)

	assert.Equal(t, int64(18250), rep.Total.SavedTokens)
	assert.Equal(t, int64(6), rep.Total.Requests)
	assert.InDelta(t, 0.037575, rep.Total.SavedUSD, 1e-12)

	only := Build(syntheticRows(), "B")
	require.Len(t, only.Sessions, 1)
	assert.Equal(t, int64(900), only.Total.SavedTokens)
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Build(syntheticRows(), "").WriteText(&buf))
	out := buf.String()
	for _, want := range []string{"session A", "saved", "17,350 tokens (78.9% of counterfactual) · $0.0376", "1 probe failures · 1 fail-opens", "TOTAL", "18,250"} {
		assert.Contains(t, out, want)
	}
	buf.Reset()
	require.NoError(t, Build(nil, "").WriteText(&buf))
	assert.Contains(t, buf.String(), "ledger is empty")
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Build(syntheticRows(), "").WriteJSON(&buf))
	var got struct {
		Total struct {
			SavedTokens int64 `json:"saved_tokens"`
			FailOpens   int64 `json:"fail_open_rows"`
		} `json:"total"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	assert.Equal(t, int64(18250), got.Total.SavedTokens)
	assert.Equal(t, int64(1), got.Total.FailOpens)
}

func TestLoadFromLedger(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", home)
	d := xdg.Resolve()
	for _, r := range syntheticRows() {
		require.NoError(t, ledger.Record(d, &r))
	}
	rows, skipped, err := Load(d)
	require.NoError(t, err)
	assert.Zero(t, skipped)
	assert.Equal(t, int64(18250), Build(rows, "").Total.SavedTokens)
}

func TestWriteHTMLWellFormed(t *testing.T) {
	for _, rows := range [][]ledger.Row{syntheticRows(), nil} {
		var buf bytes.Buffer
		require.NoError(t, Build(rows, "").WriteHTML(&buf, time.Unix(0, 0)))
		page := buf.String()
		dec := xml.NewDecoder(strings.NewReader(page))
		dec.Strict = true
		dec.Entity = xml.HTMLEntity
		depth, elems := 0, 0
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "page must be well-formed")
			switch tok.(type) {
			case xml.StartElement:
				depth++
				elems++
			case xml.EndElement:
				depth--
			}
		}
		assert.Zero(t, depth)
		assert.Greater(t, elems, 20)
		for _, bad := range []string{"<script", " src=", "href=", "@import", "url("} {
			assert.NotContains(t, page, bad, "the page must be self-contained")
		}
		if rows != nil {
			assert.Equal(t, 4, strings.Count(page, "<svg "))
			assert.Contains(t, page, "2 projected requests")
			assert.Contains(t, page, "<polyline")
		}
	}
}

// TestWriteTextRouted: an empty ledger is explained from what routing is,
// and a routed user is never told to route; with rows, the proxy's own
// counters follow, each figure saying what it covers.
func TestWriteTextRouted(t *testing.T) {
	started := time.Date(2026, 12, 7, 9, 30, 0, 0, time.Local)
	tests := []struct {
		name  string
		route *Route
		want  string
	}{
		{"not routed", &Route{}, "route Claude Code through the proxy with `synaxi wrap claude` or `synaxi install --route`"},
		{"routed, proxy down", &Route{Routed: true}, "routed through the proxy, but the proxy is not running"},
		{"routed, nothing sent yet", &Route{Routed: true, Proxy: &ProxyCounts{Started: started}}, "no session has sent a request through it since it started"},
		{"routed, worker scope", &Route{Routed: true, Scope: "worker", Proxy: &ProxyCounts{Started: started, Requests: 57, Messages: 44}},
			"the proxy forwarded 57 requests since 09:30 Dec 7 (44 Messages requests), projecting none: proxy.scope is worker"},
		{"routed, all, short sessions", &Route{Routed: true, Scope: "all", Proxy: &ProxyCounts{Started: started, Requests: 3, Messages: 3}},
			"projecting none: no conversation has grown long enough for the projection to pay yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Build(nil, "")
			rep.Route = tt.route
			var buf bytes.Buffer
			require.NoError(t, rep.WriteText(&buf))
			assert.Contains(t, buf.String(), tt.want)
			if tt.route.Routed {
				assert.NotContains(t, buf.String(), "install --route", "a routed user is not told to route")
			}
		})
	}
	rep := Build(syntheticRows(), "")
	rep.Route = &Route{Routed: true, Scope: "all", Proxy: &ProxyCounts{Started: started, Requests: 9, Messages: 8, Gated: 7, Projected: 5, FailOpens: 1}}
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	assert.Contains(t, buf.String(), "proxy, since it started at 09:30 Dec 7: 9 requests forwarded (8 Messages), 7 gated (one ledger row each), 5 projected, 1 fail-opens")
}
