package extract

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/learning/read"
)

// labelledRow is one row of shared/fixtures/learning/labels.tsv.
type labelledRow struct {
	file, uuid, label, dimension, rule, span string
}

func readLabelled(t *testing.T, dir string) []labelledRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "labels.tsv"))
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	recs, err := r.ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"file", "record_uuid", "label", "dimension", "durable_rule", "verbatim_span"}, recs[0])
	var out []labelledRow
	for _, c := range recs[1:] {
		out = append(out, labelledRow{c[0], c[1], c[2], c[3], c[4], c[5]})
	}
	return out
}

// language guesses the language of a turn from its commonest short words;
// "en" when nothing else wins. It only groups the figures.
func language(text string) string {
	common := map[string][]string{
		"de": {"ich", "du", "und", "der", "die", "das", "nicht", "ist", "mit", "wir", "sie", "ein", "eine", "auf", "den", "zu", "wenn", "aber", "bitte", "sollst", "solltest"},
		"fr": {"je", "tu", "et", "le", "la", "les", "des", "est", "pas", "une", "un", "avec", "pour", "que", "nous", "vous", "ne", "quand"},
		"es": {"yo", "el", "los", "las", "es", "una", "con", "para", "que", "pero", "por", "cuando", "siempre", "nunca", "usa"},
		"en": {"i", "you", "the", "and", "is", "it", "to", "of", "a", "not", "with", "this", "that", "we", "can", "for"},
	}
	score := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		for lang, ws := range common {
			if slices.Contains(ws, w) {
				score[lang]++
			}
		}
	}
	best := "en"
	for _, l := range []string{"de", "fr", "es"} {
		if score[l] > score[best] {
			best = l
		}
	}
	return best
}

// overlaps reports whether quote and span share text in turn: one holds
// the other, or their byte ranges in the turn's text intersect.
func overlaps(turn, quote, span string) bool {
	if span == "" || quote == "" {
		return false
	}
	if strings.Contains(quote, span) || strings.Contains(span, quote) {
		return true
	}
	qi, si := strings.Index(turn, quote), strings.Index(turn, span)
	return qi >= 0 && si >= 0 && qi < si+len(span) && si < qi+len(quote)
}

type prScore struct{ tp, candidates, found, durable int }

func (s prScore) precision() float64 { return ratio(s.tp, s.candidates) }
func (s prScore) recall() float64    { return ratio(s.found, s.durable) }

