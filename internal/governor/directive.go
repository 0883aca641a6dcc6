package governor

import "fmt"

// Mode is how the governor acts on a fire.
type Mode string

// Modes of governor.mode.
const (
	Off    Mode = "off"    // detect nothing
	Advise Mode = "advise" // tell the model, once per fire
	On     Mode = "on"     // tell the model and stop the loop
)

// Modes lists the valid modes.
var Modes = []Mode{Off, Advise, On}

// Directive is the one short instruction the model gets for a fire.
func (f Fire) Directive() string {
	f.Subject = short(f.Subject)
	switch f.Rule {
	case Repeat:
		return fmt.Sprintf("synaxi governor: `%s` has run %d times with no edit in between, so its result cannot change. "+
			"Use the output you have, or take a different step.", f.Subject, f.Count)
	case Unchanged:
		return fmt.Sprintf("synaxi governor: `%s` has failed %d times in a row with the same output; the edits in between did not change it. "+
			"Stop and re-read the error: the cause is not where you have been editing. Form a new hypothesis, or ask the user.", f.Subject, f.Count)
	case Revert:
		return fmt.Sprintf("synaxi governor: this edit restores text an earlier edit of %s replaced (%d times now): you are undoing your own changes. "+
			"Decide which version is right before editing it again.", f.Subject, f.Count)
	case Reread:
		return fmt.Sprintf("synaxi governor: you have read the same lines of %s %d times with no edit in between. "+
			"Use what you read instead of reading it again.", f.Subject, f.Count)
	case Stall:
		return fmt.Sprintf("synaxi governor: the last %d tool calls touched no new file while the context grew by about %d tokens. "+
			"Say what you have learned and change approach, or ask the user.", f.Count, f.Tokens)
	}
	return ""
}

// StopReason is what the user sees when mode on stops a session at a fire.
func (f Fire) StopReason() string {
	return fmt.Sprintf("synaxi governor (mode on) stopped the agent: %s loop on %s. Set governor.mode = \"advise\" to only warn the agent.", f.Rule, f.what())
}

func (f Fire) what() string {
	if f.Subject == "" {
		return fmt.Sprintf("%d calls", f.Count)
	}
	return short(f.Subject)
}
