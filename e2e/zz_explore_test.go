package e2e_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/synaxi/synaxi/e2e/fakeapi"
)

func TestZZExplorePlanToolSearch(t *testing.T) {
	a := &mechanismAgent{}
	e, _, fake, _ := readingSession(t, os.Getenv("ZZ_PLUGIN") == "1", func(r *ttyPersonAgent) fakeapi.Agent {
		a.ttyPersonAgent = r
		return fakeapi.AgentFunc(func(v *fakeapi.View) fakeapi.Reply {
			typed, since := v.TypedTurn()
			if strings.Contains(typed, "Plan how to") && len(since) == 0 {
				if !v.HasTool("ExitPlanMode") {
					if _, ok := answered(since, func(c fakeapi.Call) bool { return c.Name == "ToolSearch" }); !ok {
						return fakeapi.Reply{Text: "Loading.", ToolUses: []fakeapi.ToolUse{{Name: "ToolSearch", Input: map[string]any{"query": "select:ExitPlanMode", "max_results": 1}}}}
					}
				}
			}
			return a.Respond(v)
		})
	})
	e.Vars = append(e.Vars, "ENABLE_TOOL_SEARCH=true")
	term := startTTYMode(t, e, e.Work, "plan")
	term.waitFor("plan mode on", 2*time.Minute)
	submit(term, "Plan how to read m01.py to m04.py.")
	time.Sleep(20 * time.Second)
	t.Log(term.screen())
	term.stop()
	for i, r := range fake.MessagesRequests() {
		os.WriteFile(fmt.Sprintf("/tmp/zz/req%02d.json", i), r.Body, 0o644)
	}
}
