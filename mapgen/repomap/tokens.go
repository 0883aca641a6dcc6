package repomap

// EstimateTokens estimates how many model tokens s costs: one token per 3.5
// bytes, rounded up. Code and signatures tokenise more densely than prose
// (punctuation and short identifiers), so this errs on the side of staying
// under a budget; it is an estimate, not a tokenizer.
func EstimateTokens(s string) int {
	return (len(s)*2 + 6) / 7
}
