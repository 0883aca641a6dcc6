package projection

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/synaxi/synaxi/proxyd/internal/projection/validate"
)

// personConversation is randomConversation with a person in the loop: at
// random points after a turn's tool results, the assistant answers the
// user (a proposal, a question) and the user replies with typed words, a
// slash-command expansion and, sometimes, an image.
func personConversation(r *rand.Rand, steps int) []obj {
	base := randomConversation(r, steps)
	out := make([]obj, 0, len(base)+steps)
	n := 0
	for i, m := range base {
		out = append(out, m)
		next := i + 1
		if m["role"] != "user" || next >= len(base) || base[next]["role"] != "assistant" || i < 2 || r.IntN(4) != 0 {
			continue
		}
		n++
		reply := []obj{text(fmt.Sprintf("<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>step %d</command-args>", n)),
			text(fmt.Sprintf("typed %d: yes, do it, and keep the public API of f%02d.go as it is", n, n%12))}
		if r.IntN(3) == 0 {
			reply = append(reply, obj{"type": "image", "source": obj{"type": "base64", "media_type": "image/png", "data": fmt.Sprintf("iVBORw0KGgo%04d", n)}})
		}
		if r.IntN(3) == 0 {
			reply = append(reply, text("<system-reminder>\nThe user's todo list is empty.\n</system-reminder>"))
		}
		answer := assistant(text(fmt.Sprintf("Answer %d: the tests fail in f%02d.go because of the parser; shall I fix it that way?", n, n%12)))
		if r.IntN(3) == 0 {
			answer = assistant(thinking("nothing to say")) // a reply with no words to keep
		}
		out = append(out, answer, user(reply...))
	}
	return out
}

// canonicalBlocks returns each content block of a message as compact JSON
// without cache_control, in order.
func canonicalBlocks(t *testing.T, m gjson.Result) []string {
	t.Helper()
	c := m.Get("content")
	if c.Type == gjson.String {
		b, _ := json.Marshal(obj{"type": "text", "text": c.Str})
		return []string{string(b)}
	}
	var out []string
	c.ForEach(func(_, b gjson.Result) bool {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, stripCacheControl([]byte(b.Raw))))
		out = append(out, buf.String())
		return true
	})
	return out
}

// dialogue is what a person in the loop must find in every later request,
// as sent: the user's own messages (their blocks other than tool results)
// and the assistant's words they replied to.
type dialogue struct {
	role   string
	blocks []string
}

// personDialogue lists the dialogue of the original messages msgs.
func personDialogue(t *testing.T, msgs []gjson.Result) []dialogue {
	var out []dialogue
	firstAssistant := -1
	for i, m := range msgs {
		if m.Get("role").Str == "assistant" {
			firstAssistant = i
			break
		}
	}
	for i, m := range msgs {
		if i <= firstAssistant || m.Get("role").Str != "user" {
			continue
		}
		var typed []string
		for _, b := range canonicalBlocks(t, m) {
			if gjson.Get(b, "type").Str != "tool_result" {
				typed = append(typed, b)
			}
		}
		if len(typed) == 0 || isReminderOnly(typed) {
			continue
		}
		if prev := msgs[i-1]; prev.Get("role").Str == "assistant" {
			var words []string
			for _, b := range canonicalBlocks(t, prev) {
				if gjson.Get(b, "type").Str == "text" {
					words = append(words, b)
				}
			}
			if len(words) > 0 {
				out = append(out, dialogue{"assistant", words})
			}
		}
		out = append(out, dialogue{"user", typed})
	}
	return out
}

func isReminderOnly(blocks []string) bool {
	for _, b := range blocks {
		if !isReminder(gjson.Get(b, "text").Str) || gjson.Get(b, "type").Str != "text" {
			return false
		}
	}
	return true
}

