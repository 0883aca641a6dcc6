#!/usr/bin/env bash
# release.sh: build synaxi's release archives, verify them and write their
# checksums. The same script runs under `make release` on a maintainer's
# machine and in the release workflow (.github/workflows/release.yml), where
# each platform is built on a runner of its own; docs/release.md tells the
# whole story.
#
#   scripts/release.sh            build, then checksums (what `make release` runs)
#   scripts/release.sh build      one archive per platform in $PLATFORMS
#   scripts/release.sh checksums  verify every archive, write SHA256SUMS and plugin/checksums.txt
#   scripts/release.sh bump       set plugin.json's version to $RELEASE_VERSION
#   scripts/release.sh notes TAG  release notes for TAG: the commits since the previous tag
#
# What it makes (the launcher, plugin/bin/synaxi-run, depends on these names):
#   $RELEASE_DIST/synaxi_<version>_<os>_<arch>.tar.gz  one directory of the same
#       name holding every binary, README.md and LANGUAGES (what synaxi-mapgen
#       in it parses, one "<language> parsed <extensions>" line each)
#   $RELEASE_DIST/SHA256SUMS and plugin/checksums.txt (or $RELEASE_CHECKSUMS)
#       "<sha256>  <archive>" lines
#
# <version> is the plugin version (RELEASE_VERSION, default plugin.json's): it
# is what the launcher downloads. The binaries report GIT_VERSION (default
# `git describe --always`, with -dirty when a tracked file other than
# plugin/checksums.txt differs).
#
# Every archive parses every map language or is not made. synaxi-mapgen and
# synaxi-mcp need cgo (tree-sitter's grammars are C), so a platform is built
# only where a C compiler for it is at hand: the host's own ($CC, else cc),
# aarch64-linux-gnu-gcc / x86_64-linux-gnu-gcc between the two linux
# architectures, or the compiler CC_<os>_<arch> names. Any other platform is
# skipped, and the summary says so. With PLATFORMS set, every platform named
# must be built, or the script fails. RELEASE_GO_ONLY=1 (development only)
# packs a Go-only archive instead of skipping, and says so loudly; `checksums`
# refuses such an archive unless RELEASE_GO_ONLY=1 is set there too.
#
# Reproducible: the same source, version and Go toolchain give the same bytes
# (-trimpath, -buildvcs=false, GNU tar with sorted names, fixed owners, modes
# and the commit's time, gzip -n).
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

die() {
	echo "release.sh: $*" >&2
	exit 1
}

manifest=plugin/.claude-plugin/plugin.json
# The first "version" value in the manifest, read as the launcher reads it.
manifest_version() {
	sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}
version=${RELEASE_VERSION:-$(manifest_version)}
[[ $version =~ ^[0-9A-Za-z.+-]+$ ]] || die "bad version '$version': RELEASE_VERSION (or plugin.json's version) may hold only letters, digits, '.', '+' and '-'"
dist=${RELEASE_DIST:-dist}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
all_platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
platforms=${PLATFORMS:-$all_platforms}
go_only=${RELEASE_GO_ONLY:-0}
# Where `checksums` writes the launcher's list (another path for a test or a
# scratch marketplace copy).
checksums_file=${RELEASE_CHECKSUMS:-plugin/checksums.txt}

git_version() {
	if [[ -n ${GIT_VERSION:-} ]]; then
		echo "$GIT_VERSION"
		return
	fi
	local v
	v=$(git describe --always 2>/dev/null) || {
		echo dev
		return
	}
	# plugin/checksums.txt is this script's own output: writing it must not
	# change what the next build stamps into the binaries.
	if [[ -n $(git status --porcelain --untracked-files=no -- . ':!plugin/checksums.txt' 2>/dev/null) ]]; then
		v+=-dirty
	fi
	echo "$v"
}

# GNU tar makes the archive reproducible (sorted names, fixed owners and
# times); macOS names it gtar.
tar_cmd() {
	local t
	for t in gtar tar; do
		if command -v "$t" >/dev/null 2>&1 && "$t" --version 2>/dev/null | grep -q 'GNU tar'; then
			echo "$t"
			return
		fi
	done
	die "GNU tar is needed for reproducible archives (macOS: brew install gnu-tar)"
}

