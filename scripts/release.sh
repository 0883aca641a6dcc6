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
# Every target is built with CGO_ENABLED=0 so all four cross-build from one
# machine with nothing but Go. cgo parts cannot be cross-built that way: the
# tree-sitter parsers mapgen uses for languages other than Go need a C
# toolchain for each target. A release binary therefore has mapgen's pure-Go
# parsing only (Go sources via go/parser); a `make build` on the user's own
# machine, with a C compiler, includes tree-sitter.
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

rm -rf dist
mkdir -p dist/stage
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name=synaxi_${version}_${os}_${arch}
	echo "== $name (binaries $git_version, CGO_ENABLED=0)"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch make --no-print-directory build \
		BIN="dist/stage/$name" VERSION="$git_version" EXTRA_LDFLAGS="-s -w" >/dev/null
	cp LICENSE README.md "dist/stage/$name/" 2>/dev/null || true
	tar -C dist/stage "${tar_flags[@]}" -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
done
rm -rf dist/stage

(cd dist && sha256sum synaxi_*.tar.gz >SHA256SUMS)
{
	printf '# SHA-256 checksums of the release archives for this plugin version, one\n'
	printf '# "<sha256>  <archive>" line each. Written by `make release`; the launcher\n'
	printf '# (bin/synaxi-run) refuses any downloaded archive not listed here.\n'
	cat dist/SHA256SUMS
} >plugin/checksums.txt
cat dist/SHA256SUMS
echo "wrote dist/ and plugin/checksums.txt for version $version"
