package projection

import (
	"context"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"

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
	// Calls of tools outside the world: a tool search's tool_reference, a task creation.
	f.Add([]byte(`{"model":"m","max_tokens":1,"tools":[{"name":"ToolSearch","input_schema":{"type":"object"}},{"name":"ExitPlanMode","input_schema":{"type":"object"},"defer_loading":true}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:ExitPlanMode"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_reference","tool_name":"ExitPlanMode"}]},{"type":"text","text":"Tool loaded."}]},{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"TaskCreate","input":{"subject":"s"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"Task #1 created successfully: s"}]}]}`))
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

// FuzzFastMessage holds the fast path to the general one: every message
// the fast path reads, slowMessage reads the same.
func FuzzFastMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a"}}],"output_config":{"x":1}}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"     1\u2192x\n\t\"q\" \\ \/ \u001b[0m é"}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"boom"},{"type":"text","text":"x"}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":null,"content":"x"}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"}]}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}`,
		`{"role":"user","content":[{"type":"text","text":"a","text":"b","type":"x"}],"content":"z","role":"assistant"}`,
		`{"r\u006fle":"user","content":[{"t\u0079pe":"text","text":"k"}]}`,
		`{"role":"user","content":[{"type":"text","text":"\ud83d\ude00 \ud800 x"}]}`,
		`{"role":"user","content":[{"type":"text","text":"\\ud800"}]}`,
		`{"role":"user","content":[{"type":"text","text":5}]}`,
		`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}`,
		`{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}`,
		` {"role" : "user" , "content" : [ {"type":"text","text":"sp"} ] } `,
		`{"role":"user","content":["x"]}`,
		`{"role":"","content":"x"}`,
		`{"role":5,"content":"x"}`,
		`{"role":"user","content":5}`,
		`{"role":"user","content":[],"n":1.50e3,"b":[true,false,null]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var s scratch
		fast, ok := s.message(raw) // must not panic on anything
		if !gjson.Valid(raw) {
			return
		}
		slow, err := slowMessage(gjson.Parse(raw), 0)
		if err == nil {
			for _, b := range slow.blocks {
				if b.content != nil && string(b.raw[b.contentAt:b.contentAt+len(b.content)]) != string(b.content) {
					t.Fatalf("%s: content is not at %d of %s", raw, b.contentAt, b.raw)
				}
			}
		}
		if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("%s:\nfast %+v\nslow %+v (%v)", raw, fast, slow, err)
		}
	})
}

// FuzzNumbered holds numberedRange (no lines kept) to parseNumbered on any
// text, and parseNumbered's lines to the range it reports.
func FuzzNumbered(f *testing.F) {
	for _, s := range []string{
		"1\tpackage main\n2\t\n3\tfunc main() {}\n",
		"     1→alpha\n     2→beta\n<system-reminder>x</system-reminder>",
		"40\tx\n41\ty", "File unchanged since last read", "", "\n", "7", "7\t", " 3→a\nb", "1\ta\n\n2\tb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, first, last, style, ok := parseNumbered(s)
		f2, l2, st2, ok2 := numberedRange(s)
		if f2 != first || l2 != last || st2 != style || ok2 != ok {
			t.Fatalf("numberedRange(%q) = %d %d %+v %t, parseNumbered says %d %d %+v %t", s, f2, l2, st2, ok2, first, last, style, ok)
		}
		if ok != (len(lines) > 0) {
			t.Fatalf("parseNumbered(%q): ok %t with %d lines", s, ok, len(lines))
		}
		if !ok && (first != 0 || last != 0 || style != (numbering{})) {
			t.Fatalf("parseNumbered(%q): not numbered but reports %d %d %+v", s, first, last, style)
		}
	})
}
