#!/usr/bin/env bash
# learning-quality.sh: precision and recall of the embedded extractor on
# every labelled set, per language and per kind: the shared labelled set
# (shared/fixtures/learning, labels.tsv), the fixtures' every human turn
# (learning/extract/testdata/fixtures.tsv), the constructed and held-out
# sentence sets, and issue 24's own held-out set (own-heldout.tsv). The
# figures are counts, not timings: the same on every machine.
set -euo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "learning quality: the labelled-set tests (-v)" >&2
(cd learning && go test -count=1 -v -run 'TestLabelledSetPrecisionRecall|TestOwnHeldoutSet|TestExtractionQualityOnFixtures|TestExtractionQualityOnConstructedTurns' \
	./extract) >"$tmp/out.txt" || { cat "$tmp/out.txt" >&2; exit 1; }

# figures keeps the logged tables: the header lines and the lines of
# figures, not the per-candidate lists.
figures() {
	grep -E "^\s+(labelled_test|own_heldout_test|quality_test)\.go:[0-9]+:|^\s+(de|en|fr|es|all|overall): |^\s+(de|en|fr|es|all) {5,}|^\s+per (language|kind)|^\s+[a-z_/ ]+ +(precision|tp )" "$tmp/out.txt" |
		sed -E 's/^\s+(labelled_test|own_heldout_test|quality_test)\.go:[0-9]+: /\n/; s/^    //'
}

echo "## Learning: precision and recall of the embedded extractor"
echo
echo '```'
figures
echo '```'
echo
echo "Measured by \`scripts/bench.d/learning-quality.sh\`: \`go test -v\` of TestLabelledSetPrecisionRecall,"
echo "TestExtractionQualityOnFixtures, TestExtractionQualityOnConstructedTurns and TestOwnHeldoutSet"
echo "(learning/extract). A candidate is right when its turn is labelled durable and its quote"
echo "overlaps the labelled span (shared set, own held-out set) or equals the labelled sentence"
echo "under the labelled dimension (fixtures, constructed, held-out); recall counts durable turns"
echo "with a right candidate. docs/ingest.md (Extraction quality) says how each set was made."