// TestLabelledSetPrecisionRecall measures the embedded extractor, as the
// drain runs it (Read, Extract, Validate), on every human-typed turn of
// the hand-labelled development set (shared/fixtures/learning, labels.tsv;
// LABELLING.md says how it was labelled). A candidate is right when its
// turn is labelled durable and its quote overlaps the labelled span;
// precision is right candidates over all candidates, recall is durable
// turns with a right candidate over durable turns. Reported per language
// (-v); the floors are the issue's: recall ≥ 0.7, precision ≥ 0.8
// (per language, recall ≥ 0.6).
func TestLabelledSetPrecisionRecall(t *testing.T) {
	dir := filepath.Join(filepath.Dir(sharedFixtures(t)), "learning")
	rows := readLabelled(t, dir)
	byUUID := map[string]labelledRow{}
	var files []string
	for _, r := range rows {
		byUUID[r.uuid] = r
		if !slices.Contains(files, r.file) {
			files = append(files, r.file)
		}
	}
	texts := map[string]string{}
	lang := map[string]string{}
	perLang := map[string]*prScore{}
	get := func(l string) *prScore {
		if perLang[l] == nil {
			perLang[l] = &prScore{}
		}
		return perLang[l]
	}
	perKind := map[string]*tally{}
	kind := func(r labelledRow) *tally {
		k := r.label
		if r.label == "durable" {
			k = r.dimension
		}
		if k == "" {
			k = "unlabelled"
		}
		if perKind[k] == nil {
			perKind[k] = &tally{}
		}
		return perKind[k]
	}
	found := map[string]bool{}
	var report []string
	for _, f := range files {
		d, err := read.Read(filepath.Join(dir, f), 0)
		require.NoError(t, err, f)
		for _, tr := range d.Turns {
			texts[tr.UUID] = tr.Text
		}
		obs, err := Embedded{}.Extract(context.Background(), d, nil)
		require.NoError(t, err)
		kept, _ := Validate(d, obs)
		for _, o := range kept {
			ev := o.Evidence[0]
			r, ok := byUUID[ev.UUID]
			l := language(texts[ev.UUID])
			if ok {
				l = language(r.span + " " + texts[ev.UUID])
			}
			s := get(l)
			s.candidates++
			kind(r).candidates++
			right := ok && r.label == "durable" && overlaps(texts[ev.UUID], ev.Quote, r.span)
			if right {
				s.tp++
				if !found[ev.UUID] {
					kind(r).found++
				}
				kind(r).right++
				found[ev.UUID] = true
			}
			verdict := "right"
			if !right {
				verdict = "WRONG (" + r.label + ")"
			}
			report = append(report, fmt.Sprintf("  %s %s: %s %q", l, verdict, o.Dimension, ev.Quote))
		}
	}
	all := prScore{}
	for _, r := range rows {
		l := language(r.span + " " + texts[r.uuid])
		lang[r.uuid] = l
		if r.label != "durable" {
			continue
		}
		get(l).durable++
		kind(r).durable++
		if found[r.uuid] {
			get(l).found++
		} else {
			report = append(report, fmt.Sprintf("  %s missed: %q (%s)", l, r.span, r.file))
		}
	}
	var langs []string
	for l, s := range perLang {
		langs = append(langs, l)
		all.tp += s.tp
		all.candidates += s.candidates
		all.found += s.found
		all.durable += s.durable
	}
	slices.Sort(langs)
	var b strings.Builder
	for _, l := range langs {
		s := perLang[l]
		fmt.Fprintf(&b, "%s: precision %.2f (%d/%d)  recall %.2f (%d/%d)\n", l, s.precision(), s.tp, s.candidates, s.recall(), s.found, s.durable)
	}
	fmt.Fprintf(&b, "all: precision %.2f (%d/%d)  recall %.2f (%d/%d)\n", all.precision(), all.tp, all.candidates, all.recall(), all.found, all.durable)
	t.Logf("labelled set, %d turns:\n%s%s%s", len(rows), b.String(), table("per kind (a durable row's dimension, else its label)", perKind), strings.Join(report, "\n"))
	assert.GreaterOrEqual(t, all.recall(), 0.7, "recall of durable items")
	assert.GreaterOrEqual(t, all.precision(), 0.8, "precision of candidates")
	for _, l := range langs {
		s := perLang[l]
		if s.durable > 0 {
			// Per language the floor is lower: English holds the
			// Durban-Designer sessions' architecture statements ("it's the
			// only entry and exit for our library"), which no structure
			// reads (0.64 in issue 24).
			assert.GreaterOrEqual(t, s.recall(), 0.6, "recall, %s", l)
		}
		if s.candidates > 0 {
			assert.GreaterOrEqual(t, s.precision(), 0.8, "precision, %s", l)
		}
	}
}

// TestLabelledTypedSpans checks the reader's split against the labels: the
// span of every durable turn lies in what the person typed, and every turn
// labelled pasted (more than half its characters copied from elsewhere)
// has less than half its characters in typed spans.
func TestLabelledTypedSpans(t *testing.T) {
	dir := filepath.Join(filepath.Dir(sharedFixtures(t)), "learning")
	docs := map[string]*read.Doc{}
	for _, r := range readLabelled(t, dir) {
		d := docs[r.file]
		if d == nil {
			var err error
			d, err = read.Read(filepath.Join(dir, r.file), 0)
			require.NoError(t, err)
			docs[r.file] = d
		}
		tr := d.Turn(r.uuid)
		if tr == nil && r.label == "pasted" {
			continue // the reader is stricter: an agent's prompt in a user record (a 1.x sidechain) is no turn at all
		}
		require.NotNil(t, tr, "%s: labelled turn %s is not a human turn", r.file, r.uuid)
		switch r.label {
		case "durable":
			assert.True(t, slices.ContainsFunc(tr.Typed(), func(p string) bool { return strings.Contains(p, r.span) }),
				"%s: the durable span %q is not typed", r.file, r.span)
		case "pasted":
			assert.Less(t, typedShare(tr.Text, tr.Spans), 0.5, "%s: pasted turn %s read as typed", r.file, r.uuid)
		}
	}
}

// typedShare is the share of text's non-space characters in typed spans.
func typedShare(text string, spans []read.Span) float64 {
	typed, all := 0, 0
	for _, s := range spans {
		c := 0
		for _, r := range text[s.Start:s.End] {
			if !unicode.IsSpace(r) {
				c++
			}
		}
		all += c
		if s.Kind == read.Typed {
			typed += c
		}
	}
	if all == 0 {
		return 0
	}
	return float64(typed) / float64(all)
}
