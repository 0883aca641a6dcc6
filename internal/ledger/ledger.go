// Package ledger is the savings ledger: one JSONL row per request the proxy
// measured, and a per-session summary the status line reads.
//
// Savings are never estimated. For a gated request the proxy asks the
// upstream's count_tokens what the original (unprojected) request would have
// cost in input tokens — the counterfactual — and records it beside the
// usage the upstream actually billed for the request it served:
//
//	saved = counterfactual − (input + cache write + cache read)
//
// signed, so overhead shows as a negative saving. A failed probe stores a
// null counterfactual with its reason; such rows are excluded from savings
// and counted, never filled in.
package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/statefile"
	"github.com/synaxi/synaxi/internal/xdg"
)

// Version is the row and summary schema version.
const Version = 1

// Usage is what the upstream billed, as its usage fields report it (the last
// message_delta for streams; the fields are cumulative).
type Usage struct {
	Input        int64 `json:"input_tokens"`
	CacheWrite5m int64 `json:"cache_write_5m_tokens"`
	CacheWrite1h int64 `json:"cache_write_1h_tokens"`
	CacheRead    int64 `json:"cache_read_tokens"`
	Output       int64 `json:"output_tokens"`
}

// BilledInput is every input token the request was charged for, at any rate.
func (u Usage) BilledInput() int64 { return u.Input + u.CacheWrite5m + u.CacheWrite1h + u.CacheRead }

// Add sums usage.
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.CacheWrite5m += o.CacheWrite5m
	u.CacheWrite1h += o.CacheWrite1h
	u.CacheRead += o.CacheRead
	u.Output += o.Output
}

// ProjectionStats describes what the projection did to one request.
type ProjectionStats struct {
	OriginalMessages int    `json:"original_messages"`
	ServedMessages   int    `json:"served_messages"`
	OriginalBytes    int    `json:"original_bytes"`
	ServedBytes      int    `json:"served_bytes"`
	WorldEntries     int    `json:"world_entries"`
	Evicted          int    `json:"evicted"`
	Reprojected      bool   `json:"reprojected"`
	Breakpoints      int    `json:"breakpoints"`
	Note             string `json:"note,omitempty"`
	// NotEngaged, when set, says why the request was forwarded as the
	// client sent it, byte for byte but for its tool roster (tools never
	// called served as stubs, when projection.stub_tools is on): the
	// projection engages only once its cost model predicts a saving.
	NotEngaged string `json:"not_engaged,omitempty"`
	// ClientTTL is "1h" when the client asked for the one-hour cache TTL
	// (a projection marks its tail for five minutes even then, so the
	// served request's writes do not show it); empty for five minutes.
	ClientTTL string `json:"client_ttl,omitempty"`
}

// Row is one measured request.
type Row struct {
	V       int       `json:"v"`
	ID      string    `json:"id"`                  // proxy-assigned request id
	Upstrm  string    `json:"upstream_request_id"` // upstream's request-id header, if any
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Agent   string    `json:"agent,omitempty"`
	Model   string    `json:"model"`
	Status  int       `json:"status"`

	Projected      bool   `json:"projected"`
	FailOpen       bool   `json:"fail_open"`
	FailOpenReason string `json:"fail_open_reason,omitempty"`
	// Passed says why a Messages request in the projection's scope was
	// not handed to the engine (a side request: title generation, a quota
	// probe, the compaction summary, …); it was forwarded as sent and is
	// not measured. Empty for a gated request, whose projection stats say
	// why it was not projected when it was not (not_engaged).
	Passed string `json:"passed,omitempty"`

	// Counterfactual is count_tokens on the original body; nil when the probe
	// failed or the upstream has no count_tokens (see CounterfactualNull).
	Counterfactual     *int64 `json:"counterfactual_input_tokens"`
	CounterfactualNull string `json:"counterfactual_null_reason,omitempty"`
	// CounterfactualCached is how much of the counterfactual a perfect prefix
	// cache would have read: count_tokens on the conversation as the
	// request before it sent it (the original cut before its last assistant
	// message), 0 for a conversation's first request, nil when that probe
	// failed. It is read off the request itself, so any replica records the
	// same value. It only prices the counterfactual in dollars; see SavedUSD.
	CounterfactualCached *int64 `json:"counterfactual_cached_tokens"`

	Usage      Usage            `json:"usage"`
	Projection *ProjectionStats `json:"projection,omitempty"`

	// Loops are the loop governor's fires completed by the tool results
	// this request brought (docs/governor.md), as the proxy detects them
	// over the request's messages; the hook tells the agent.
	Loops []LoopFire `json:"loops,omitempty"`
}