host=$(go env GOHOSTOS)/$(go env GOHOSTARCH)

# cc_for prints the C compiler that builds cgo code for a platform, or nothing.
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

# why_skipped says what a platform without a C compiler needs.
why_skipped() {
	local p=$1 var="CC_${1/\//_}"
	if [[ $p == "$host" && -z ${!var:-} ]]; then
		echo "no C compiler here (${CC:-cc} not found; install one, or set CC)"
		return
	fi
	case $p in
	darwin/*) echo "needs a macOS runner (or $var naming a cross compiler)" ;;
	linux/arm64) echo "needs a linux/arm64 runner, aarch64-linux-gnu-gcc (Debian: gcc-aarch64-linux-gnu) or $var" ;;
	linux/amd64) echo "needs a linux/amd64 runner, x86_64-linux-gnu-gcc (Debian: gcc-x86-64-linux-gnu) or $var" ;;
	*) echo "needs a C compiler for it ($var)" ;;
	esac
}

# The commands to build, "<module>/cmd/<name> <cgo 0|1>" a line, from the Makefile.
commands() { make --no-print-directory -s print-commands; }

# The languages the source's extension table names, one a line: what a cgo
# build parses (a build without cgo still lists them, as missing).
known_languages() {
	(cd mapgen && CGO_ENABLED=0 go run ./cmd/synaxi-mapgen languages) | awk '{ print $1 }'
}

# build_one PLATFORM: the archive for one platform, or a line on why not.
build_one() {
	local p=$1 os=${1%/*} arch=${1#*/}
	local name=synaxi_${version}_${os}_${arch} cc cgo_note
	local stage=$dist/stage/$name
	cc=$(cc_for "$p")
	if [[ -z $cc && $go_only != 1 ]]; then
		summary+=("$p: skipped, $(why_skipped "$p")")
		skipped+=("$p")
		return
	fi
	echo "== $name (binaries $gitv)" >&2
	rm -rf "$stage"
	mkdir -p "$stage"
	local c mod cmdname cgo ldflags
	while read -r c cgo; do
		mod=${c%%/*} cmdname=${c##*/}
		ldflags="-s -w -X main.version=$gitv"
		if [[ $cgo == 1 && -n $cc ]]; then
			# Statically linked on linux, so the archive runs on any libc;
			# macOS has no static libc and links libSystem.
			[[ $os == linux ]] && ldflags+=" -linkmode external -extldflags -static"
			(cd "$mod" && CGO_ENABLED=1 CC="$cc" GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
				-tags netgo,osusergo -ldflags "$ldflags" -o "$stage/$cmdname" "./${c#*/}")
		else
			(cd "$mod" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
				-ldflags "$ldflags" -o "$stage/$cmdname" "./${c#*/}")
		fi
	done < <(commands)

	# LANGUAGES: what this archive's synaxi-mapgen says it parses when it runs
	# here; for a cross build, what the same source built with cgo on this
	# machine parses.
	local table
	if [[ $p == "$host" ]]; then
		table=$("$stage/synaxi-mapgen" languages)
		cgo_note="as reported by this archive's synaxi-mapgen"
	elif [[ -n $cc && -n $(cc_for "$host") ]]; then
		table=$(cd mapgen && CGO_ENABLED=1 CC="$(cc_for "$host")" go run ./cmd/synaxi-mapgen languages)
		cgo_note="cross-built with $(basename "$cc"); as reported by a cgo build of the same source on $host"
	elif [[ -n $cc ]]; then
		rm -rf "$stage"
		summary+=("$p: skipped, cross-built binaries cannot be checked here without a C compiler for $host")
		skipped+=("$p")
		return
	else
		table=$(cd mapgen && CGO_ENABLED=0 go run ./cmd/synaxi-mapgen languages)
		cgo_note="built WITHOUT cgo (RELEASE_GO_ONLY=1): NOT FOR RELEASE"
	fi
	{
		printf '# The languages synaxi-mapgen and synaxi-mcp in this archive parse for\n'
		printf '# repository maps (%s).\n' "$cgo_note"
		printf '# <language> parsed|missing <file extensions>\n'
		printf '%s\n' "$table"
	} >"$stage/LANGUAGES"
	cp README.md "$stage/"
	[[ -f LICENSE ]] && cp LICENSE "$stage/"
	local n missing
	n=$(awk '!/^#/ && $2 == "parsed"' "$stage/LANGUAGES" | wc -l | tr -d ' ')
	missing=$(awk '!/^#/ && $2 != "parsed" { printf " %s", $1 }' "$stage/LANGUAGES")
	if [[ -n $missing && $go_only != 1 ]]; then
		rm -rf "$stage"
		die "$p: synaxi-mapgen built with cgo ($cc) still misses:$missing; not packing an incomplete archive"
	fi

	# Fixed modes, owners, order and time: the bytes depend on the content only.
	chmod 0755 "$stage" "$stage"/synaxi*
	chmod 0644 "$stage/LANGUAGES" "$stage/README.md"
	[[ -f $stage/LICENSE ]] && chmod 0644 "$stage/LICENSE"
	"$tar" -C "$dist/stage" --format=gnu --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$mtime" -cf - "$name" | gzip -n -9 >"$dist/$name.tar.gz"
	rm -rf "$stage"
	local size
	size=$(wc -c <"$dist/$name.tar.gz" | tr -d ' ')
	if [[ -n $missing ]]; then
		summary+=("$p: built $dist/$name.tar.gz ($size bytes) — WARNING: GO ONLY, parses $n languages, misses$missing (RELEASE_GO_ONLY=1; never publish it)")
	else
		summary+=("$p: built $dist/$name.tar.gz ($size bytes), $n languages, cgo ($(basename "$cc"))")
	fi
	built+=("$p")
}

