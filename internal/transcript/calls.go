package transcript

// Call is one API response. Claude Code stores a response as one assistant
// record per content block, so several records share a message id and a
// request id; a Call gathers them.
type Call struct {
	MessageID string
	RequestID string
	Model     string // "<synthetic>" marks a message Claude Code made itself
	AgentID   string
	Sidechain bool
	// Usage is the response's final usage: the records' usage with the
	// largest output count (earlier records carry a partial count).
	Usage   Usage
	Records []*Record // in file order
}

// Calls groups the assistant records of recs into API calls, in order of
// first appearance, deduplicated by message id and request id. Records
// without a message are ignored.
func Calls(recs []*Record) []*Call {
	type key struct{ msg, req string }
	byKey := map[key]*Call{}
	var out []*Call
	for _, r := range recs {
		if r.Type != TypeAssistant || r.Message == nil {
			continue
		}
		k := key{r.Message.ID, r.RequestID}
		c := byKey[k]
		if c == nil || k == (key{}) {
			c = &Call{MessageID: r.Message.ID, RequestID: r.RequestID, Model: r.Message.Model,
				AgentID: r.AgentID, Sidechain: r.IsSidechain}
			byKey[k] = c
			out = append(out, c)
		}
		c.Records = append(c.Records, r)
		if u := r.Message.Usage; u != nil && (len(c.Records) == 1 || u.OutputTokens >= c.Usage.OutputTokens) {
			c.Usage = *u
		}
	}
	return out
}
