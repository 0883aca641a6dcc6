package proxyinfo

import "strings"

// Clouds are the Claude Code switches that make it call a cloud's own API,
// which ignores ANTHROPIC_BASE_URL, with the cloud's name: a client with
// one on never reaches the proxy, so nothing routes it or calls it routed.
var Clouds = []struct{ Var, Name string }{
	{"CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"},
	{"CLAUDE_CODE_USE_VERTEX", "Google Vertex AI"},
	{"CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry"},
}

// On is how Claude Code reads a boolean variable.
func On(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Cloud is the switch of Clouds that is on in getenv, "" when none is.
func Cloud(getenv func(string) string) string {
	for _, c := range Clouds {
		if On(getenv(c.Var)) {
			return c.Var
		}
	}
	return ""
}