// Saved returns counterfactual − billed input and whether the row counts
// as measured: it has a counterfactual, a successful response, and was not a
// fail-open (which served the original and so says nothing about
// projection).
func (r *Row) Saved() (int64, bool) {
	if r.Counterfactual == nil || r.Status/100 != 2 || r.FailOpen {
		return 0, false
	}
	return *r.Counterfactual - r.Usage.BilledInput(), true
}

// ClientTTL is the cache TTL the client asked for, as its projection
// recorded it ("1h", or empty: five minutes or not known).
func (r *Row) ClientTTL() string {
	if r.Projection == nil {
		return ""
	}
	return r.Projection.ClientTTL
}

// Summary is a session's totals, kept current by the proxy for the status
// line, which must never re-read the ledger.
type Summary struct {
	V       int       `json:"v"`
	Session string    `json:"session"`
	Updated time.Time `json:"updated"`
	Model   string    `json:"model"` // last model seen

	Requests      int64 `json:"requests"`       // every request routed for the session
	Projected     int64 `json:"projected"`      // of which projected
	FailOpens     int64 `json:"fail_opens"`     // projection/measurement faults that forwarded the original
	Measured      int64 `json:"measured"`       // rows with a counterfactual
	ProbeFailures int64 `json:"probe_failures"` // gated rows whose counterfactual is null

	// All is billed usage over every request of the session.
	All Usage `json:"all"`
	// Counterfactual and MeasuredUsage cover measured rows only.
	Counterfactual int64 `json:"counterfactual_input_tokens"`
	MeasuredUsage  Usage `json:"measured_usage"`
	SavedTokens    int64 `json:"saved_tokens"`
	// SavedUSD applies the price table (cache-aware) to measured rows.
	SavedUSD float64 `json:"saved_usd"`
}

// CacheHitRatio is cache reads over all billed input of the session.
func (s *Summary) CacheHitRatio() (float64, bool) {
	total := s.All.BilledInput()
	if total == 0 {
		return 0, false
	}
	return float64(s.All.CacheRead) / float64(total), true
}

// Add folds one row into the summary.
func (s *Summary) Add(r *Row) {
	s.V = Version
	s.Session = r.Session
	s.Updated = r.Time
	if r.Model != "" {
		s.Model = r.Model
	}
	s.Requests++
	if r.Projected {
		s.Projected++
	}
	if r.FailOpen {
		s.FailOpens++
	}
	s.All.Add(r.Usage)
	saved, ok := r.Saved()
	switch {
	case r.FailOpen:
		// Counted above; whatever its probe said, it measures no projection.
	case ok:
		s.Measured++
		s.Counterfactual += *r.Counterfactual
		s.MeasuredUsage.Add(r.Usage)
		s.SavedTokens += saved
		s.SavedUSD += SavedUSD(r.Model, *r.Counterfactual, r.CounterfactualCached, r.Usage, r.ClientTTL())
	case r.CounterfactualNull != "":
		s.ProbeFailures++
	}
}

// Path is the ledger file.
func Path(d xdg.Dirs) string { return d.StatePath("ledger", "ledger.jsonl") }

// SummaryPath is a session's summary file.
func SummaryPath(d xdg.Dirs, session string) string {
	return d.StatePath("ledger", "sessions", statefile.SafeName(session)+".json")
}

// Record appends r to the ledger and folds it into its session summary.
func Record(d xdg.Dirs, r *Row) error {
	r.V = Version
	if err := statefile.AppendJSONL(Path(d), r); err != nil {
		return err
	}
	return statefile.Update(SummaryPath(d, r.Session), func(s *Summary) error {
		s.Add(r)
		return nil
	})
}

