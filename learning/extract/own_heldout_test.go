package extract

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownRow is one case of testdata/own-heldout.tsv: one session of one or
// more turns, each after the same action.
type ownRow struct {
	action, lang, kind, label, span string
	turns                           []string
}

func readOwn(t *testing.T, path string) []ownRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []ownRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		require.Len(t, c, 6, "%s: %q", path, line)
		require.Contains(t, []string{"durable", "task", "question", "pasted"}, c[3], line)
		require.Equal(t, c[3] == "durable", c[4] != "", "a durable row names its span, no other does: %q", line)
		r := ownRow{action: c[0], lang: c[1], kind: c[2], label: c[3], span: c[4]}
		for _, turn := range strings.Split(c[5], " ||| ") {
			r.turns = append(r.turns, strings.ReplaceAll(turn, `\n`, "\n"))
		}
		require.True(t, r.label != "durable" || slices.ContainsFunc(r.turns, func(s string) bool { return strings.Contains(s, r.span) }), "span in the turn: %q", line)
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

// tally is precision and recall counts for one group of cases.
type tally struct{ right, candidates, found, durable int }

func (s *tally) add(o tally) {
	s.right += o.right
	s.candidates += o.candidates
	s.found += o.found
	s.durable += o.durable
}

func (s tally) String() string {
	return fmt.Sprintf("precision %.2f (%d/%d), recall %.2f (%d/%d)", ratio(s.right, s.candidates), s.right, s.candidates,
		ratio(s.found, s.durable), s.found, s.durable)
}

// table prints groups sorted by name, then all of them.
func table(title string, groups map[string]*tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	var names []string
	all := tally{}
	for n, s := range groups {
		names = append(names, n)
		all.add(*s)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-26s %s\n", n, groups[n])
	}
	fmt.Fprintf(&b, "  %-26s %s\n", "all", all)
	return b.String()
}

// TestOwnHeldoutSet measures the embedded extractor on issue 24's own
// held-out set (testdata/own-heldout.tsv): a candidate is right when its
// row is durable and its quote overlaps the labelled span; recall counts
// durable rows with a right candidate. Printed per language and per kind
// (-v); the floors hold the figures measured when the set was frozen.
func TestOwnHeldoutSet(t *testing.T) {
	rows := readOwn(t, "testdata/own-heldout.tsv")
	perLang, perKind := map[string]*tally{}, map[string]*tally{}
	var report []string
	for i, r := range rows {
		var parts [][2]string
		for _, turn := range r.turns {
			switch {
			case strings.HasPrefix(r.action, "bash:"):
				parts = append(parts, [2]string{"bash", strings.TrimPrefix(r.action, "bash:")})
			case r.action == "edit":
				parts = append(parts, [2]string{"bash", "sed -i s/a/b/ main.go"})
			case r.action == "ask":
				parts = append(parts, [2]string{"assistant", "Done. Should I go on with the next step?"})
			}
			parts = append(parts, [2]string{"user", turn})
		}
		kept, _ := extract(t, session(t, fmt.Sprintf("own%02d", i), "/repo", parts...))
		s := tally{}
		if r.label == "durable" {
			s.durable = 1
		}
		for _, o := range kept {
			s.candidates++
			q := o.Evidence[0].Quote
			if r.label == "durable" && (strings.Contains(q, r.span) || strings.Contains(r.span, q)) {
				s.right++
				s.found = 1
				continue
			}
			report = append(report, fmt.Sprintf("  %s %s WRONG (%s): %s %q", r.lang, r.kind, r.label, o.Dimension, q))
		}
		if r.label == "durable" && s.found == 0 {
			report = append(report, fmt.Sprintf("  %s %s missed: %q", r.lang, r.kind, r.span))
		}
		for _, g := range []struct {
			m map[string]*tally
			k string
		}{{perLang, r.lang}, {perKind, r.kind}} {
			if g.m[g.k] == nil {
				g.m[g.k] = &tally{}
			}
			g.m[g.k].add(s)
		}
	}
	all := tally{}
	for _, s := range perLang {
		all.add(*s)
	}
	t.Logf("own held-out set, %d cases:\n%s%s%s", len(rows), table("per language", perLang), table("per kind", perKind), strings.Join(report, "\n"))
	assert.GreaterOrEqual(t, ratio(all.right, all.candidates), 0.9, "precision")
	assert.GreaterOrEqual(t, ratio(all.found, all.durable), 0.9, "recall")
}
