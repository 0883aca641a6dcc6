package repomap

// EstimateTokens estimates how many model tokens s costs: one token per 3
// bytes, rounded up. Maps are signatures, paths and line numbers, which
// tokenise densely: synaxi's calibrated estimator (internal/tokens, which
// mapgen, a leaf module, cannot import) put two standard-library maps at 2.93
// bytes per token. It is an estimate, not a tokenizer.
func EstimateTokens(s string) int {
	return (len(s) + 2) / 3
}
