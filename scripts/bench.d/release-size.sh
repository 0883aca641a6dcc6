#!/usr/bin/env bash
# release-size.sh: how big the host's release archive is, and what stripping,
# -trimpath and the compressor each change. It builds every command for the
# host three ways (as plain `go build`, with -trimpath, with -trimpath and
# -s -w as scripts/release.sh does; mapgen and mcp with cgo, statically linked,
# the others without, as in a release), packs each as release.sh packs (GNU
# tar, sorted, fixed owners) and compresses the stripped one with gzip, xz and
# zstd, timing compression and decompression (CPU seconds, /usr/bin/time).
set -euo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
os=$(go env GOOS) arch=$(go env GOARCH)

echo "## Release archive size: stripping, trimpath, compression"
echo

# build DIR EXTRA-BUILD-FLAGS LDFLAGS: every command into DIR.
build() {
	local dir=$1 extra=$2 ld=$3 c cgo
	mkdir -p "$dir"
	while read -r c cgo; do
		echo "release-size: $(basename "$dir") ${c##*/}" >&2
		if [[ $cgo == 1 ]]; then
			# shellcheck disable=SC2086 # extra is a word list
			(cd "${c%%/*}" && CGO_ENABLED=1 go build $extra -buildvcs=false -tags netgo,osusergo \
				-ldflags "$ld -linkmode external -extldflags -static" -o "$dir/${c##*/}" "./${c#*/}")
		else
			# shellcheck disable=SC2086
			(cd "${c%%/*}" && CGO_ENABLED=0 go build $extra -buildvcs=false -ldflags "$ld" -o "$dir/${c##*/}" "./${c#*/}")
		fi
	done < <(make --no-print-directory -s print-commands)
}

pack() { # pack DIR: an uncompressed tar of DIR on stdout, as release.sh packs it
	tar -C "$(dirname "$1")" --format=gnu --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$(basename "$1")"
}

bytes() { wc -c <"$1" | tr -d ' '; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
cpu() { awk '{ printf "%.2f", $1 + $2 }' "$tmp/time"; }

build "$tmp/plain" "" "-X main.version=bench"
build "$tmp/trimpath" "-trimpath" "-X main.version=bench"
build "$tmp/stripped" "-trimpath" "-s -w -X main.version=bench"

echo "Every binary for $os/$arch, $(go env GOVERSION):"
echo
echo "| build | binaries, MB | .tar.gz (gzip -9), MB |"
echo "| --- | ---: | ---: |"
for v in plain trimpath stripped; do
	total=$(cat "$tmp/$v"/* | wc -c | tr -d ' ')
	pack "$tmp/$v" | gzip -n -9 >"$tmp/$v.tar.gz"
	case $v in
	plain) label="go build" ;;
	trimpath) label="go build -trimpath" ;;
	stripped) label="go build -trimpath -ldflags '-s -w' (release.sh)" ;;
	esac
	echo "| $label | $(mb "$total") | $(mb "$(bytes "$tmp/$v.tar.gz")") |"
done
echo
echo "Per binary, stripped (release.sh), MB: $(cd "$tmp/stripped" && for f in *; do printf '%s %s, ' "$f" "$(mb "$(bytes "$f")")"; done | sed 's/, $//')."
echo

pack "$tmp/stripped" >"$tmp/r.tar"
echo "The stripped archive ($(mb "$(bytes "$tmp/r.tar")") MB as a plain tar) under each compressor:"
echo
echo "| compressor | MB | vs gzip -9 | compress CPU s | decompress CPU s |"
echo "| --- | ---: | ---: | ---: | ---: |"
gz9=$(bytes "$tmp/stripped.tar.gz")
for spec in "gzip -n -6|gzip -dc" "gzip -n -9|gzip -dc" "xz -6 -T1|xz -dc" "xz -9e -T1|xz -dc" \
	"zstd -q -19 -T1|zstd -q -dc" "zstd -q --ultra -22 --long=27 -T1|zstd -q -dc --long=27"; do
	IFS='|' read -r comp decomp <<<"$spec"
	tool=${comp%% *}
	if ! command -v "$tool" >/dev/null; then
		echo "| $comp | not installed | | | |"
		continue
	fi
	echo "release-size: $comp" >&2
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S' -o "$tmp/time" $comp <"$tmp/r.tar" >"$tmp/r.out"
	c=$(cpu)
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S' -o "$tmp/time" $decomp <"$tmp/r.out" >/dev/null
	d=$(cpu)
	size=$(bytes "$tmp/r.out")
	vs=$(awk -v a="$size" -v b="$gz9" 'BEGIN { printf "%+.0f%%", (a - b) * 100 / b }')
	echo "| $comp | $(mb "$size") | $vs | $c | $d |"
done
echo
echo "Measured by \`scripts/bench.d/release-size.sh\`: the same build flags as \`scripts/release.sh\`"
echo "(cgo and a static link for synaxi-mapgen and synaxi-mcp, which both carry the tree-sitter"
echo "grammars), each variant changing one thing. Sizes are bytes / 10^6. The launcher extracts"
echo "with \`tar -xzf\`, so a release stays .tar.gz; CPU times are from \`/usr/bin/time\`, one run each,"
echo "on a shared machine. Only this machine's platform is measured."
