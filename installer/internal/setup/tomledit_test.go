package setup

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddPreviousCommand(t *testing.T) {
	tests := []struct {
		name, src, cmd, want, err string
	}{
		{name: "new file", src: "", cmd: "echo hi",
			want: "# synaxi configuration: `synaxi doctor` lists every key.\n\n[statusline]\nprevious_command = \"echo hi\"\n"},
		{name: "into the table", src: "[proxy]\nport = 1\n[statusline]\ncolor = \"never\"\n", cmd: "a",
			want: "[proxy]\nport = 1\n[statusline]\nprevious_command = \"a\"\ncolor = \"never\"\n"},
		{name: "new table at the end, no final newline", src: "[proxy]\nport = 1", cmd: "a",
			want: "[proxy]\nport = 1\n\n[statusline]\nprevious_command = \"a\"\n"},
		{name: "quotes, backslashes and a newline survive", src: "", cmd: "printf '%s\\n' \"$x\" \\\n| cat"},
		{name: "after dotted keys (the TOML library accepts the table)", src: "statusline.color = \"never\"\n", cmd: "a"},
		{name: "a broken file is refused", src: "[statusline\n", cmd: "a", err: "would not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := configLine("previous_command", tt.cmd)
			require.NoError(t, err)
			got, added, err := addToTable([]byte(tt.src), "statusline", line)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			if tt.want != "" {
				assert.Equal(t, tt.want, string(got))
			}
			back, err := configPreviousCommand(got)
			require.NoError(t, err)
			assert.Equal(t, tt.cmd, back)
			removed, ok := removeAdded(got, added)
			assert.True(t, ok)
			if tt.src != "" && tt.name != "new table at the end, no final newline" {
				assert.Equal(t, tt.src, string(removed))
			}
			// After a later edit moved things around, the key line alone goes.
			edited := append([]byte("# later\n"), bytes.ReplaceAll(got, []byte("\n"+line), []byte("\nx = 1\n"+line))...)
			removed, ok = removeAdded(edited, added)
			assert.True(t, ok)
			assert.NotContains(t, string(removed), "previous_command")
		})
	}
}
