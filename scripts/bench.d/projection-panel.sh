#!/usr/bin/env bash
# projection-panel.sh: the projection's replay panel (a `make bench` section).
#
# Replays every transcript of shared/fixtures (the four main sessions of
# one repository with their subagents, m-claude, the six newer sessions of
# other users and the learning set's long sessions) through synaxi-proxyd's
# gate and projection engine with the proxy's default scope, against the
# same requests sent as Claude Code sends them (the baseline, measured in
# the same run), then the first five main sessions with the budget pinned
# 30% below and above its default, then the engine's cold and warm p99 on
# the 300-message, ~200K-token benchmark conversation.
#
# The fixtures are found at $SYNAXI_FIXTURES, else in shared/ beside the
# checkout (beside the main worktree when this is a linked one).
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=../fixtures.sh
. scripts/fixtures.sh
fixtures=$(fixtures_dir "$repo") || fixtures=
sessions=$fixtures/claude-code-sessions
[[ -n $fixtures && -d $sessions ]] || { echo "projection-panel: shared/fixtures/claude-code-sessions not found beside the checkout; set SYNAXI_FIXTURES" >&2; exit 1; }
# A directory stands for its own transcripts and its sessions' subagents/
# only, so every other user's archive (beside its licence) is named.
panel=("$sessions" "$sessions/m-claude" "$sessions/nicholas-wood-pai-claude" "$sessions/windtara0619-tpu-inference"
	"$sessions/natori-hrj-dotfiles" "$sessions/obra-episodic-memory" "$sessions/OpenAgentsInc-openagents"
	"$fixtures/learning/Durban-Designer-vsla" "$fixtures/learning/moredip-session-share"
	"$fixtures/learning/pai-procrypto" "$fixtures/learning/pai-smartagent")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "projection-panel: building synaxi-proxyd" >&2
(cd proxyd && go build -o "$tmp/synaxi-proxyd" ./cmd/synaxi-proxyd)
bin=$tmp/synaxi-proxyd

mains=("$sessions"/*.jsonl "$sessions"/m-claude/*.jsonl)
first=$("$bin" replay --json "${mains[0]}")
def=$(sed -n 's/^  "budget_tokens": \([0-9]*\),$/\1/p' <<<"$first")
scope=$(sed -n 's/^  "scope": "\(.*\)",$/\1/p' <<<"$first")

echo "## Projection replay panel"
echo
echo "Every transcript in \`shared/fixtures\`: four main sessions of one repository"
echo "(Claude Code 2.1.39) with their subagents and compaction agents; c76e5be5"
echo "(\`m-claude/\`, Claude Code 2.1.6 on Windows); five sessions of five more users"
echo "(Claude Code 1.0.29 to 2.1.160, one in Japanese); and the learning set's"
echo "sessions. Replayed at commit $(git rev-parse --short HEAD) with the proxy's default"
echo "scope (\`$scope\`) and configuration: \`synaxi-proxyd replay --markdown PATH…\` (the paths in"
echo "\`scripts/bench.d/projection-panel.sh\`). Each request goes through the proxy's"
echo "gate and, where it hands it over, the projection engine, with a real Claude Code"
echo "2.1.332 main session's tools and system prompt (transcripts do not record them),"
echo "and is billed by a simulated prompt cache twice, as Claude Code sends it (the"
echo "baseline) and as the proxy serves it; ÷ is baseline over projected"
echo "billed-equivalent input (uncached 1×, cache writes 1.25× or 2× by TTL, reads 0.1×)."
echo "\"engaged\" counts the requests the engine projected; the others were served"
echo "byte for byte. \"billed ÷ with re-reads\" prices a re-read of the file before"
echo "every blind edit (an edit whose old text the request did not show), \"with"
echo "recovery\" every re-read or re-run the referee finds needed (docs/projection.md,"
echo "\"What the user loses\"). \"bound ÷\" is the best any projection of the session"
echo "could reach (its fixed part written once and read at the cheaper TTL, new content"
echo "written once), \"share of bound\" how much of it the projection reaches, every"
echo "recovery priced, and \"share with re-reads\" the same with the blind edits' re-reads"
echo "alone priced."
echo "\"blind edits\" is the projection's count (the unprojected transcript's own in"
echo "brackets); \"hidden then needed\" counts, by kind, where an answer or the user"
echo "used what the request no longer showed, \"recovery tokens\" what recovering it"
echo "read again; \"user-typed hidden\" counts user-typed blocks some later request did"
echo "not show (must be 0). \"worst stop\" is the lowest billed ÷ had the session ended"
echo "earlier; \"never costlier\" says the projection, recoveries priced, billed no more."
echo "Median and worst are per column; the notes say how lost records were rebuilt."
echo
echo "projection-panel: replaying the panel" >&2
"$bin" replay --markdown "${panel[@]}"
echo

echo "### Budget sensitivity (main sessions)"
echo
echo "The default budget ($def tokens for a 200K window) follows the session's working"
echo "set; here it is pinned 30% below and above it (\`--budget N\`) on every main session."
for b in $((def * 7 / 10)) $((def * 13 / 10)); do
	echo
	echo "Budget pinned at $b tokens:"
	echo
	echo "projection-panel: budget $b" >&2
	"$bin" replay --markdown --budget "$b" "${mains[@]}"
done
echo

echo "### Projection latency"
echo
echo "\`go test -run '^\$' -bench 'BenchmarkProject(Cold|Warm)' ./internal/projection\` (proxyd):"
echo "the 300-message, ~200K-token conversation, folded from nothing (cold, after a"
echo "restart) and with its previous request memoised (warm); goal: p99 under 5 ms."
echo
echo "projection-panel: latency benchmarks" >&2
echo "| benchmark | p50 ms | p99 ms |"
echo "| --- | ---: | ---: |"
(cd proxyd && go test -run '^$' -bench 'BenchmarkProject(Cold|Warm)$' -benchtime "${BENCHTIME:-1s}" -count 1 ./internal/projection) |
	awk '/^BenchmarkProject/ { p50 = ""; p99 = ""; for (i = 3; i < NF; i++) { if ($(i+1) == "p50-ms") p50 = $i; if ($(i+1) == "p99-ms") p99 = $i }; name = $1; sub(/-[0-9]+$/, "", name); printf "| %s | %s | %s |\n", name, p50, p99 }'
