#!/usr/bin/env bash
# release.sh: cross-build every synaxi binary for linux and darwin on amd64 and
# arm64, pack one archive per platform and write their SHA-256 checksums.
#
#   dist/synaxi_<version>_<os>_<arch>.tar.gz   one directory of the same name, all binaries
#   dist/SHA256SUMS                            "<sha256>  <archive>" per archive
#   plugin/checksums.txt                       the same lines: what the launcher verifies against
#
# <version> is the plugin version (RELEASE_VERSION, default plugin.json's), because
# that is what plugin/bin/synaxi-run downloads; the binaries report the git
# version (GIT_VERSION, default `git describe --always --dirty`).
#
# Every binary is built with CGO_ENABLED=0 (static, cross-builds with nothing
# but Go), except synaxi-mapgen and synaxi-mcp: their parsers for every
# language but Go are tree-sitter's C grammars, so they are rebuilt with cgo
# (statically linked) wherever a C compiler for the target is at hand:
#   - the host's own platform: $CC, else cc;
#   - linux/arm64 from linux/amd64 (and back): aarch64-linux-gnu-gcc
#     (x86_64-linux-gnu-gcc), Debian's gcc-aarch64-linux-gnu package;
#   - any target: CC_<os>_<arch> names a cross compiler (e.g. an osxcross
#     clang for darwin; none can be had from Debian's packages).
# A target without one still gets an archive, whose mapgen parses Go only;
# its LANGUAGES file and the summary at the end say so, and
# RELEASE_REQUIRE_CGO=1 makes that an error instead.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=${RELEASE_VERSION:-$(sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' plugin/.claude-plugin/plugin.json | head -n 1)}
git_version=${GIT_VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
[[ $version =~ ^[A-Za-z0-9.+-]+$ ]] || { echo "release.sh: bad version '$version'" >&2; exit 1; }

# Reproducible archives: fixed order, owner and mtime (the commit's time).
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime")
tar --version 2>/dev/null | grep -q GNU || tar_flags=()

host=$(go env GOHOSTOS)/$(go env GOHOSTARCH)

# cc_for prints the C compiler that builds cgo code for a target, or nothing.
cc_for() {
	local p=$1 var="CC_${1/\//_}"
	if [[ -n ${!var:-} ]]; then
		command -v "${!var}" || true
		return
	fi
	if [[ $p == "$host" ]]; then
		command -v "${CC:-cc}" || true
		return
	fi
	case $p in
	linux/arm64) command -v aarch64-linux-gnu-gcc || true ;;
	linux/amd64) command -v x86_64-linux-gnu-gcc || true ;;
	esac
}

# What synaxi-mapgen parses with and without cgo, from this source tree.
langs_cgo=$(cd mapgen && CGO_ENABLED=1 go run ./cmd/synaxi-mapgen languages --json 2>/dev/null || true)
langs_nocgo=$(cd mapgen && CGO_ENABLED=0 go run ./cmd/synaxi-mapgen languages --json)
[[ -n $langs_cgo ]] || langs_cgo='(unknown: no C compiler on the release machine)'

rm -rf dist
mkdir -p dist/stage
summary=()
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name=synaxi_${version}_${os}_${arch}
	echo "== $name (binaries $git_version)"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch make --no-print-directory build \
		BIN="dist/stage/$name" VERSION="$git_version" EXTRA_LDFLAGS="-s -w" >/dev/null
	cc=$(cc_for "$p")
	if [[ -n $cc ]]; then
		for c in mapgen/cmd/synaxi-mapgen mcp/cmd/synaxi-mcp; do
			(cd "${c%%/*}" && CGO_ENABLED=1 CC="$cc" GOOS=$os GOARCH=$arch go build -trimpath -tags netgo,osusergo \
				-ldflags "-s -w -X main.version=$git_version -linkmode external -extldflags -static" \
				-o "$repo/dist/stage/$name/${c##*/}" "./${c#*/}")
		done
		printf 'synaxi-mapgen and synaxi-mcp in this archive were built with cgo (%s)\nand parse: %s\n' \
			"$(basename "$cc")" "$langs_cgo" >"dist/stage/$name/LANGUAGES"
		summary+=("$p: every language (cgo, $(basename "$cc"))")
	else
		if [[ ${RELEASE_REQUIRE_CGO:-0} == 1 ]]; then
			echo "release.sh: no C compiler for $p (set CC_${os}_${arch}); RELEASE_REQUIRE_CGO=1 forbids a Go-only mapgen" >&2
			exit 1
		fi
		printf 'synaxi-mapgen and synaxi-mcp in this archive were built without cgo: no C compiler\nfor %s was found on the release machine. They parse: %s\nBuild from source with a C compiler (make build) for the other languages.\n' \
			"$p" "$langs_nocgo" >"dist/stage/$name/LANGUAGES"
		summary+=("$p: Go only (no C compiler for $p here; set CC_${os}_${arch})")
	fi
	cp LICENSE README.md "dist/stage/$name/" 2>/dev/null || true
	tar -C dist/stage "${tar_flags[@]}" -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
done
rm -rf dist/stage
printf 'languages per archive:\n'
printf '  %s\n' "${summary[@]}"

(cd dist && sha256sum synaxi_*.tar.gz >SHA256SUMS)
{
	printf '# SHA-256 checksums of the release archives for this plugin version, one\n'
	printf '# "<sha256>  <archive>" line each. Written by `make release`; the launcher\n'
	printf '# (bin/synaxi-run) refuses any downloaded archive not listed here.\n'
	cat dist/SHA256SUMS
} >plugin/checksums.txt
cat dist/SHA256SUMS
echo "wrote dist/ and plugin/checksums.txt for version $version"
