#!/usr/bin/env bash
# trim-panel.sh: trim against Claude Code's own compaction summary (a
# `make bench` section). At every real compaction of the fixture sessions
# that has one (the four spotter sessions with their acompact agent files,
# Durban-Designer 9034225e and the OpenAgents example), what trim would
# have carried from the records before it, and what the summary in the
# same transcript carried, are checked against the files, commands and
# typed turns the next 30 requests use.
#
# The fixtures are found at $SYNAXI_FIXTURES, else in shared/ beside the
# checkout (beside the main worktree when this is a linked one).
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=../fixtures.sh
. scripts/fixtures.sh
fixtures=$(fixtures_dir "$repo") || fixtures=
[[ -n $fixtures && -d $fixtures/claude-code-sessions ]] || { echo "trim-panel: shared/fixtures not found beside the checkout; set SYNAXI_FIXTURES" >&2; exit 1; }
s=$fixtures/claude-code-sessions
files=(
	"$s/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
	"$s/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
	"$s/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
	"$s/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
	"$fixtures/learning/Durban-Designer-vsla/9034225e-c367-4ab6-b1eb-1f478a7ae27a.jsonl"
	"$s/OpenAgentsInc-openagents/claude-code-example.jsonl"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "trim-panel: ${#files[@]} transcripts" >&2
list=$(IFS=,; echo "${files[*]}")
(cd installer && go test -count=1 -run '^TestCompactionPanel$' ./cmd/synaxi -args -panel "$list" -panel-out "$tmp/table.md") >&2
[[ -s $tmp/table.md ]] || exit 1

echo "## Trim against Claude Code's summary"
echo
echo "At every compaction in the fixtures that has a conversation before it, \`synaxi trim\`'s block"
echo "built from the records before the compaction (what \`/synaxi:trim\` would have staged there)"
echo "beside the summary Claude Code wrote at that point, in the same transcript. Each side is"
echo "checked against what the next 30 main-chain requests after the summary use:"
echo
cat "$tmp/table.md"
echo
echo "Measured by \`scripts/bench.d/trim-panel.sh\` (\`TestCompactionPanel\` in installer/cmd/synaxi, beside"
echo "\`synaxi trim\`, whose block it renders: the same collector, and the same typed turns). How to"
echo "read it: *files used (seen before)*: distinct paths of the Read, Edit, MultiEdit, Write and"
echo "NotebookEdit calls in those requests, and in brackets those the conversation had already"
echo "touched before the compaction (only those could be carried); a side carried a file when its"
echo "text names it by its path relative to the session's directory or by its base name standing"
echo "alone. *Commands*: distinct \`trim.CommandKey\` of the Bash calls (program and subcommand,"
echo "\`go test\`, \`mix test\`), carried when the key stands alone in the text. *Typed turns*: the"
echo "human-typed turns before the compaction (\`transcript.HumanText\`, then only their typed spans"
echo "as the learning loop's reader \`learning/read\` splits them; those with a word of four"
echo "letters or more), carried when at least 60% of their distinct such words appear in the text"
echo "(verbatim or in a paraphrase that keeps them). *Tokens*: \`internal/tokens\`'s calibrated estimate"
echo "of each text. *Context before*: the prompt tokens of the last request before the compaction;"
echo "*compaction request*: the prompt tokens of Claude Code's compaction call from its"
echo "\`agent-acompact-*\` file (only the spotter sessions keep one): the model call the summary cost,"
echo "where trim makes none. The trim block is rendered within its default 6,000 characters."
