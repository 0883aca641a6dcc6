#!/usr/bin/env bash
# A fixture for the Bash golden test.
set -euo pipefail

# LIMIT is how many shapes fit.
LIMIT=10
export SHAPES_HOME="${HOME}/shapes"
readonly VERSION=1.0
declare -a NAMES=(rect circle)

# area prints the area of a w by h rectangle.
area() {
	local w=$1 h=$2
	echo $((w * h))
}

function register {
	local name=$1
	NAMES+=("$name")
	area 2 3
}

function main() {
	register square
	echo "${NAMES[@]}" "$LIMIT" "$SHAPES_HOME"
}

main "$@"
