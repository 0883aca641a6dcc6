# fixtures.sh, sourced by scripts that read the shared real fixtures:
# fixtures_dir prints their directory, $SYNAXI_FIXTURES, else shared/fixtures
# beside the checkout (beside the main worktree when this is a linked one),
# and fails when neither exists.
fixtures_dir() {
	local repo=$1 root
	if [[ -n ${SYNAXI_FIXTURES:-} ]]; then
		echo "$SYNAXI_FIXTURES"
		return
	fi
	for root in "$repo" "$(cd "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir)/.." && pwd)"; do
		if [[ -d $root/../shared/fixtures/claude-code-sessions ]]; then
			(cd "$root/../shared/fixtures" && pwd)
			return
		fi
	done
	return 1
}
