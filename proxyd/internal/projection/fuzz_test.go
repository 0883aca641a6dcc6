package projection

import (
	"context"
	"testing"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// FuzzProjectBody: any body either fails to project (the proxy then
// forwards the original) or projects; a valid request always projects to a
// valid request, identically on a fresh engine.
func FuzzProjectBody(f *testing.F) {
	for _, name := range []string{"worker-first", "worker-thinking", "main-tools", "main-write"} {
		f.Add(capturedBody(f, name))
	}
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"system":"You are Claude Code, x","tools":[{"name":"Read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"     1→x\n"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		warm := New(Config{BudgetTokens: 8000, AlwaysEngage: true})
		r, err := warm.ProjectBody(context.Background(), body, "")
		if err != nil {
			return
		}
		if validate.Request(body) != nil {
			return
		}
		if err := validate.Request(r.Body); err != nil {
			t.Fatalf("valid request projected to an invalid one: %v\n%s", err, r.Body)
		}
		again, err := New(Config{BudgetTokens: 8000, AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
		if err != nil || string(again.Body) != string(r.Body) {
			t.Fatalf("not deterministic: %v", err)
		}
	})
}