cmd_build() {
	gitv=$(git_version)
	tar=$(tar_cmd)
	mtime=$(git log -1 --format=%ct 2>/dev/null || echo 0)
	summary=() skipped=() built=()
	local p
	for p in $platforms; do
		case " $all_platforms " in
		*" $p "*) ;;
		*) die "unknown platform '$p' in PLATFORMS; known: $all_platforms" ;;
		esac
	done
	mkdir -p "$dist"
	rm -f "$dist"/synaxi_"$version"_*.tar.gz
	for p in $platforms; do
		build_one "$p"
	done
	rmdir "$dist/stage" 2>/dev/null || true
	echo "release $version (binaries $gitv, host $host):"
	printf '  %s\n' "${summary[@]}"
	if ((${#built[@]} == 0)); then
		die "no archive built"
	fi
	if ((${#skipped[@]})) && [[ -n ${PLATFORMS:-} ]]; then
		die "PLATFORMS names ${skipped[*]}, which could not be built here"
	fi
}

# verify_archive FILE EXPECTED-LANGUAGES: one top directory named after the
# archive, every command in it, LANGUAGES listing every expected language as
# parsed. Prints the number of languages.
verify_archive() {
	local f=$1 want=$2 name
	name=$(basename "$f" .tar.gz)
	[[ $name =~ ^synaxi_${version//./\\.}_(linux|darwin)_(amd64|arm64)$ ]] ||
		die "$f: not named synaxi_${version}_<os>_<arch>.tar.gz (RELEASE_VERSION=$version)"
	local listing tops
	listing=$(tar -tzf "$f") || die "$f: not a readable tar.gz"
	tops=$(printf '%s\n' "$listing" | sed 's,/.*,,' | sort -u)
	[[ $tops == "$name" ]] || die "$f: top level holds '$(tr '\n' ' ' <<<"$tops")', want the single directory $name"
	local c cgo
	while read -r c cgo; do
		grep -qx "$name/${c##*/}" <<<"$listing" || die "$f: has no ${c##*/}"
	done < <(commands)
	local got
	got=$(tar -xzOf "$f" "$name/LANGUAGES" | awk '!/^#/ && $2 == "parsed" { print $1 }' | sort) ||
		die "$f: has no LANGUAGES"
	if [[ $got != "$want" ]]; then
		local lacking
		lacking=$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got") | tr '\n' ' ')
		[[ $go_only == 1 ]] || die "$f: LANGUAGES lacks ${lacking}(built without cgo?); rebuild it on a runner with a C compiler"
		echo "WARNING: $f parses $(printf '%s\n' "$got" | awk 'NF' | wc -l | tr -d ' ') of $(printf '%s\n' "$want" | wc -l | tr -d ' ') languages, lacks ${lacking}(RELEASE_GO_ONLY=1: not a release)" >&2
	fi
	printf '%s\n' "$got" | awk 'NF' | wc -l | tr -d ' '
}

cmd_checksums() {
	local want f p n
	want=$(known_languages | sort)
	[[ -n $want ]] || die "cannot list the languages mapgen names"
	shopt -s nullglob
	local archives=("$dist"/synaxi_"$version"_*.tar.gz)
	shopt -u nullglob
	((${#archives[@]})) || die "no archive synaxi_${version}_*.tar.gz in $dist; run scripts/release.sh build first"
	if [[ -n ${PLATFORMS:-} ]]; then
		for p in $platforms; do
			[[ -f $dist/synaxi_${version}_${p%/*}_${p#*/}.tar.gz ]] || die "no archive for $p in $dist"
		done
	fi
	for f in "${archives[@]}"; do
		n=$(verify_archive "$f" "$want")
		echo "verified $(basename "$f"): $n languages"
	done
	(cd "$dist" && sha256sum synaxi_"$version"_*.tar.gz >SHA256SUMS)
	{
		printf '# SHA-256 checksums of the release archives for this plugin version, one\n'
		printf '# "<sha256>  <archive>" line each. Written by scripts/release.sh; the launcher\n'
		printf '# (bin/synaxi-run) refuses any downloaded archive not listed here.\n'
		cat "$dist/SHA256SUMS"
	} >"$checksums_file"
	cat "$dist/SHA256SUMS"
	echo "wrote $dist/SHA256SUMS and $checksums_file for version $version"
}

# cmd_bump sets the manifest's version in place, the one line only.
cmd_bump() {
	[[ -n ${RELEASE_VERSION:-} ]] || die "bump needs RELEASE_VERSION"
	local tmp
	tmp=$(mktemp "$manifest.XXXXXX")
	awk -v v="$version" '!done && /^[[:space:]]*"version"[[:space:]]*:/ { sub(/:[[:space:]]*"[^"]*"/, ": \"" v "\""); done = 1 } { print }' \
		"$manifest" >"$tmp"
	chmod 0644 "$tmp"
	mv "$tmp" "$manifest"
	[[ $(manifest_version) == "$version" ]] || die "could not set the version in $manifest"
	echo "$manifest: version $version"
}

# cmd_notes TAG: markdown release notes, the commits since the previous tag.
cmd_notes() {
	local tag=${1:-} prev range
	[[ -n $tag ]] || die "notes needs a tag (scripts/release.sh notes v0.2.0)"
	git rev-parse -q --verify "refs/tags/$tag" >/dev/null || die "no tag $tag here (git fetch --tags?)"
	prev=$(git describe --tags --abbrev=0 --match 'v*' "$tag^" 2>/dev/null || true)
	range=$tag
	[[ -n $prev ]] && range=$prev..$tag
	printf '## synaxi %s\n\n' "$tag"
	if [[ -n $prev ]]; then
		printf 'Changes since %s:\n\n' "$prev"
	else
		printf 'Changes (first release):\n\n'
	fi
	git log --no-merges --format='- %s (%h)' "$range"
	cat <<'NOTES'

Every archive is built with cgo on its own platform and parses every map language
(see LANGUAGES in it). Install from Claude Code: `/plugin marketplace add synaxi/synaxi`,
then `/plugin install synaxi@synaxi` and `/synaxi:setup`; the launcher downloads the
archive for your platform and checks it against plugin/checksums.txt.
NOTES
	if [[ -f $dist/SHA256SUMS ]]; then
		printf '\nSHA-256:\n\n```\n'
		cat "$dist/SHA256SUMS"
		printf '```\n'
	fi
}

case ${1:-all} in
all)
	cmd_build
	cmd_checksums
	;;
build) cmd_build ;;
checksums) cmd_checksums ;;
bump) cmd_bump ;;
notes) cmd_notes "${2:-}" ;;
-h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*) die "unknown command '$1'; run scripts/release.sh help" ;;
esac
