#!/usr/bin/env bash
# deadcode.sh: report functions that no synaxi binary reaches.
#
# Roots are the product binaries (every main package in the product modules
# and e2e's synaxi-fakeapi), not the tests: code that only a test calls is
# dead to a user. Test-support packages, which exist for tests alone, are
# listed in scripts/deadcode.allow with the reason; nothing else may be.
# Exits 1 when anything else is unreachable.
set -euo pipefail
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=v0.52.0
allow=scripts/deadcode.allow
# Only the tool's stdout is findings. Its stderr, and the go command's (which
# on a fresh module cache says "go: downloading ..."), goes straight through:
# merged into $out it would be reported as unreachable functions.
out=$(go run "golang.org/x/tools/cmd/deadcode@$version" -filter '^github.com/synaxi/synaxi/' \
	./internal/... ./learning/... ./hooks/... ./proxyd/... ./mcp/... ./mapgen/... ./installer/... ./e2e/...) || {
	echo "$out" >&2
	echo "deadcode: the tool failed (its error is above)" >&2
	exit 1
}
# Drop what the allow file names: a package directory (every function in it),
# or FILE FUNC (one function). The first one or two fields of each
# non-comment line; a reason follows after '#'.
pkgs=() funcs=()
while read -r a b _; do
	[[ -z $a || $a == \#* ]] && continue
	if [[ -n $b && $b != \#* ]]; then funcs+=("$a:[0-9]+:[0-9]+: unreachable func: $b\$"); else pkgs+=("$a/[^/]+\.go:"); fi
done <"$allow"
pattern=$(IFS='|'; echo "${pkgs[*]}${pkgs:+${funcs:+|}}${funcs[*]}")
if [[ -n $pattern ]]; then
	out=$(grep -Ev "^($pattern)" <<<"$out" || true)
fi
if [[ -n $out ]]; then
	echo "deadcode: functions no synaxi binary reaches (remove them, or use them):" >&2
	echo "$out" >&2
	exit 1
fi
echo "deadcode: every function is reached by a binary, but for the ${#pkgs[@]} packages and ${#funcs[@]} functions scripts/deadcode.allow names"
