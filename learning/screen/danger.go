package screen

import (
	"regexp"
	"strings"
	"sync"
)

// dangers are instructions no user durably means the agent to follow
// unseen: destructive or security-weakening commands and prompt
// injection. Each has the reason review shows beside the rule.
var dangers = sync.OnceValue(func() []struct {
	reason  string
	re      *regexp.Regexp
	negable bool // a prohibition of it ("never force push") is a safe rule
} {
	type d = struct {
		reason  string
		re      *regexp.Regexp
		negable bool
	}
	return []d{
		{"tells the agent to ignore its instructions", regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override)\b.{0,20}\b(?:previous|prior|above|earlier|preceding|all|your|system)\b.{0,20}\b(?:instructions?|rules|prompts?|guidelines|directions)\b` +
			`|(?i)\bignorier\w*\b.{0,30}\b(?:anweisungen|instruktionen|regeln|vorgaben)\b|\bvergiss\b.{0,20}\b(?:anweisungen|regeln)\b` +
			`|(?i)\b(?:ignore[rz]?|oublie[rz]?)\b.{0,30}\b(?:instructions|consignes|règles)\b` +
			`|(?i)\b(?:ignora\w*|olvida\w*)\b.{0,30}\b(?:instrucciones|reglas|indicaciones)\b` +
			`|(?i)\byou are now (?:in )?(?:developer|dan|jailbreak|unrestricted)|\bnew system prompt\b`), false},
		{"recursive delete", regexp.MustCompile(`(?i)\brm\s+(?:-\w*r\w*|--recursive)\b|\bRemove-Item\b.*-Recurse|\b(?:rmdir|rd|del)\s+/[sq]\b|\bfind\b.*\s-delete\b|\bshutil\.rmtree\b|\bmkfs(?:\.\w+)?\b|\bdd\s+if=|:\(\)\s*\{\s*:\|:&\s*\};:`), true},
		{"force push or discarded work", regexp.MustCompile(`(?i)\bgit\s+push\b[^\n]*?(?:\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)|\bforce[- ]?push\w*|\bgit\s+reset\s+--hard\b|\bgit\s+clean\s+-\w*f|\bgit\s+checkout\s+--?\s+\.|\bgit\s+branch\s+-D\b|\bgit\s+filter-(?:branch|repo)\b`), true},
		{"disables tests, hooks or checks", regexp.MustCompile(`(?i)--no-verify\b|--no-gpg-sign\b|\b(?:skip|disable|turn off|comment out|delete|remove|bypass|silence|mute)\s+(?:all\s+|the\s+|any\s+|failing\s+|these\s+)*(?:tests?|checks?|hooks?|ci|linters?|linting|lint|type\s?checks?|typechecking|verification|assertions|pre-commit|gitleaks|signing|code review)\b` +
			`|\b(?:tests?|checks?|hooks?|linter|prüfungen)\s+(?:\w+\s+){0,2}(?:deaktivier\w*|überspring\w*|auskommentier\w*|abschalt\w*|ausschalt\w*)|\b(?:deaktivier\w*|überspring\w*|schalte?)\s+(?:\w+\s+){0,2}(?:tests?|checks?|hooks?|linter|prüfungen)\b` +
			`|\b(?:désactive\w*|saute\w*|ignore\w*|supprime\w*|contourne\w*)\s+(?:\w+\s+){0,2}(?:tests?|vérifications?|hooks?|contrôles?|linter)\b` +
			`|\b(?:desactiva\w*|salta\w*|omite\w*|omitir|elimina\w*|borra\w*|ignora\w*)\s+(?:\w+\s+){0,2}(?:tests?|pruebas|comprobaciones|hooks?|controles|linter)\b` +
			`|\b(?:t\.Skip|@pytest\.mark\.skip|it\.skip|xit|describe\.skip)\b|\bSKIP=\S`), true},
		{"pipes a download into a shell", regexp.MustCompile(`(?i)\b(?:curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget|irm|iwr)\b[^\n|]*\|\s*(?:iex|Invoke-Expression|python3?|node|perl|ruby)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\biex\s*\(\s*(?:irm|iwr|New-Object)`), true},
		{"broad permission change", regexp.MustCompile(`(?i)\bchmod\s+(?:-\w+\s+)*(?:0?777|a\+rwx|ugo\+rwx|o\+w|-R\b)|\bchown\s+-R\b|\bicacls\b.*\b(?:Everyone|\*S-1-1-0)\b|\bsetfacl\s+-R\b|\bsudo\s+(?:rm|chmod|chown)\b`), true},
		{"weakens security", regexp.MustCompile(`(?i)--dangerously-skip-permissions|\bbypassPermissions\b|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*0|\bverify\s*=\s*False\b|\bInsecureSkipVerify\s*:\s*true|\b(?:disable|turn off)\s+(?:the\s+)?(?:ssl|tls|certificate|cert|sandbox|firewall|2fa|mfa|selinux|apparmor|csrf|cors)\b|\bsetenforce\s+0\b|\bDROP\s+(?:TABLE|DATABASE|SCHEMA)\b|\bTRUNCATE\s+TABLE\b`), true},
	}
})

// negationRE: words that make what follows a prohibition, in four
// languages.
var negationRE = regexp.MustCompile(`(?i)(?:^|[^\pL])(?:never|don'?t|do not|does not|doesn'?t|not|no|avoid|stop|without|nie|niemals|nicht|kein\w*|keine?n?|ohne|vermeide\w*|jamais|ne|n'|pas|sans|évite\w*|nunca|jamás|sin|evita\w*)(?:$|[^\pL])`)

// Danger reports whether s tells the agent to do something destructive or
// security-weakening, or to ignore its instructions, and why. A
// prohibition of a destructive command ("never force push", "ne fais
// jamais rm -rf") is a safe rule and is not reported; an instruction to
// ignore instructions always is.
func Danger(s string) (string, bool) {
	for _, d := range dangers() {
		for _, m := range d.re.FindAllStringIndex(s, -1) {
			if d.negable && negated(s[:m[0]]) {
				continue
			}
			return d.reason, true
		}
	}
	return "", false
}

// negated reports whether the clause that ends at the end of before
// contains a negation.
func negated(before string) bool {
	clause := before
	if i := strings.LastIndexAny(clause, ".;!?\n"); i >= 0 {
		clause = clause[i+1:]
	}
	// "no, run it" answers the assistant; it forbids nothing.
	clause = leadNo.ReplaceAllString(clause, "")
	return negationRE.MatchString(clause)
}

var leadNo = regexp.MustCompile(`(?i)^\s*(?:no+|nope|nah|nein|non)\s*[,.!:]`)
