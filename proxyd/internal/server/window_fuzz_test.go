package server

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/gate"
)

// FuzzMinimalProjection: on any valid body and any window, the minimal
// projection either declines or returns valid JSON that keeps the goal
// and ends with the original's last message.
func FuzzMinimalProjection(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`), 40)
	f.Add([]byte(`{"messages":[{"role":"user","content":[]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}],"system":"s"}`), 4)
	f.Add([]byte(`{"messages":[{"role":"user","content":{"x":1}},{"role":"assistant","content":"b"},{"role":"user","content":7}]}`), 1000)
	f.Fuzz(func(t *testing.T, raw []byte, window int) {
		if !json.Valid(raw) || window < 0 {
			return
		}
		b := gate.Parse(raw)
		out, _, ok := minimalProjection(b, window)
		if !ok {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		msgs := gjson.GetBytes(out, "messages").Array()
		orig := b.Field("messages").Array()
		if len(msgs) == 0 || msgs[0].Raw != orig[0].Raw {
			t.Fatalf("the goal's first message changed: %s", out)
		}
		if last := msgs[len(msgs)-1]; last.Raw != orig[len(orig)-1].Raw && len(msgs) > 2 && last.Get("role").Str != "user" {
			t.Fatalf("the last message is not the original's: %s", out)
		}
	})
}
