package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

func ptr(n int64) *int64 { return &n }

func TestRowSaved(t *testing.T) {
	tests := []struct {
		name  string
		row   Row
		saved int64
		ok    bool
	}{
		{"saving", Row{Status: 200, Counterfactual: ptr(10000), Usage: Usage{Input: 100, CacheWrite5m: 900, CacheRead: 2000}}, 7000, true},
		{"overhead is negative", Row{Status: 200, Counterfactual: ptr(1000), Usage: Usage{Input: 100, CacheWrite1h: 1500}}, -600, true},
		{"null probe is excluded", Row{Status: 200, CounterfactualNull: "count_tokens: 500"}, 0, false},
		{"failed request is excluded", Row{Status: 529, Counterfactual: ptr(1000)}, 0, false},
		{"fail-open is excluded", Row{Status: 200, FailOpen: true, Counterfactual: ptr(1000)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved, ok := tt.row.Saved()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.saved, saved)
		})
	}
}

func TestSavedUSDIsCacheAwareAndConservative(t *testing.T) {
	const model = "claude-sonnet-4-6" // $3/MTok input
	served := Usage{Input: 1000, CacheRead: 9000, CacheWrite5m: 0}
	// Served input cost: 3e-6 * (1000 + 0.1*9000) = 0.0057.
	assert.InDelta(t, 0.0057, InputUSD(model, served), 1e-12)

	// Baseline: 90,000 cached read at 0.1x, 10,000 written at 1.25x.
	// 3e-6 * (9000 + 12500) = 0.0645; saved = 0.0645 - 0.0057.
	got := SavedUSD(model, 100000, ptr(90000), served, "")
	assert.InDelta(t, 0.0645-0.0057, got, 1e-12)

	// Unknown cached part: priced entirely as a read, the cheapest baseline.
	got = SavedUSD(model, 100000, nil, served, "")
	assert.InDelta(t, 3e-6*10000-0.0057, got, 1e-12)

	// A cached part larger than the counterfactual is clamped.
	got = SavedUSD(model, 1000, ptr(5000), Usage{}, "")
	assert.InDelta(t, 3e-6*100, got, 1e-12)

	// 1 h writes in the served request price the baseline's growth at 2x.
	got = SavedUSD(model, 2000, ptr(1000), Usage{CacheWrite1h: 10}, "")
	assert.InDelta(t, 3e-6*(100+2000)-3e-6*20, got, 1e-12)

	// So does a client that asked for an hour, though the projection
	// wrote its tail for five minutes.
	got = SavedUSD(model, 2000, ptr(1000), Usage{CacheWrite5m: 10}, "1h")
	assert.InDelta(t, 3e-6*(100+2000)-3e-6*12.5, got, 1e-12)
	row := Row{Projection: &ProjectionStats{ClientTTL: "1h"}}
	assert.Equal(t, "1h", row.ClientTTL())
	assert.Empty(t, (&Row{}).ClientTTL(), "a row without a projection: not known")
}

func TestPriceFor(t *testing.T) {
	assert.Equal(t, 2.0, PriceFor("claude-sonnet-5").Input)
	assert.Equal(t, 3.0, PriceFor("claude-sonnet-4-6").Input)
	assert.Equal(t, 5.0, PriceFor("claude-opus-4-8").Input)
	assert.Equal(t, 15.0, PriceFor("claude-opus-4-1-20250805").Input)
	assert.Equal(t, 1.0, PriceFor("claude-haiku-4-5").Input)
	assert.Equal(t, DefaultPrice, PriceFor("qwen3-coder:30b"))
}

func TestSummaryAdd(t *testing.T) {
	var s Summary
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s.Add(&Row{Time: now, Session: "s", Model: "claude-sonnet-4-6", Status: 200, Projected: true,
		Counterfactual: ptr(5000), CounterfactualCached: ptr(0), Usage: Usage{Input: 10, CacheWrite5m: 1000, Output: 50}})
	s.Add(&Row{Time: now.Add(time.Second), Session: "s", Status: 200, Projected: true,
		CounterfactualNull: "count_tokens: timeout", Usage: Usage{Input: 10, CacheRead: 1000}})
	s.Add(&Row{Time: now.Add(2 * time.Second), Session: "s", Status: 200, FailOpen: true, FailOpenReason: "panic",
		CounterfactualNull: "not measured: panic", Usage: Usage{Input: 7}})

	assert.EqualValues(t, 3, s.Requests)
	assert.EqualValues(t, 2, s.Projected)
	assert.EqualValues(t, 1, s.FailOpens)
	assert.EqualValues(t, 1, s.Measured)
	assert.EqualValues(t, 1, s.ProbeFailures, "a fail-open is not also a probe failure")
	assert.EqualValues(t, 5000-1010, s.SavedTokens)
	assert.Equal(t, "claude-sonnet-4-6", s.Model, "a row without a model keeps the last known one")
	assert.Equal(t, now.Add(2*time.Second), s.Updated)
	ratio, ok := s.CacheHitRatio()
	require.True(t, ok)
	assert.InDelta(t, 1000.0/2027.0, ratio, 1e-12)
	wantUSD := 3e-6*(1.25*5000) - 3e-6*(10+1.25*1000)
	assert.InDelta(t, wantUSD, s.SavedUSD, 1e-12)
	assert.False(t, math.IsNaN(s.SavedUSD))
}

