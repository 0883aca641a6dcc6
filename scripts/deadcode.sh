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
out=$(go run "golang.org/x/tools/cmd/deadcode@$version" -filter '^github.com/synaxi/synaxi/' \
	./internal/... ./hooks/... ./proxyd/... ./mcp/... ./mapgen/... ./installer/... ./e2e/... 2>&1) || {
	echo "$out" >&2
	exit 1
}
# Drop the allowed packages (the first field of each non-comment line of the allow file).
pattern=$(grep -v '^[[:space:]]*\(#\|$\)' "$allow" | awk '{print $1}' | paste -sd'|' -)
if [[ -n $pattern ]]; then
	out=$(grep -Ev "^($pattern)/[^/]+\.go:" <<<"$out" || true)
fi
if [[ -n $out ]]; then
	echo "deadcode: functions no synaxi binary reaches (remove them, or use them):" >&2
	echo "$out" >&2
	exit 1
fi
echo "deadcode: every function is reached by a binary (allowed test-support packages: $pattern)"
