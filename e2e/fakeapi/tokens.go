package fakeapi

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/synaxi/synaxi/internal/tokens"
)

// Tokens is the fake's token function for one block: the estimate of
// internal/tokens (EstimateBytes, a calibrated character-class estimator) for
// canon, at least 1, where canon is the block's compact JSON with its
// cache_control field removed. It is deterministic; what matters for the
// fake is that count_tokens and messages usage use the same function.
func Tokens(canon []byte) int64 {
	return max(1, int64(tokens.EstimateBytes(canon)))
}

// CountTokens returns what the fake's count_tokens would answer for body: the
// sum of Tokens over every block of tools, system and messages. It does not
// validate the body beyond decoding it.
func CountTokens(body []byte) (int64, error) {
	p, err := parseRequest(body)
	if err != nil {
		return 0, err
	}
	return p.totalTokens(), nil
}

func (p *parsedRequest) totalTokens() int64 {
	var sum int64
	for _, b := range p.prefix() {
		sum += Tokens(b.canon)
	}
	return sum
}

// sigPrefix marks thinking signatures the fake issued. Only those are
// verified: a signature from elsewhere cannot be checked and is accepted.
const sigPrefix = "fakesig1."

// signThinking returns the signature the fake attaches to a thinking block.
func signThinking(text string) string {
	sum := sha256.Sum256([]byte("fakeapi thinking\x00" + text))
	return sigPrefix + base64.RawURLEncoding.EncodeToString(sum[:18])
}

// signatureValid reports whether sig can belong to text: a fake-issued
// signature must match the text exactly (as the real API rejects a thinking
// block whose text was altered); foreign signatures pass.
func signatureValid(text, sig string) bool {
	if !strings.HasPrefix(sig, sigPrefix) {
		return true
	}
	return sig == signThinking(text)
}
