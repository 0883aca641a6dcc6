#!/usr/bin/env bash
# bench.sh: run every Go benchmark in the product modules and write
# bench/RESULTS.md: the date, the machine (cores, CPU model, Go version), a
# summary table and the raw `go test -bench` output.
#
#   BENCHTIME=2s scripts/bench.sh     longer runs (default: go test's 1s)
#   BENCH=Noreread scripts/bench.sh   only benchmarks matching a regexp
#   SECTIONS=panel scripts/bench.sh   only the report sections matching a regexp
#
# Beside the Go benchmarks, every executable scripts/bench.d/*.sh is a report
# section: it runs from the repository root, prints Markdown (a "## " heading,
# then its tables and how they were measured) on stdout and progress on stderr,
# and is appended to bench/RESULTS.md in name order. A section that fails is
# reported as failed, with its exit status, and fails the run.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
modules=${MODULES:-"internal learning hooks mcp proxyd mapgen installer"}
bench=${BENCH:-.}
benchtime=${BENCHTIME:-1s}
mkdir -p bench
raw=$(mktemp bench/raw.XXXXXX.tmp)
trap 'rm -f "$raw"' EXIT

# Load before the run: on a shared machine it says how much to trust the numbers.
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*load averages*: //')
found=0
for m in $modules; do
	[[ -d $m ]] || continue
	# Packages (directories) of this module that define a benchmark.
	mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Benchmark' "$m" 2>/dev/null | xargs -r -n1 dirname | sort -u)
	((${#dirs[@]})) || continue
	pkgs=()
	for d in "${dirs[@]}"; do pkgs+=("./${d#"$m"/}"); done
	[[ ${pkgs[0]} == "./$m" ]] && pkgs[0]=.
	found=1
	echo "== $m: ${pkgs[*]}" >&2
	(cd "$m" && go test -run '^$' -bench "$bench" -benchmem -benchtime "$benchtime" -count 1 "${pkgs[@]}") | tee -a "$raw" >&2
done
((found)) || { echo "bench.sh: no benchmarks found" >&2; exit 1; }

# Report sections, each measured in this same run.
sections=$(mktemp bench/sections.XXXXXX.tmp)
trap 'rm -f "$raw" "$sections"' EXIT
failed=0
for s in scripts/bench.d/*.sh; do
	[[ -x $s ]] || continue
	name=$(basename "$s" .sh)
	[[ $name =~ ${SECTIONS:-.} ]] || continue
	echo "== section $name" >&2
	if ! out=$("$s"); then
		failed=1
		out="## $name"$'\n\n'"This section failed (see the run's stderr); its figures are not reported."
	fi
	printf '%s\n\n' "$out" >>"$sections"
done

# Before bench/RESULTS.md is rewritten, or the tree would always read dirty.
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[[ -n $cpu ]] || cpu=$(sysctl -n machdep.cpu.brand_string 2>/dev/null || uname -m)
cores=$(nproc 2>/dev/null || sysctl -n hw.ncpu)
{
	echo "# Benchmark results"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- commit: $commit"
	echo "- machine: $cores cores, $cpu, $(uname -sm)"
	echo "- go: $(go env GOVERSION)"
	echo "- load average (1, 5, 15 min) when the run started: $load"
	echo "- command: \`scripts/bench.sh\` (\`go test -run '^\$' -bench $bench -benchmem -benchtime $benchtime\` per package)"
	echo
	echo "| package | benchmark | iterations | metrics |"
	echo "| --- | --- | ---: | --- |"
	awk '
		/^pkg: / { pkg = $2; sub(/^github.com\/synaxi\/synaxi\//, "", pkg) }
		/^Benchmark/ && NF >= 4 {
			m = ""
			for (i = 3; i < NF; i += 2) m = m (m == "" ? "" : ", ") $i " " $(i + 1)
			printf "| %s | %s | %s | %s |\n", pkg, $1, $2, m
		}' "$raw"
	echo
	cat "$sections"
	echo "## Raw output"
	echo
	echo '```'
	cat "$raw"
	echo '```'
} >bench/RESULTS.md
echo "wrote bench/RESULTS.md" >&2
((!failed)) || { echo "bench.sh: a report section failed" >&2; exit 1; }
