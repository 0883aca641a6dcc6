package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/synaxi/synaxi/learning/publish"
	"github.com/synaxi/synaxi/learning/review"
	"github.com/synaxi/synaxi/learning/store"
)

// ReviewJSON prints the candidates waiting in project ("" for all) as JSON
// (review.List).
func ReviewJSON(e Env, project string) error {
	l, err := review.Load(e.store(), project)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// Decide runs `synaxi profile accept [--global] ID [TEXT…]` or `reject ID`
// (args after the flags) and publishes the result.
func Decide(ctx context.Context, e Env, verdict string, global bool, args []string) error {
	if len(args) == 0 || (verdict == store.Reject && len(args) != 1) {
		return fmt.Errorf("%w: synaxi profile %s ID (ids are in `synaxi profile review --json`)", ErrUsage, verdict)
	}
	d := store.Decision{Verdict: verdict, Global: global, Text: strings.Join(args[1:], " ")}
	v, err := review.Decide(e.store(), args[0], d, false)
	if errors.Is(err, store.ErrUnchanged) {
		fmt.Fprintln(e.Out, "nothing to change: already accepted")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "profile v%d (%s %s)\n", v, verdict, args[0])
	republish(ctx, e)
	return nil
}

// Review runs the interactive review in the terminal on in and out: one
// candidate at a time, with its quotes and the assistant messages they
// answered, decided with a key. Each decision is saved and published as
// it is made, so quitting keeps what was decided.
func Review(ctx context.Context, e Env, project string, in io.Reader, out io.Writer) error {
	l, err := review.Load(e.store(), project)
	if err != nil {
		return err
	}
	if len(l.Candidates) == 0 {
		fmt.Fprintln(e.Out, "nothing to review: synaxi has no candidate waiting")
		return nil
	}
	m := newReviewModel(l, func(id string, d store.Decision) (string, error) {
		v, err := review.Decide(e.store(), id, d, false)
		if err != nil {
			return "", err
		}
		rep, perr := publish.Publish(ctx, e.Dirs, e.Config.Guidance, e.Getenv)
		msg := fmt.Sprintf("profile v%d", v)
		if perr != nil {
			msg += fmt.Sprintf(" (publishing failed: %v; `synaxi profile rollback` or the next change retries)", perr)
		} else if rep != nil && len(rep.Problems) > 0 {
			msg += fmt.Sprintf(" (%d publication problem(s): see `synaxi status`)", len(rep.Problems))
		}
		return msg, nil
	})
	final, err := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)).Run()
	if err != nil {
		return fmt.Errorf("review: %w", err)
	}
	for _, line := range final.(*reviewModel).log {
		fmt.Fprintln(e.Out, line)
	}
	return nil
}

// reviewModel is the bubbletea model of the review: the candidates, the
// one shown, and an editor for the user's own wording.
type reviewModel struct {
	list    *review.List
	at      int
	decide  func(id string, d store.Decision) (string, error)
	editing bool
	input   textinput.Model
	armed   bool // 'a' was pressed once on a flagged candidate
	status  string
	log     []string
	width   int
}

func newReviewModel(l *review.List, decide func(string, store.Decision) (string, error)) *reviewModel {
	ti := textinput.New()
	ti.CharLimit = 400
	ti.Prompt = "your words: "
	return &reviewModel{list: l, decide: decide, input: ti, width: 100}
}

func (m *reviewModel) Init() tea.Cmd { return nil }

func (m *reviewModel) current() *review.Item { return &m.list.Candidates[m.at] }

// next moves to the following candidate, or ends the review.
func (m *reviewModel) next() tea.Cmd {
	m.armed, m.editing = false, false
	m.at++
	if m.at >= len(m.list.Candidates) {
		return tea.Quit
	}
	return nil
}

// apply records a decision about the current candidate and moves on.
func (m *reviewModel) apply(d store.Decision, what string) tea.Cmd {
	it := m.current()
	msg, err := m.decide(it.ID, d)
	switch {
	case errors.Is(err, store.ErrUnchanged):
		msg = "already so"
	case err != nil:
		m.status = "error: " + err.Error()
		return nil
	}
	if d.Text != "" {
		it.Text, it.Rule = d.Text, d.Text // what was confirmed is the user's wording
	}
	m.log = append(m.log, fmt.Sprintf("%s %s: %s — %s", what, it.ID, rule(it), msg))
	m.status = fmt.Sprintf("%s: %s", what, rule(it))
	return m.next()
}

func (m *reviewModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
		return m, nil
	case tea.KeyMsg:
		if msg.Type == tea.KeyCtrlC {
			return m, tea.Quit
		}
		if m.editing {
			switch msg.Type {
			case tea.KeyEnter:
				text := strings.TrimSpace(m.input.Value())
				if text == "" {
					m.status = "the text is empty: type your wording, or esc to cancel"
					return m, nil
				}
				return m, m.apply(store.Decision{Verdict: store.Accept, Text: text}, "accepted in your words")
			case tea.KeyEsc:
				m.editing = false
				m.input.Blur()
				return m, nil
			}
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			return m, cmd
		}
		it := m.current()
		switch msg.String() {
		case "a", "g":
			if it.Danger != "" && !m.armed {
				m.armed = true
				m.status = "this rule is flagged: " + it.Danger + ". Press " + msg.String() + " again to accept it anyway."
				return m, nil
			}
			if msg.String() == "g" {
				return m, m.apply(store.Decision{Verdict: store.Accept, Global: true}, "accepted for every project")
			}
			return m, m.apply(store.Decision{Verdict: store.Accept}, "accepted")
		case "r":
			return m, m.apply(store.Decision{Verdict: store.Reject}, "rejected")
		case "e":
			m.editing = true
			m.input.SetValue(rule(it))
			m.input.CursorEnd()
			return m, m.input.Focus()
		case "s", "right", "down", "n":
			m.log = append(m.log, fmt.Sprintf("skipped %s: %s", it.ID, rule(it)))
			m.status = "skipped: " + rule(it)
			return m, m.next()
		case "q", "esc":
			return m, tea.Quit
		}
	}
	return m, nil
}

