package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/synaxi/synaxi/installer/internal/journal"
	"github.com/synaxi/synaxi/internal/hint"
)

// The status line step points settings.json's statusLine at
// synaxi-statusline and keeps the user's own command in config.toml as
// statusline.previous_command (composeStatusLine). Its undo: the keys go
// back through the journal (revertKeys in settings.go) and the line added
// to config.toml comes out again (revertLines).

// statusLine is the settings.json statusLine install writes, in the order
// Claude Code's documentation shows it.
type statusLine struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// composeStatusLine points statusLine at the stable synaxi-statusline and
// keeps the user's own command as statusline.previous_command.
func (in *installer) composeStatusLine() error {
	doc, err := in.readSettings()
	if err != nil {
		return err
	}
	ours := StatusLineCommand(in.dirs)
	cur := doc.String("statusLine", "command")
	_, hasLine, _ := doc.Get("statusLine")
	switch {
	case cur == ours:
		in.say("status line: already composed")
		return nil
	case !hasLine || cur == "":
		if err := in.setSettings(doc, setting{[]string{"statusLine"}, statusLine{"command", ours}, "statusLine set to synaxi-statusline"}); err != nil {
			return err
		}
		in.say("status line: set to %s", ours)
		return nil
	}
	if err := in.recordPreviousCommand(cur); err != nil {
		in.warn(fmt.Errorf("%w; your status line was left as it is", err))
		return nil
	}
	err = in.setSettings(doc,
		setting{[]string{"statusLine", "type"}, "command", "statusLine.type set to command"},
		setting{[]string{"statusLine", "command"}, ours, "statusLine.command now runs synaxi-statusline, which prints your previous status line first"})
	if err != nil {
		return err
	}
	in.say("status line: composed (yours first: %s)", cur)
	return nil
}

// recordPreviousCommand writes statusline.previous_command into config.toml
// without overwriting anything the user wrote there.
func (in *installer) recordPreviousCommand(cmd string) error {
	p := in.dirs.ConfigFile()
	src, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	have, err := configPreviousCommand(src)
	if err != nil {
		return hint.Wrap(fmt.Errorf("%s: %w", p, err), "fix it and run `synaxi install` again")
	}
	switch {
	case have == cmd:
		return nil
	case have != "":
		return hint.Errorf("set previous_command to the command you want first, then run `synaxi install` again",
			"%s already sets statusline.previous_command = %q, and your status line runs %q; synaxi will not overwrite either", p, have, cmd)
	}
	return in.addConfigLine(src, "statusline", "previous_command", cmd, "statusline.previous_command records your status line command")
}

// revertLines removes the lines install added to a file changed since.
func (in *installer) revertLines(f *journal.File) error {
	src, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	for _, l := range f.Lines {
		src, _ = removeAdded(src, l)
	}
	if err := journal.WriteFile(f.Path, src, modeOf(f.Path)); err != nil {
		return err
	}
	in.say("removed synaxi's lines from %s and kept the changes made there since install", f.Path)
	return nil
}
