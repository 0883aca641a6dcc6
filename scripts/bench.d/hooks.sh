#!/usr/bin/env bash
# hooks.sh: the no-reread hook's wall time as Claude Code runs it (the
# command line from plugin/hooks/hooks.json, through the launcher, with a
# PreToolUse JSON on stdin), beside a bare `sh -c true` spawn timed in the
# same run. HOOKBENCH_ROUNDS sets the number of measured rounds (default 300).
set -euo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A plugin root of its own: the repository's hooks.json, manifest and
# launcher, and a hook built as `make build` builds it.
mkdir -p "$tmp/plugin/bin"
cp -R plugin/hooks plugin/.claude-plugin "$tmp/plugin/"
cp plugin/bin/synaxi-run "$tmp/plugin/bin/"
(cd hooks && go build -trimpath -o "$tmp/plugin/bin/synaxi-noreread" ./cmd/synaxi-noreread)
(cd e2e && go build -o "$tmp/hookbench" ./cmd/synaxi-hookbench)
# The floor any Go hook pays: an empty program, built the same way.
mkdir -p "$tmp/floor"
printf 'package main\n\nfunc main() {}\n' >"$tmp/floor/main.go"
printf 'module floor\n\ngo 1.26\n' >"$tmp/floor/go.mod"
(cd "$tmp/floor" && GOWORK=off go build -trimpath -o "$tmp/floor/floor" .)
rounds=${HOOKBENCH_ROUNDS:-300}

echo "## Hooks: wall time as Claude Code runs them"
echo
"$tmp/hookbench" -plugin "$tmp/plugin" -floor "$tmp/floor/floor" -n "$rounds"
echo
echo "Measured by \`scripts/bench.d/hooks.sh\` (\`e2e/cmd/synaxi-hookbench\`): every spawn is a fresh"
echo "process started the way Claude Code starts a command hook (exec form, stdin and stdout"
echo "through pipes), every row once per round in a shuffled order, for a session with a 1 MB"
echo "transcript. Two baselines from the same run: the bare spawn (\`sh -c true\`, the issue's goal is"
echo "at most 1.5× it) and the launched floor, the same hooks.json command line and launcher exec'ing"
echo "an empty Go program instead of the hook: no Go hook launched the way synaxi's are can be faster"
echo "than that, so the hook's own cost is its ratio to the launched floor."