var (
	titleStyle  = lipgloss.NewStyle().Bold(true)
	ruleStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6"))
	warnStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1"))
	dimStyle    = lipgloss.NewStyle().Faint(true)
	quoteStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	keyStyle    = lipgloss.NewStyle().Bold(true)
	maxAnswered = 4 // lines of the assistant's message shown
)

func (m *reviewModel) View() string {
	if m.at >= len(m.list.Candidates) {
		return ""
	}
	it := m.current()
	w := max(40, m.width-2)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", titleStyle.Render("synaxi review"),
		dimStyle.Render(fmt.Sprintf("candidate %d of %d · not published until you accept it", m.at+1, len(m.list.Candidates))))
	if n := len(m.list.Pruned); n > 0 {
		last := m.list.Pruned[n-1]
		b.WriteString(dimStyle.Width(w).Render(fmt.Sprintf("%d candidate(s) pruned after you had seen them, the last %s: “%s” (%s)",
			n, last.At.Local().Format("2006-01-02"), last.Text, last.Why)) + "\n")
	}
	b.WriteString("\n")
	if it.Danger != "" {
		b.WriteString(warnStyle.Render("⚠ flagged: "+it.Danger+" — accept only if you mean it") + "\n\n")
	}
	if m.at == 0 || m.list.Candidates[m.at-1].Project != it.Project {
		b.WriteString(titleStyle.Render(groupTitle(it, m.list.Project)) + "\n")
	}
	b.WriteString(ruleStyle.Width(w).Render(rule(it)) + "\n")
	fmt.Fprintf(&b, "%s\n", dimStyle.Width(w).Render(fmt.Sprintf("%s · applies in %s · from %d session(s)", it.Dimension, where(it, m.list.Project), it.Sessions)))
	if len(it.AlsoIn) > 0 {
		fmt.Fprintf(&b, "%s\n", dimStyle.Width(w).Render("also learned in "+strings.Join(it.AlsoIn, ", ")+": [g] makes it global"))
	}
	if it.Conflicts != nil {
		fmt.Fprintf(&b, "%s\n", warnStyle.Width(w).Render(fmt.Sprintf("contradicts the rule you accepted [%s] “%s”; accepting this one leaves that one as it is: `synaxi profile forget %s` drops it",
			it.Conflicts.ID, it.Conflicts.Text, it.Conflicts.ID)))
	}
	for i, q := range it.Quotes {
		if i == 2 {
			fmt.Fprintf(&b, "\n%s\n", dimStyle.Render(fmt.Sprintf("(%d more quote(s))", len(it.Quotes)-2)))
			break
		}
		b.WriteString("\n")
		if q.Answered != "" {
			lines := strings.Split(lipgloss.NewStyle().Width(w-4).Render(strings.Join(strings.Fields(q.Answered), " ")), "\n")
			if len(lines) > maxAnswered {
				lines = append(lines[:maxAnswered], "…")
			}
			fmt.Fprintf(&b, "%s\n", dimStyle.Render("the assistant said:"))
			for _, l := range lines {
				fmt.Fprintf(&b, "  %s\n", dimStyle.Render(strings.TrimRight(l, " ")))
			}
		} else if q.Context != "" {
			fmt.Fprintf(&b, "%s\n", dimStyle.Render(q.Context+":"))
		}
		fmt.Fprintf(&b, "%s\n", quoteStyle.Width(w).Render("you said: “"+strings.Join(strings.Fields(q.Quote), " ")+"”"))
		fmt.Fprintf(&b, "%s\n", dimStyle.Render(fmt.Sprintf("  session %s, %s", short(q.Session), q.At.Local().Format("2006-01-02 15:04"))))
	}
	b.WriteString("\n")
	if m.editing {
		b.WriteString(m.input.View() + "\n" + dimStyle.Render("enter accepts your wording · esc cancels") + "\n")
	} else {
		keys := []string{"[a] accept", "[e] edit", "[r] reject", "[s] skip", "[g] make global", "[q] quit"}
		for i, k := range keys {
			keys[i] = keyStyle.Render(k[:3]) + k[3:]
		}
		b.WriteString(strings.Join(keys, "  ") + "\n")
	}
	if m.status != "" {
		b.WriteString("\n" + m.status + "\n")
	}
	return b.String()
}

// rule is what review shows of a candidate: its sentence (Item.Rule), or
// its text when the list was made without one.
func rule(it *review.Item) string {
	if it.Rule != "" {
		return it.Rule
	}
	return it.Text
}

// where says where a candidate applies, as seen from the project the
// review was opened for ("" for all of them).
func where(it *review.Item, reviewing string) string {
	switch {
	case it.Scope == store.ScopeGlobal:
		return "every project"
	case it.Project == reviewing:
		return "this project (" + it.Project + ")"
	}
	return "project " + it.Project
}

// groupTitle heads the candidates of one project.
func groupTitle(it *review.Item, reviewing string) string {
	if it.Scope == store.ScopeGlobal {
		return "for every project"
	}
	return "in " + where(it, reviewing)
}

func short(session string) string {
	if len(session) > 8 {
		return session[:8]
	}
	return session
}
