package savings

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/synaxi/synaxi/internal/ledger"
)

// WriteHTML writes a self-contained page (inline CSS and SVG, no external
// assets or scripts) with savings over time, the cache-hit ratio and what
// the projection dropped. The markup is well-formed XML as well as HTML.
func (rep *Report) WriteHTML(w io.Writer, generated time.Time) error {
	rows := append([]ledger.Row(nil), rep.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Time.Before(rows[j].Time) })

	var cumTok, cumUSD, hit []float64
	var tok, usd float64
	var dropped, served []float64
	var st struct{ origMsgs, servedMsgs, origBytes, servedBytes, evicted, reproj, projected int }
	for i := range rows {
		r := &rows[i]
		if saved, ok := r.Saved(); ok {
			tok += float64(saved)
			usd += ledger.SavedUSD(r.Model, *r.Counterfactual, r.CounterfactualCached, r.Usage, r.ClientTTL())
		}
		cumTok = append(cumTok, tok)
		cumUSD = append(cumUSD, usd)
		if b := r.Usage.BilledInput(); b > 0 {
			hit = append(hit, 100*float64(r.Usage.CacheRead)/float64(b))
		}
		if p := r.Projection; p != nil && r.Projected {
			st.projected++
			st.origMsgs += p.OriginalMessages
			st.servedMsgs += p.ServedMessages
			st.origBytes += p.OriginalBytes
			st.servedBytes += p.ServedBytes
			st.evicted += p.Evicted
			if p.Reprojected {
				st.reproj++
			}
			served = append(served, float64(p.ServedBytes)/1024)
			dropped = append(dropped, float64(max(p.OriginalBytes-p.ServedBytes, 0))/1024)
		}
	}
	t := rep.Total
	span := ""
	if len(rows) > 0 {
		span = fmt.Sprintf(" from %s to %s", rows[0].Time.UTC().Format("2006-01-02 15:04"), rows[len(rows)-1].Time.UTC().Format("2006-01-02 15:04 MST"))
	}
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>synaxi savings report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
.kpi{display:inline-block;margin:0 2em 1em 0}.kpi b{display:block;font-size:1.6em}
.note{color:#666;font-size:.9em}svg{background:#fafafa;border:1px solid #eee}
</style></head><body>
<h1>synaxi savings report</h1>
`)
	fmt.Fprintf(&b, "<p class=\"note\">Generated %s from %d ledger rows. Savings count only requests measured with the provider's count_tokens; %d probe failures and %d fail-opens are excluded.</p>\n",
		esc(generated.UTC().Format(time.RFC3339)), len(rows), t.ProbeFailures, t.FailOpenRows)
	fmt.Fprintf(&b, "<div><span class=\"kpi\">saved tokens<b>%s</b></span><span class=\"kpi\">saved (cache-aware)<b>$%.2f</b></span><span class=\"kpi\">of counterfactual<b>%.1f%%</b></span><span class=\"kpi\">cache hit ratio<b>%.1f%%</b></span></div>\n",
		n(t.SavedTokens), t.SavedUSD, t.SavedPercent, 100*t.CacheHit)

	fmt.Fprintf(&b, "<h2>Savings over time</h2>\n<p class=\"note\">Requests in time order%s.</p>\n", esc(span))
	b.WriteString(lineChart("cumulative saved tokens", cumTok, "%.0f"))
	b.WriteString(lineChart("cumulative saved dollars", cumUSD, "$%.2f"))
	b.WriteString("<h2>Cache-hit ratio per request</h2>\n")
	b.WriteString(lineChart("cache reads / billed input (%)", hit, "%.0f%%"))
	b.WriteString("<h2>What the projection dropped</h2>\n")
	if st.projected == 0 {
		b.WriteString("<p>No projected requests yet.</p>\n")
	} else {
		fmt.Fprintf(&b, "<p>%d projected requests: %s of %s messages served, %s KiB of %s KiB served (%s KiB dropped), %d world entries evicted, %d re-projections.</p>\n",
			st.projected, n(int64(st.servedMsgs)), n(int64(st.origMsgs)), n(int64(st.servedBytes/1024)), n(int64(st.origBytes/1024)),
			n(int64((st.origBytes-st.servedBytes)/1024)), st.evicted, st.reproj)
		b.WriteString(barChart("KiB per projected request: served (dark) and dropped (light)", served, dropped))
	}
	b.WriteString("<h2>Sessions</h2>\n<table><tr><th>session</th><th>model</th><th>requests</th><th>measured</th><th>counterfactual</th><th>billed input</th><th>saved tokens</th><th>saved $</th><th>cache hit</th><th>probe failures</th><th>fail-opens</th></tr>\n")
	for _, s := range append(append([]*Session(nil), rep.Sessions...), t) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%.4f</td><td>%.1f%%</td><td>%d</td><td>%d</td></tr>\n",
			esc(s.Session), esc(s.Model), s.Requests, s.Measured, n(s.Counterfactual), n(s.MeasuredUsage.BilledInput()), n(s.SavedTokens), s.SavedUSD, 100*s.CacheHit, s.ProbeFailures, s.FailOpenRows)
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

const cw, ch, pad = 900.0, 220.0, 50.0

// lineChart draws ys against their index as an inline SVG polyline.
func lineChart(title string, ys []float64, yfmt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" role=\"img\" aria-label=\"%s\">", cw, ch, esc(title))
	fmt.Fprintf(&b, "<text x=\"%g\" y=\"16\" font-size=\"12\">%s</text>", pad, esc(title))
	if len(ys) == 0 {
		fmt.Fprintf(&b, "<text x=\"%g\" y=\"%g\" font-size=\"12\" fill=\"#888\">no data</text></svg>\n", pad, ch/2)
		return b.String()
	}
	lo, hi := minMax(ys)
	axes(&b, lo, hi, yfmt, len(ys))
	b.WriteString("<polyline fill=\"none\" stroke=\"#2a6fdb\" stroke-width=\"2\" points=\"")
	for i, y := range ys {
		fmt.Fprintf(&b, "%.1f,%.1f ", x(i, len(ys)), yPix(y, lo, hi))
	}
	b.WriteString("\"/></svg>\n")
	return b.String()
}

// barChart stacks b over a per index.
func barChart(title string, a, top []float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" role=\"img\" aria-label=\"%s\">", cw, ch, esc(title))
	fmt.Fprintf(&b, "<text x=\"%g\" y=\"16\" font-size=\"12\">%s</text>", pad, esc(title))
	sums := make([]float64, len(a))
	for i := range a {
		sums[i] = a[i] + top[i]
	}
	_, hi := minMax(sums)
	axes(&b, 0, hi, "%.0f", len(a))
	bw := max((cw-2*pad)/float64(len(a))-1, 1)
	for i := range a {
		x0 := pad + float64(i)*(cw-2*pad)/float64(len(a))
		y1 := yPix(a[i], 0, hi)
		y2 := yPix(sums[i], 0, hi)
		fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#2a6fdb\"/>", x0, y1, bw, ch-pad-y1)
		fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#b8cff5\"/>", x0, y2, bw, y1-y2)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func axes(b *strings.Builder, lo, hi float64, yfmt string, count int) {
	fmt.Fprintf(b, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#999\"/>", pad, ch-pad, cw-pad, ch-pad)
	fmt.Fprintf(b, "<line x1=\"%g\" y1=\"30\" x2=\"%g\" y2=\"%g\" stroke=\"#999\"/>", pad, pad, ch-pad)
	fmt.Fprintf(b, "<text x=\"4\" y=\"%.1f\" font-size=\"10\">%s</text>", yPix(hi, lo, hi)+4, esc(fmt.Sprintf(yfmt, hi)))
	fmt.Fprintf(b, "<text x=\"4\" y=\"%.1f\" font-size=\"10\">%s</text>", yPix(lo, lo, hi)+4, esc(fmt.Sprintf(yfmt, lo)))
	fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" font-size=\"10\">request 1</text>", pad, ch-pad+16)
	fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" font-size=\"10\" text-anchor=\"end\">request %d</text>", cw-pad, ch-pad+16, count)
}

func minMax(ys []float64) (lo, hi float64) {
	lo, hi = 0, 0
	for _, y := range ys {
		lo, hi = min(lo, y), max(hi, y)
	}
	if hi == lo {
		hi = lo + 1
	}
	return lo, hi
}

func x(i, count int) float64 {
	if count <= 1 {
		return pad
	}
	return pad + float64(i)*(cw-2*pad)/float64(count-1)
}

func yPix(y, lo, hi float64) float64 { return ch - pad - (y-lo)/(hi-lo)*(ch-pad-30) }
