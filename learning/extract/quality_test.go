package extract

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/synaxi/synaxi/learning/read"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/store"
)

// A labelled row: what a careful reader learns from one turn, or "-".
type label struct {
	file  string // fixtures: relative path; constructed: the preceding action
	line  int    // fixtures only
	dim   string
	quote string
	turn  string // constructed only
}

func readLabels(t *testing.T, path string, constructed bool) []label {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []label
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		require.Len(t, c, 4, "%s: %q", path, line)
		switch {
		case !constructed:
			n, err := strconv.Atoi(c[1])
			require.NoError(t, err, line)
			out = append(out, label{file: c[0], line: n, dim: c[2], quote: c[3]})
		default:
			out = append(out, label{file: c[0], dim: c[1], quote: c[2], turn: c[3]})
		}
		require.True(t, out[len(out)-1].dim == "-" || store.ValidDimension(out[len(out)-1].dim), line)
	}
	require.NoError(t, sc.Err())
	return out
}

// confusion counts observations against labels, per dimension.
type confusion struct {
	tp, fp, fn map[string]int
	falsePos   []string
	misses     []string
}

func newConfusion() *confusion {
	return &confusion{tp: map[string]int{}, fp: map[string]int{}, fn: map[string]int{}}
}

// score compares what was kept from one turn with that turn's rows.
func (c *confusion) score(where string, kept []store.Observation, rows []label) {
	matched := map[int]bool{}
	for _, o := range kept {
		q := o.Evidence[0].Quote
		i := slices.IndexFunc(rows, func(r label) bool { return r.dim != "-" && r.quote == q && !matched[slices.Index(rows, r)] })
		if i >= 0 && rows[i].dim == o.Dimension {
			matched[i] = true
			c.tp[o.Dimension]++
			continue
		}
		c.fp[o.Dimension]++
		c.falsePos = append(c.falsePos, fmt.Sprintf("%s %s %q (from %q)", where, o.Dimension, o.Text, q))
	}
	for i, r := range rows {
		if r.dim != "-" && !matched[i] {
			c.fn[r.dim]++
			c.misses = append(c.misses, fmt.Sprintf("%s %s %q", where, r.dim, r.quote))
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (c *confusion) precision() float64 { return ratio(sum(c.tp), sum(c.tp)+sum(c.fp)) }
func (c *confusion) recall() float64    { return ratio(sum(c.tp), sum(c.tp)+sum(c.fn)) }

func (c *confusion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "overall: precision %.2f (%d/%d)  recall %.2f (%d/%d)\n", c.precision(), sum(c.tp), sum(c.tp)+sum(c.fp),
		c.recall(), sum(c.tp), sum(c.tp)+sum(c.fn))
	for _, d := range store.Dimensions {
		if c.tp[d]+c.fp[d]+c.fn[d] == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %-13s tp %2d  fp %2d  fn %2d  precision %.2f  recall %.2f\n", d, c.tp[d], c.fp[d], c.fn[d],
			ratio(c.tp[d], c.tp[d]+c.fp[d]), ratio(c.tp[d], c.tp[d]+c.fn[d]))
	}
	for _, s := range c.falsePos {
		fmt.Fprintf(&b, "  false positive: %s\n", s)
	}
	for _, s := range c.misses {
		fmt.Fprintf(&b, "  missed: %s\n", s)
	}
	return b.String()
}

// heldOut names the sessions of fixtures.tsv kept out of tuning.
func heldOut(file string) bool {
	return strings.HasPrefix(file, "8463c716") || strings.HasPrefix(file, "fa812bfe")
}

// TestExtractionQualityOnFixtures scores the embedded extractor on every
// human-typed turn of the shared fixtures (testdata/fixtures.tsv): the file
// must list every turn, and precision and recall must stay above floors.
// Run with -v for the confusion summary, the false positives and misses.
func TestExtractionQualityOnFixtures(t *testing.T) {
	fixtures := sharedFixtures(t)
	rows := readLabels(t, "testdata/fixtures.tsv", false)
	byFile := map[string][]label{}
	for _, r := range rows {
		byFile[r.file] = append(byFile[r.file], r)
	}
	all, tune, held := newConfusion(), newConfusion(), newConfusion()
	// Sessions are read oldest first and what was kept is known to the
	// next ones, as in a backfill, so the repetition cue is measured too.
	var docs []*read.Doc
	for _, f := range fixtureFiles(t) {
		if rel, err := filepath.Rel(fixtures, f); err == nil && !strings.HasPrefix(rel, "..") {
			d, err := read.Read(f, 0)
			require.NoError(t, err)
			docs = append(docs, d)
		}
	}
	slices.SortStableFunc(docs, func(a, b *read.Doc) int { return a.End.Compare(b.End) })
	var known []store.Entry
	for _, d := range docs {
		rel, _ := filepath.Rel(fixtures, d.Path)
		obs, err := Embedded{}.Extract(context.Background(), d, known)
		require.NoError(t, err)
		kept, _ := Validate(d, obs)
		for _, o := range kept {
			known = append(known, store.Entry{ID: fmt.Sprint(len(known)), Dimension: o.Dimension, Text: o.Text, Evidence: o.Evidence})
		}
		for _, tr := range d.Turns {
			var turnRows []label
			for _, r := range byFile[rel] {
				if r.line == tr.Line {
					assert.Contains(t, tr.Text, r.quote, "%s:%d", rel, r.line)
					turnRows = append(turnRows, r)
				}
			}
			assert.NotEmpty(t, turnRows, "fixtures.tsv has no row for the human turn %s:%d %q", rel, tr.Line, tr.Text)
			var got []store.Observation
			for _, o := range kept {
				if o.Evidence[0].UUID == tr.UUID {
					got = append(got, o)
				}
			}
			where := fmt.Sprintf("%s:%d", filepath.Base(rel), tr.Line)
			all.score(where, got, turnRows)
			if heldOut(rel) {
				held.score(where, got, turnRows)
			} else {
				tune.score(where, got, turnRows)
			}
		}
	}
	t.Logf("all %d labelled rows:\n%s", len(rows), all)
	t.Logf("tuning part:\n%s", tune)
	t.Logf("held-out part:\n%s", held)
	assert.GreaterOrEqual(t, all.precision(), 0.9, "precision on the fixtures")
	assert.GreaterOrEqual(t, all.recall(), 0.8, "recall of labelled corrections on the fixtures")
}

// constructedSession writes one session: the action, then the typed turn.
func constructedSession(t *testing.T, i int, action, typed string) string {
	t.Helper()
	var parts [][2]string
	switch {
	case strings.HasPrefix(action, "bash:"):
		parts = append(parts, [2]string{"bash", strings.TrimPrefix(action, "bash:")})
	case action == "edit":
		parts = append(parts, [2]string{"raw", `{"type":"assistant","uuid":"e0","sessionId":"c","timestamp":"2026-11-20T08:00:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/repo/x.go"}}]}}`})
	case action == "ask":
		parts = append(parts, [2]string{"assistant", "Done. Which option would you like, 1, 2 or 3?"})
	}
	parts = append(parts, [2]string{"user", typed})
	return session(t, fmt.Sprintf("c%02d", i), "/repo", parts...)
}

// TestExtractionQualityOnConstructedTurns scores the extractor on the
// hand-written turns of testdata/constructed.tsv (tuned on) and
// testdata/heldout.tsv (written after tuning, never tuned on).
func TestExtractionQualityOnConstructedTurns(t *testing.T) {
	for _, tt := range []struct {
		file              string
		precision, recall float64
	}{
		{"testdata/constructed.tsv", 0.9, 0.8},
		{"testdata/heldout.tsv", 0.85, 0.85},
	} {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			c := scoreConstructed(t, tt.file)
			assert.GreaterOrEqual(t, c.precision(), tt.precision, "precision on %s", tt.file)
			assert.GreaterOrEqual(t, c.recall(), tt.recall, "recall on %s", tt.file)
		})
	}
}

func scoreConstructed(t *testing.T, file string) *confusion {
	rows := readLabels(t, file, true)
	c := newConfusion()
	byTurn := map[string][]label{}
	var order []string
	for _, r := range rows {
		k := r.file + "\x00" + r.turn
		if _, ok := byTurn[k]; !ok {
			order = append(order, k)
		}
		byTurn[k] = append(byTurn[k], r)
	}
	for i, k := range order {
		rs := byTurn[k]
		kept, _ := extract(t, constructedSession(t, i, rs[0].file, rs[0].turn))
		c.score(fmt.Sprintf("%q", rs[0].turn), kept, rs)
	}
	t.Logf("%d turns of %s:\n%s", len(order), file, c)
	return c
}
