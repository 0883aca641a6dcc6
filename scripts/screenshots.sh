#!/usr/bin/env bash
# screenshots.sh: the README's pictures, from a real run.
#
# Runs the real-client projection survey (e2e TestProjectionSurveyThroughRealClient:
# the pinned Claude Code CLI, the real proxy, the scripted fake upstream), keeps
# the state directory of its projected run, and renders from that state:
#   docs/images/report.png      `synaxi report`, screenshot by headless Chromium
#   docs/images/statusline.svg  the status line synaxi-statusline prints for that session
# Needs chromium (Debian package) for the report. Every figure in the pictures is
# what that run's ledger measured against the fake upstream's count_tokens.
#
# Then the real-client review loop (e2e TestReviewLoopRealClient) keeps the
# screen `synaxi profile review` showed in its pseudo-terminal (tmux), and
#   docs/images/review.png      is that screen, drawn by charm's freeze (SVG) and
#                               rsvg-convert (librsvg2-bin); the test's temporary
#                               repository path is shown as /home/you/shop.
# `screenshots.sh review` makes only that picture.
set -euo pipefail
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
make build >&2

review_png() {
	command -v freeze >/dev/null || { echo "screenshots.sh: needs freeze: go install github.com/charmbracelet/freeze@v0.2.2" >&2; exit 1; }
	command -v rsvg-convert >/dev/null || { echo "screenshots.sh: needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }
	(cd e2e && SYNAXI_PLUGIN_BUILT=1 SYNAXI_E2E_REVIEW_SCREEN="$keep/review.txt" \
		go test -count 1 -run '^TestReviewLoopRealClient$' ./ >&2)
	# The screen without its trailing blank lines, the temporary repository
	# named as a user's would be.
	sed -E 's#/tmp/TestReviewLoopRealClient[0-9]+/[0-9]+#/home/you/shop#' "$keep/review.txt" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$keep/review-clean.txt"
	freeze "$keep/review-clean.txt" -l text --window --font.family "DejaVu Sans Mono" -o "$keep/review.svg" >&2
	mkdir -p docs/images
	rsvg-convert -z 1.5 "$keep/review.svg" -o docs/images/review.png
	echo "wrote docs/images/review.png" >&2
}
if [[ ${1:-} == review ]]; then
	review_png
	exit 0
fi
(cd e2e && SYNAXI_PLUGIN_BUILT=1 SYNAXI_E2E_KEEP_STATE="$keep" \
	go test -count 1 -run '^TestProjectionSurveyThroughRealClient$' ./ >&2)

# The projected run is the one whose ledger has projected rows.
state=
for d in "$keep"/*/*/; do
	if [[ -f $d/ledger/ledger.jsonl ]] && grep -q '"reprojected":true' "$d/ledger/ledger.jsonl"; then state=${d%/}; fi
done
[[ -n $state ]] || { echo "screenshots.sh: no projected run's ledger was kept under $keep" >&2; exit 1; }
echo "state of the projected run: $state" >&2
# synaxi reads $XDG_STATE_HOME/synaxi.
xstate=$keep/xdg-state
mkdir -p "$xstate" && cp -r "$state" "$xstate/synaxi"
export XDG_STATE_HOME=$xstate XDG_CONFIG_HOME=$keep/xdg-config XDG_DATA_HOME=$keep/xdg-data

mkdir -p docs/images
plugin/bin/synaxi report --out "$keep/report.html" >&2
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$keep/chromium" --hide-scrollbars --window-size=1100,1800 \
	--screenshot="$repo/docs/images/report.png" "file://$keep/report.html" >&2

session=$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' "$xstate/synaxi/ledger/ledger.jsonl" | head -n 1)
line=$(printf '{"session_id":"%s","model":{"display_name":"Opus 4.7"},"workspace":{"current_dir":"/home/you/project"}}' "$session" |
	SYNAXI_STATUSLINE_COLOR=never plugin/bin/synaxi-statusline)
[[ -n $line ]] || { echo "screenshots.sh: the status line printed nothing" >&2; exit 1; }
esc=$(sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<<"$line")
width=$((${#line} * 8 + 40))
cat >docs/images/statusline.svg <<SVG
<svg xmlns="http://www.w3.org/2000/svg" width="$width" height="44" viewBox="0 0 $width 44" role="img" aria-label="synaxi status line">
  <title>synaxi-statusline's line after the real-client projection survey (scripts/screenshots.sh)</title>
  <rect width="$width" height="44" rx="6" fill="#1e1e1e"/>
  <text x="14" y="27" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="13" fill="#d4d4d4" xml:space="preserve">$esc</text>
</svg>
SVG
echo "wrote docs/images/report.png and docs/images/statusline.svg" >&2
review_png
