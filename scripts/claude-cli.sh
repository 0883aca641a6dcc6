#!/usr/bin/env bash
# claude-cli.sh: install the pinned Claude Code CLI into <repo>/.cache/claude-code
# (if it is not there already) and print the path of its `claude` binary.
#
# The version is the one the e2e harness pins (e2e/claudecli: const Version), so
# `make install`, CI and the tests all use the same CLI. Progress goes to stderr;
# stdout is only the path.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$repo/e2e/claudecli/claudecli.go")
[[ -n $version ]] || { echo "claude-cli.sh: no Version in e2e/claudecli/claudecli.go" >&2; exit 1; }
dir=$repo/.cache/claude-code
bin=$dir/node_modules/.bin/claude
pkg=$dir/node_modules/@anthropic-ai/claude-code/package.json

have() {
	[[ -x $bin && -f $pkg ]] && grep -q "\"version\": \"$version\"" "$pkg" &&
		"$bin" --version 2>/dev/null | grep -qF "$version"
}

mkdir -p "$dir"
# The same lock file the Go harness takes (flock(2) on .cache/claude-code.lock).
exec 9>"$dir.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if ! have; then
	command -v npm >/dev/null 2>&1 || { echo "claude-cli.sh: npm is needed to install @anthropic-ai/claude-code@$version" >&2; exit 1; }
	echo "installing @anthropic-ai/claude-code@$version into $dir" >&2
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >&2
	have || { echo "claude-cli.sh: $bin does not report version $version after install" >&2; exit 1; }
fi
echo "$bin"
