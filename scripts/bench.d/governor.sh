#!/usr/bin/env bash
# governor.sh: the loop governor replayed over every transcript of the
# fixtures' panel (main sessions, subagents, inline sidechains), with the
# hook's own bash parser: the fires per context at the default thresholds,
# each rule's fires at the thresholds around its default, and every fire at
# the defaults and one step below them with the tool calls around it, so a
# person can judge each. The defaults in internal/governor are chosen from
# this table (docs/governor.md).
set -euo pipefail

# The shared panel: $SYNAXI_FIXTURES, or shared/fixtures beside the checkout
# (beside the main worktree when this is a linked one).
fixtures=${SYNAXI_FIXTURES:-}
if [[ -z $fixtures ]]; then
	common=$(git rev-parse --path-format=absolute --git-common-dir)
	fixtures=$(dirname "$(dirname "$common")")/shared/fixtures
fi
[[ -d $fixtures ]] || { echo "governor.sh: no fixtures at $fixtures; set SYNAXI_FIXTURES" >&2; exit 1; }
# Each transcript once: a file may be in two sets under the same name.
mapfile -t files < <(ls "$fixtures"/claude-code-sessions/*.jsonl "$fixtures"/claude-code-sessions/*/*.jsonl \
	"$fixtures"/claude-code-sessions/*/subagents/*.jsonl "$fixtures"/learning/*/*.jsonl 2>/dev/null |
	awk -F/ '!seen[$NF]++')
((${#files[@]})) || { echo "governor.sh: no transcripts under $fixtures" >&2; exit 1; }
echo "governor: replaying ${#files[@]} transcripts" >&2

echo "## Loop governor: replay over the fixtures' panel"
echo
echo "\`scripts/bench.d/governor.sh\`: \`synaxi-govreplay\` runs \`internal/governor\` (the code the"
echo "post hook runs) over ${#files[@]} transcripts, each tool call fed when its result arrives, with"
echo "the prompt tokens of the request that issued it; state starts afresh at a compaction, as the"
echo "hook's does. A context is a main session, a subagent file, or the inline sidechain turns of"
echo "Claude Code 1.x. None of these sessions ran synaxi, so no fire here was seen by a model."
echo
(cd hooks && go run ./cmd/synaxi-govreplay -around 2 "${files[@]}")
