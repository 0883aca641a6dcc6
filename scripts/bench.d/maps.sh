#!/usr/bin/env bash
# maps.sh: synaxi-mapgen on GOROOT/src beside universal-ctags on the same
# tree in the same run: a cold map (empty index) against `ctags -R`, a warm
# map and a warm symbol lookup against ctags re-indexing and `readtags`, peak
# RSS of each, and the focus-recall benchmark (mapgen/repomap
# TestFocusRecall) for GOROOT/src and the Python standard library.
# MAPSBENCH_ROUNDS sets the warm repetitions (default 10).
set -euo pipefail

rounds=${MAPSBENCH_ROUNDS:-10}
tree=$(go env GOROOT)/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	echo "maps: installing universal-ctags" >&2
	if ! { apt-get update -qq && apt-get install -y -qq universal-ctags; } >&2 2>&1; then
		echo "## Maps: synaxi-mapgen beside universal-ctags"
		echo
		echo "Skipped: universal-ctags is not installed and \`apt-get install -y universal-ctags\` failed"
		echo "here, so there is no baseline to measure beside. Install it and run \`make bench\` again."
		exit 0
	fi
fi
ctags_version=$(ctags --version | head -1 | sed 's/,.*//')

echo "maps: building synaxi-mapgen" >&2
(cd mapgen && go build -trimpath -o "$tmp/synaxi-mapgen" ./cmd/synaxi-mapgen)
mapgen=$tmp/synaxi-mapgen
export XDG_CACHE_HOME=$tmp/cache

# timed CMD…: runs CMD with stdout discarded; prints "seconds maxrss_kb".
timed() {
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; return 1; }
	cat "$tmp/time"
}
# median of the first field of stdin lines
median() { sort -n | awk '{ a[NR] = $1 } END { m = int((NR + 1) / 2); print a[m] }'; }
# max of the second field
maxrss() { awk '$2 > m { m = $2 } END { print m }'; }

echo "maps: cold runs (ctags, then mapgen with an empty index)" >&2
read -r ctags_cold ctags_rss < <(timed ctags -R -f "$tmp/tags" "$tree")
read -r map_cold map_cold_rss < <(timed "$mapgen" map "$tree")
ntags=$(grep -vc '^!' "$tmp/tags")

echo "maps: warm runs x${rounds}" >&2
: >"$tmp/map" ; : >"$tmp/sym" ; : >"$tmp/ctags" ; : >"$tmp/readtags"
for _ in $(seq "$rounds"); do
	timed "$mapgen" map "$tree" >>"$tmp/map"
	timed "$mapgen" symbol NewReader "$tree" >>"$tmp/sym"
	timed readtags -t "$tmp/tags" NewReader >>"$tmp/readtags"
done
for _ in $(seq 3); do
	timed ctags -R -f "$tmp/tags2" "$tree" >>"$tmp/ctags"
done
map_warm=$(median <"$tmp/map")
sym_warm=$(median <"$tmp/sym")
readtags_warm=$(median <"$tmp/readtags")
ctags_again=$(median <"$tmp/ctags")
map_warm_rss=$(maxrss <"$tmp/map")
sym_rss=$(maxrss <"$tmp/sym")
files=$("$mapgen" map --json "$tree" | sed -n 's/.*"text": "# repo map of [^:]*: \([0-9]*\) source files.*/\1/p')
ratio=$(awk -v a="$map_cold" -v b="$ctags_cold" 'BEGIN { printf "%.2f", a / b }')

echo "maps: focus recall (cold indexes of both trees, then 60 maps each)" >&2
(cd mapgen && go test -count=1 -timeout 60m -run '^TestFocusRecall$' ./repomap -args -recall="$tmp/recall.json") >&2

echo "## Maps: synaxi-mapgen beside universal-ctags"
echo
echo "GOROOT/src ($files files mapgen indexes; ctags wrote $ntags tags), 2 shared cores."
echo
echo "| what | synaxi-mapgen | ${ctags_version} |"
echo "| --- | --- | --- |"
echo "| cold index (empty cache) | ${map_cold} s (${ratio}x ctags) | ${ctags_cold} s (\`ctags -R\`) |"
echo "| warm map, median of ${rounds} | ${map_warm} s | ${ctags_again} s (ctags has no warm mode: \`ctags -R\` again, median of 3) |"
echo "| warm symbol lookup \`NewReader\`, median of ${rounds} | ${sym_warm} s | ${readtags_warm} s (\`readtags\` on its tags file) |"
echo "| peak RSS: cold / warm map / symbol | $((map_cold_rss / 1024)) / $((map_warm_rss / 1024)) / $((sym_rss / 1024)) MB | $((ctags_rss / 1024)) MB (cold) |"
echo
python3 - "$tmp/recall.json" <<'PY'
import json, sys
trees = json.load(open(sys.argv[1]))
print("Focus recall: for 30 fixed non-test files per tree, the share of the definitions each file")
print("uses from other files (resolved by go/types for Go, by Python's ast module with import")
print("resolution for Python) that a 2,000-token map focused on the file shows in the defining")
print("file's section; beside the same map without focus. ctags has no ranking, so no figure.")
print()
print("| tree | files | focused: mean | focused: worst (file) | unfocused: mean |")
print("| --- | --- | --- | --- | --- |")
for t in trees:
    print(f"| {t['tree']} ({t['root']}) | {t['files']} | {t['mean_focused']:.3f} | {t['worst_focused']:.3f} ({t['worst_file']}) | {t['mean_unfocused']:.3f} |")
print()
print("Files below 0.7 with a focused map, with how many definitions they use and how many the")
print("map could show in 2,000 tokens (with more uses than that, recall cannot reach 1):")
print()
print("| tree | file | uses | shown | focused | unfocused |")
print("| --- | --- | --- | --- | --- | --- |")
for t in trees:
    for r in t['rows']:
        if r['focused'] < 0.7:
            print(f"| {t['tree']} | {r['file']} | {r['uses']} | {r['shown']} | {r['focused']:.3f} | {r['unfocused']:.3f} |")
PY
echo
echo "Measured by \`scripts/bench.d/maps.sh\`: wall time and peak RSS from \`/usr/bin/time\`; \"cold\""
echo "is an empty \`XDG_CACHE_HOME\` (walk, read, parse every file, write the index), \"warm\" the next"
echo "runs with nothing changed (stat what the index recorded, serve the kept map or the files the"
echo "name tables list). Focus recall: \`go test ./repomap -run TestFocusRecall -args -recall=FILE\`"
echo "in mapgen. On a shared machine the times follow the load."
