#!/usr/bin/env bash
# ingest.sh: the learning loop's two timing goals. The embedded extraction
# of a 3 MB transcript (goal: under 1 s) and the SessionEnd hook's return
# time as a whole process (goal: p99 under 50 ms), beside a bare
# `sh -c true` spawned the same way in the same run. INGESTBENCH_ROUNDS sets
# the hook's measured spawns (default 300), INGESTBENCH_EXTRACT the
# extraction runs (default 20).
set -euo pipefail

rounds=${INGESTBENCH_ROUNDS:-300}
extract=${INGESTBENCH_EXTRACT:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "ingest: extraction benchmarks (${extract} runs)" >&2
(cd learning && go test -run '^$' -bench 'BenchmarkExtractEmbedded|BenchmarkExtractPasteHeavy|BenchmarkIngest3MB' \
	-benchtime "${extract}x" ./extract) >"$tmp/learn.txt"
echo "ingest: hook return time (${rounds} spawns each)" >&2
(cd learning && go test -run '^$' -bench 'BenchmarkHookReturn' -benchtime "${rounds}x" \
	./cmd/synaxi-ingest) >"$tmp/hook.txt"

ms() { awk -v name="$1" '$1 ~ name { printf "%.0f", $3 / 1e6 }' "$tmp/learn.txt"; }
mbs() { awk -v name="$1" '$1 ~ name { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i }' "$tmp/learn.txt"; }
metric() { awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 1; i <= NF; i++) if ($(i+1) == unit) print $i }' "$tmp/hook.txt"; }

extract_ms=$(ms '^BenchmarkExtractEmbedded')
ingest_ms=$(ms '^BenchmarkIngest3MB')
paste_ms=$(ms '^BenchmarkExtractPasteHeavy')
[ -n "$extract_ms" ] && [ -n "$ingest_ms" ] || { cat "$tmp/learn.txt" >&2; exit 1; }
floor50=$(metric '/floor' p50-ms)
floor99=$(metric '/floor' p99-ms)
hook50=$(metric '/hook-disabled' p50-ms)
hook99=$(metric '/hook-disabled' p99-ms)
on50=$(metric '/hook(-[0-9]+)?$' p50-ms)
on99=$(metric '/hook(-[0-9]+)?$' p99-ms)
[ -n "$floor50" ] && [ -n "$on99" ] || { cat "$tmp/hook.txt" >&2; exit 1; }

echo "## Ingest: extraction and the SessionEnd hook"
echo
echo "| what | measured | goal |"
echo "| --- | --- | --- |"
echo "| embedded extraction of a 3 MB transcript (read, typed/pasted split, secret redaction with gitleaks, rules, grounding check, gate) | ${extract_ms} ms ($(mbs '^BenchmarkExtractEmbedded') MB/s) | under 1 s |"
if [ -n "$paste_ms" ]; then
	echo "| the same on a real 3.2 MB session with pastes of up to 127 KB (shared labelled set, pai-procrypto) | ${paste_ms} ms ($(mbs '^BenchmarkExtractPasteHeavy') MB/s) | under 1 s |"
fi
echo "| whole ingest of that session (with the profile's locked, versioned save) | ${ingest_ms} ms | — |"
echo "| \`sh -c true\` spawn, the floor (p50 / p99) | ${floor50} / ${floor99} ms | — |"
echo "| \`synaxi-ingest\` with ingest.enabled=false: start-up and exit only (p50 / p99) | ${hook50} / ${hook99} ms | — |"
echo "| \`synaxi-ingest\` SessionEnd: queue append and detached drain start (p50 / p99) | ${on50} / ${on99} ms | p99 under 50 ms |"
echo
echo "Measured by \`scripts/bench.d/ingest.sh\`: \`BenchmarkExtractEmbedded\` and \`BenchmarkIngest3MB\`"
echo "(learning/extract, ${extract} runs) on a transcript of 3,000,000+ bytes made of whole lines of the"
echo "m-claude fixture repeated, and \`BenchmarkExtractPasteHeavy\` on the largest labelled session (skipped"
echo "without shared/fixtures); \`BenchmarkHookReturn\` (learning/cmd/synaxi-ingest, ${rounds} spawns each)"
echo "times whole processes from spawn to exit with the SessionEnd JSON on stdin and stdout and"
echo "stderr through pipes, as Claude Code runs the hook; the drains it starts run beside it, as"
echo "they would after real sessions. On a shared machine the p99 follows the load: compare it"
echo "with the floor's p99 from the same run."