// containsRun reports whether have holds want as a contiguous run.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		ok := true
		for j := range want {
			if have[i+j] != want[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// checkPerson holds the invariants on one projected request: every
// message the user typed (words, slash-command expansions, images) and
// every assistant message they replied to is served, its blocks byte for
// byte and in order, in a message of its own role; the final message and
// the assistant message before it are served as sent; the request is
// valid.
func checkPerson(t *testing.T, body, projected []byte) {
	t.Helper()
	require.NoError(t, validate.Request(projected))
	orig := gjson.GetBytes(body, "messages").Array()
	served := gjson.GetBytes(projected, "messages").Array()
	var servedBlocks []dialogue
	for _, m := range served {
		servedBlocks = append(servedBlocks, dialogue{m.Get("role").Str, canonicalBlocks(t, m)})
	}
	at := 0 // the dialogue is served in its order (a user message with no words before it shares the message before)
	for _, d := range personDialogue(t, orig) {
		for at < len(servedBlocks) && !(servedBlocks[at].role == d.role && containsRun(servedBlocks[at].blocks, d.blocks)) {
			at++
		}
		require.Less(t, at, len(servedBlocks), "%s %v not served in order as sent", d.role, d.blocks)
	}
	last, prev := orig[len(orig)-1], orig[len(orig)-2]
	for i, b := range canonicalBlocks(t, last) {
		if strings.HasPrefix(gjson.Get(b, "content").String(), unchangedStub) {
			continue // Claude Code's stub for content the request no longer shows: restored (docs/projection.md)
		}
		require.Equal(t, b, servedBlocks[len(served)-1].blocks[i], "the current turn as sent")
	}
	require.Equal(t, canonicalBlocks(t, prev), servedBlocks[len(served)-2].blocks, "the exchange it completes as sent")
}

// TestPersonInTheLoop holds checkPerson on every request of generated
// conversations with a person in the loop, projected with a small budget
// from the first request on.
func TestPersonInTheLoop(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			msgs := personConversation(rand.New(rand.NewPCG(seed, 28)), 60)
			e := New(Config{BudgetTokens: 4000, AlwaysEngage: true})
			for k := 3; k <= len(msgs); k++ {
				if msgs[k-1]["role"] != "user" {
					continue
				}
				body := reqBody(msgs[:k])
				res, err := e.ProjectBody(context.Background(), body, "")
				require.NoError(t, err)
				t.Run(fmt.Sprint(k), func(t *testing.T) { checkPerson(t, body, res.Body) })
			}
		})
	}
}

// FuzzPersonInTheLoop holds checkPerson on the last request of any
// generated conversation, on a fresh engine (no memo).
func FuzzPersonInTheLoop(f *testing.F) {
	f.Add(uint64(1), uint8(40), uint16(4000))
	f.Add(uint64(7), uint8(90), uint16(9000))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8, budget uint16) {
		msgs := personConversation(rand.New(rand.NewPCG(seed, 28)), int(steps%120)+2)
		for len(msgs) > 0 && msgs[len(msgs)-1]["role"] != "user" {
			msgs = msgs[:len(msgs)-1]
		}
		if len(msgs) < 3 {
			return
		}
		body := reqBody(msgs)
		res, err := New(Config{BudgetTokens: 4000 + int(budget), AlwaysEngage: true}).ProjectBody(context.Background(), body, "")
		require.NoError(t, err)
		checkPerson(t, body, res.Body)
	})
}

// TestPersonDialogueGolden pins where a person's dialogue sits in a
// projected request: one line per served message, its role and a short
// form of each block. With -update it rewrites the golden file.
func TestPersonDialogueGolden(t *testing.T) {
	msgs := personConversation(rand.New(rand.NewPCG(3, 28)), 40)
	for msgs[len(msgs)-1]["role"] != "user" {
		msgs = msgs[:len(msgs)-1]
	}
	res, err := New(Config{BudgetTokens: 4000, AlwaysEngage: true}).ProjectBody(context.Background(), reqBody(msgs), "")
	require.NoError(t, err)
	var sb strings.Builder
	for _, m := range gjson.GetBytes(res.Body, "messages").Array() {
		sb.WriteString(m.Get("role").Str)
		for _, b := range canonicalBlocks(t, m) {
			short := gjson.Get(b, "text").Str + gjson.Get(b, "id").Str + gjson.Get(b, "tool_use_id").Str
			if i := strings.IndexByte(short, '\n'); i >= 0 {
				short = short[:i]
			}
			if len(short) > 60 {
				short = short[:60]
			}
			fmt.Fprintf(&sb, " | %s %s", gjson.Get(b, "type").Str, short)
		}
		sb.WriteByte('\n')
	}
	path := filepath.Join("testdata", "person-dialogue.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	require.Equal(t, string(want), sb.String(), "if intended, run with -update")
}
