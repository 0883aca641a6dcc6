#!/usr/bin/env bash
# guidance.sh: what giving the learned guidance at SessionStart costs. The
# whole `synaxi-session start` process with a published profile of 300
# entries (its guidance printed as additionalContext) beside the same hook
# with no profile, in the same run; and the in-process read and a whole
# publication. GUIDANCEBENCH_ROUNDS sets the spawns (default 300).
set -euo pipefail

rounds=${GUIDANCEBENCH_ROUNDS:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "guidance: SessionStart hook (${rounds} spawns each)" >&2
(cd hooks && go test -run '^$' -bench 'BenchmarkStartGuidance' -benchtime "${rounds}x" \
	./cmd/synaxi-session) >"$tmp/hook.txt"
echo "guidance: ForSession and Publish" >&2
(cd learning && go test -run '^$' -bench 'BenchmarkForSession|BenchmarkPublish' -benchtime 2s \
	./publish) >"$tmp/pkg.txt"

metric() { awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 1; i <= NF; i++) if ($(i+1) == unit) print $i }' "$tmp/hook.txt"; }
ms() { awk -v name="$1" '$1 ~ name { printf "%.1f", $3 / 1e6 }' "$tmp/pkg.txt"; }

none50=$(metric '/no-profile' p50-ms)
none99=$(metric '/no-profile' p99-ms)
on50=$(metric '/profile-300' p50-ms)
on99=$(metric '/profile-300' p99-ms)
read_ms=$(ms '^BenchmarkForSession')
pub_ms=$(ms '^BenchmarkPublish')
[ -n "$none50" ] && [ -n "$on99" ] || { cat "$tmp/hook.txt" >&2; exit 1; }
[ -n "$read_ms" ] && [ -n "$pub_ms" ] || { cat "$tmp/pkg.txt" >&2; exit 1; }

echo "## Guidance: SessionStart and publication"
echo
echo "| what | measured |"
echo "| --- | --- |"
echo "| \`synaxi-session start\`, no profile (p50 / p99) | ${none50} / ${none99} ms |"
echo "| \`synaxi-session start\`, 300-entry profile, guidance printed (p50 / p99) | ${on50} / ${on99} ms |"
echo "| \`guidance.ForSession\` in process (read version and narrative, render within 6000 chars) | ${read_ms} ms |"
echo "| \`guidance.Publish\` after a profile change (default config: six narratives, no writers) | ${pub_ms} ms |"
echo
echo "Measured by \`scripts/bench.d/guidance.sh\`: \`BenchmarkStartGuidance\` (hooks/cmd/synaxi-session,"
echo "${rounds} spawns each) times whole processes with the SessionStart JSON on stdin and stdout and"
echo "stderr through pipes, not routed to the proxy; both rows in the same run, so their difference"
echo "is the guidance. \`BenchmarkForSession\` and \`BenchmarkPublish\` (learning/publish) use a profile"
echo "of 300 entries over five projects and the global scope. On a shared machine the p99 follows"
echo "the load."