func TestRecordAppendsAndSummarises(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", root)
	d := xdg.Resolve()

	_, err := ReadSummary(d, "sess/1")
	require.True(t, errors.Is(err, fs.ErrNotExist))

	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, Record(d, &Row{Session: "sess/1", Status: 200, Counterfactual: ptr(100), Usage: Usage{Input: 40}}))
		}()
	}
	wg.Wait()

	s, err := ReadSummary(d, "sess/1")
	require.NoError(t, err)
	assert.EqualValues(t, 20, s.Requests)
	assert.EqualValues(t, 20*60, s.SavedTokens)

	lines := 0
	skipped, err := statefile.ScanJSONL(Path(d), func([]byte) error { lines++; return nil })
	require.NoError(t, err)
	assert.Zero(t, skipped)
	assert.Equal(t, 20, lines)
	assert.Equal(t, filepath.Join(root, "synaxi", "ledger", "ledger.jsonl"), Path(d))

	all, err := Sessions(d)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, "sess/1", all[0].Session)
}

func TestRows(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	rows, err := Rows(d)
	require.NoError(t, err)
	assert.Empty(t, rows, "no ledger yet")
	cf := int64(100)
	for _, id := range []string{"req_a", "req_b"} {
		require.NoError(t, Record(d, &Row{ID: id, Session: "s", Status: 200, Counterfactual: &cf}))
	}
	rows, err = Rows(d)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "req_a", rows[0].ID)
	assert.Equal(t, "req_b", rows[1].ID)
	assert.Equal(t, int64(100), *rows[1].Counterfactual)

	require.NoError(t, statefile.AppendJSONL(Path(d), []int{1}))
	_, err = Rows(d)
	require.ErrorContains(t, err, "ledger row 3")
}

// TestCountsLog: the hook's counts are appended to noreread.log without a
// lock and added to noreread.json's document on reading; a torn line is
// skipped, and parallel appends lose nothing.
func TestCountsLog(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	_, err := ReadCounters(d, "s1")
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing counted")

	require.NoError(t, AddCounts(d, "s1", Counts{Denials: 1, Blocked: 1, TokensSaved: 700}))
	c, err := ReadCounters(d, "s1")
	require.NoError(t, err)
	assert.Equal(t, int64(700), c.TokensSaved, "the log alone")
	assert.Equal(t, "s1", c.Session)

	require.NoError(t, UpdateCounters(d, "s1", time.Unix(100, 0), func(c *Counters) { c.Stops++ }))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			assert.NoError(t, AddCounts(d, "s1", Counts{Denials: 1, Blocked: 1, TokensSaved: 10}))
		})
	}
	wg.Wait()
	require.NoError(t, AddCounts(d, "s1", Counts{Refunds: 1, Blocked: -1, TokensSaved: -10, LoopsBroken: 2}))
	f, err := os.OpenFile(CountsPath(d, "s1"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n+ 1 2") // a writer killed mid-line
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, AddCounts(d, "s1", Counts{Denials: 1, Blocked: 1, TokensSaved: 5}))

	c, err = ReadCounters(d, "s1")
	require.NoError(t, err)
	assert.Equal(t, Counters{V: Version, Session: "s1", Updated: c.Updated, Denials: 22, Refunds: 1, Blocked: 21,
		TokensSaved: 700 + 200 - 10 + 5, LoopsBroken: 2, Stops: 1}, *c)
}

func FuzzParseCounts(f *testing.F) {
	for _, s := range []string{"+ 1 0 1 700 0", "+ 0 1 -1 -700 0", "", "+ 1 2", "x 1 2 3 4 5"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		n, ok := ParseCounts(line)
		if !ok {
			return
		}
		again, ok := ParseCounts(fmt.Appendf(nil, "+ %d %d %d %d %d", n.Denials, n.Refunds, n.Blocked, n.TokensSaved, n.LoopsBroken))
		require.True(t, ok)
		require.Equal(t, n, again)
	})
}