// Rows reads every row of the ledger in the order they were written; a row
// that does not decode is an error naming its line. No ledger yet is no
// rows.
func Rows(d xdg.Dirs) ([]Row, error) {
	var rows []Row
	n := 0
	_, err := statefile.ScanJSONL(Path(d), func(line []byte) error {
		n++
		var r Row
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("ledger row %d: %w", n, err)
		}
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// ReadSummary loads a session's summary; errors.Is(err, fs.ErrNotExist) when
// nothing was recorded for it yet.
func ReadSummary(d xdg.Dirs, session string) (*Summary, error) {
	var s Summary
	if err := statefile.ReadJSON(SummaryPath(d, session), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Sessions lists the sessions that have a summary, newest first.
func Sessions(d xdg.Dirs) ([]*Summary, error) {
	dir := d.StatePath("ledger", "sessions")
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []*Summary
	for _, n := range names {
		var s Summary
		if err := statefile.ReadJSON(n, &s); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			continue // a summary that does not decode is skipped, not fatal
		}
		out = append(out, &s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// Price is a model's list price in dollars per million tokens.
type Price struct {
	Family string
	Input  float64
	Output float64
}

// Cache price multipliers on the input price (Anthropic pricing, 2026-08).
const (
	Write5mMultiplier = 1.25
	Write1hMultiplier = 2.0
	ReadMultiplier    = 0.1
)

// Prices is the documented price table, matched by substring of the model id
// in order (first match wins). Source: Anthropic's pricing page, 2026-08.
var Prices = []Price{
	{"fable-5", 10, 50},
	{"mythos-5", 10, 50},
	{"opus-5", 5, 25},
	{"opus-4-8", 5, 25},
	{"opus-4-7", 5, 25},
	{"opus-4-6", 5, 25},
	{"opus-4-5", 5, 25},
	{"opus-4-1", 15, 75},
	{"opus-4", 15, 75},
	{"sonnet-5", 2, 10},
	{"sonnet", 3, 15},
	{"haiku-4-5", 1, 5},
	{"haiku-3-5", 0.8, 4},
	{"haiku", 1, 5},
	{"opus", 5, 25},
}

// DefaultPrice applies to a model the table does not know (a local model
// behind a compatible endpoint is priced as Sonnet so savings stay visible).
var DefaultPrice = Price{"default", 3, 15}

// PriceFor looks up a model's price.
func PriceFor(model string) Price {
	m := strings.ToLower(model)
	for _, p := range Prices {
		if strings.Contains(m, p.Family) {
			return p
		}
	}
	return DefaultPrice
}

// InputUSD is what u's input cost, cache-aware.
func InputUSD(model string, u Usage) float64 {
	p := PriceFor(model).Input / 1e6
	return p * (float64(u.Input) +
		Write5mMultiplier*float64(u.CacheWrite5m) +
		Write1hMultiplier*float64(u.CacheWrite1h) +
		ReadMultiplier*float64(u.CacheRead))
}

// SavedUSD is what the unprojected request would have cost in input
// minus what the served request's input actually cost, cache-aware and
// conservative.
//
// The unprojected conversation would have been cached by Claude Code the way
// it always is: its previous prefix read at 0.1×, only its growth written.
// So the counterfactual is priced as cached tokens read and the rest written
// at the client's TTL: 1 h when clientTTL (Row.ClientTTL) says so or the
// served request wrote any 1 h entries, else 5 min. When the cached part is
// unknown the whole counterfactual is priced as a cache read, the cheapest
// the baseline could have been, so a saving is never overstated.
func SavedUSD(model string, counterfactual int64, cached *int64, u Usage, clientTTL string) float64 {
	p := PriceFor(model).Input / 1e6
	read := counterfactual
	if cached != nil {
		read = min(*cached, counterfactual)
	}
	write := Write5mMultiplier
	if clientTTL == "1h" || u.CacheWrite1h > 0 {
		write = Write1hMultiplier
	}
	baseline := p * (ReadMultiplier*float64(read) + write*float64(counterfactual-read))
	return baseline - InputUSD(model, u)
}
