#!/usr/bin/env bash
# languages.sh: the cold parse cost of synaxi-mapgen's tree-sitter languages
# beside universal-ctags on the same trees in the same run. For each tree on
# this machine (the local Python standard library, npm's JavaScript, the
# kernel's C headers) it times a cold `synaxi-mapgen map` (empty parse cache)
# and `ctags -R --languages=…`, as wall and CPU (user+sys) seconds and peak
# RSS. A tree that is not here is listed as skipped. The Go tree is maps.sh's.
set -euo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=$(command -v python3 || true)
pystdlib=
if [[ -n $py ]]; then
	pystdlib=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['stdlib'])")
fi
# name|ctags language|directory
trees=(
	"Python standard library|Python|$pystdlib"
	"npm (JavaScript)|JavaScript|/usr/lib/node_modules/npm/lib"
	"Linux C headers|C,C++|/usr/include/linux"
)

echo "## Languages: cold parse beside universal-ctags"
echo
if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	echo "Skipped: universal-ctags is not installed (maps.sh installs it; run \`make bench\` again)."
	exit 0
fi
echo "languages: building synaxi-mapgen" >&2
(cd mapgen && go build -trimpath -o "$tmp/synaxi-mapgen" ./cmd/synaxi-mapgen)
langs=$("$tmp/synaxi-mapgen" languages --json)

# timed CMD…: runs CMD with stdout discarded; prints "wall cpu maxrss_kb".
timed() {
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; return 1; }
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$tmp/time"
}

echo "| tree | files | tool | wall s | CPU s | peak RSS MB |"
echo "| --- | --- | --- | --- | --- | --- |"
for t in "${trees[@]}"; do
	IFS='|' read -r name clang dir <<<"$t"
	if [[ -z $dir || ! -d $dir ]]; then
		echo "| $name | — | skipped: ${dir:-no python3} not on this machine | | | |"
		continue
	fi
	echo "languages: $name ($dir)" >&2
	rm -rf "$tmp/cache"
	read -r mw mc mr < <(XDG_CACHE_HOME=$tmp/cache timed "$tmp/synaxi-mapgen" map "$dir")
	files=$(XDG_CACHE_HOME=$tmp/cache "$tmp/synaxi-mapgen" map --budget 256 "$dir" | head -1 | sed -n 's/.*: \([0-9]*\) source files.*/\1/p')
	read -r cw cc cr < <(timed ctags -R --languages="$clang" -f "$tmp/tags" "$dir")
	echo "| $name | $files | synaxi-mapgen map, cold | $mw | $mc | $((mr / 1024)) |"
	echo "| $name | | ctags -R --languages=$clang | $cw | $cc | $((cr / 1024)) |"
done
echo
echo "synaxi-mapgen parses: \`$langs\`. Cold means an empty parse cache"
echo "(\`XDG_CACHE_HOME\` in a fresh directory); the map also ranks and renders."
echo "CPU is user+sys from \`/usr/bin/time\`; on a shared machine wall time"
echo "depends on the load, CPU much less. Files: what the map header counts."
