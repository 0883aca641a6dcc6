package publish

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const body = "# Guidance\n1. NEVER mock the database.\n"

// section is what a file holds between and around the markers, in LF.
func section(b string) string { return BeginMarker + "\n" + canon(b) + EndMarker + "\n" }

func TestReplaceKeepsEverythingOutsideTheMarkers(t *testing.T) {
	old := section("old text\nmore old text")
	cases := map[string]struct{ before, after string }{
		"alone":                  {"", ""},
		"text before":            {"# My agents file\n\nHand-written rules.\n\n", ""},
		"text after":             {"", "\n## Mine\nkeep me\n"},
		"text around":            {"top\n", "bottom\n"},
		"after without newline":  {"top\n", "last line"},
		"marker lines indented?": {"  intro\n", "\n"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src := []byte(c.before + old + c.after)
			sp, found, err := findSection(src)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, "old text\nmore old text\n", sectionBody(src, sp))
			out := replaceSection(src, sp, body)
			assert.Equal(t, c.before+section(body)+c.after, string(out))
		})
	}
}

func TestCRLFFileStaysCRLF(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	src := []byte(crlf("intro\n" + section("old") + "outro\n"))
	sp, found, err := findSection(src)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "old\n", sectionBody(src, sp), "the body reads back in LF")
	out := replaceSection(src, sp, body)
	assert.Equal(t, crlf("intro\n"+section(body)+"outro\n"), string(out))
	assert.NotContains(t, strings.ReplaceAll(string(out), "\r\n", ""), "\n", "no bare LF")

	app, sep := appendSection([]byte("a\r\nb"), body)
	assert.Equal(t, "\r\n\r\n", sep)
	assert.Equal(t, crlf("a\nb\n\n"+section(body)), string(app))
}

func TestEndMarkerAtEndOfFileWithoutNewline(t *testing.T) {
	src := []byte("intro\n" + BeginMarker + "\nold\n" + EndMarker)
	sp, found, err := findSection(src)
	require.NoError(t, err)
	require.True(t, found)
	out := replaceSection(src, sp, body)
	assert.Equal(t, "intro\n"+strings.TrimSuffix(section(body), "\n"), string(out), "no line break added after the end marker")
}

// Appending and then removing a section gives the file back byte for byte.
func TestAppendThenRemoveRestoresTheFile(t *testing.T) {
	for name, orig := range map[string]string{
		"empty":              "",
		"ends with newline":  "# Rules\n\nbe nice\n",
		"no final newline":   "# Rules\n\nbe nice",
		"crlf":               "# Rules\r\n\r\nbe nice\r\n",
		"crlf no final":      "# Rules\r\nbe nice",
		"blank lines at end": "x\n\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, sep := appendSection([]byte(orig), body)
			assert.True(t, strings.HasPrefix(string(out), orig))
			sp, found, err := findSection(out)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, canon(body), sectionBody(out, sp))
			assert.Equal(t, orig, string(removeSection(out, sp, sep)))
		})
	}
}

func TestRemoveSectionInTheMiddle(t *testing.T) {
	src := []byte("top\n" + section("x") + "bottom\n")
	sp, _, err := findSection(src)
	require.NoError(t, err)
	assert.Equal(t, "top\nbottom\n", string(removeSection(src, sp, "\n")), "a separator is only taken at the end of the file")
}

func TestUnbalancedMarkers(t *testing.T) {
	for name, src := range map[string]string{
		"begin only":     "a\n" + BeginMarker + "\nb\n",
		"end only":       "a\n" + EndMarker + "\n",
		"reversed":       EndMarker + "\nx\n" + BeginMarker + "\n",
		"two begins":     BeginMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n",
		"two sections":   section("a") + section("b"),
		"two ends":       BeginMarker + "\n" + EndMarker + "\n" + EndMarker + "\n",
		"edited note ok": "",
	} {
		t.Run(name, func(t *testing.T) {
			if src == "" {
				_, found, err := findSection([]byte("<!-- synaxi:guidance:begin (mine now) -->\nx\n<!-- synaxi:guidance:end -->\n"))
				require.NoError(t, err)
				assert.True(t, found, "a begin line whose note was edited is still the marker")
				return
			}
			_, _, err := findSection([]byte(src))
			assert.ErrorIs(t, err, ErrMarkers)
			assert.Contains(t, err.Error(), "line")
		})
	}
	_, found, err := findSection([]byte("no markers here\nsynaxi:guidance:begin in prose\n"))
	require.NoError(t, err)
	assert.False(t, found)
}

// FuzzSection: any file either has no section (append then remove gives it
// back), a section that replaces without touching the outside, or a clear
// marker error; nothing panics.
func FuzzSection(f *testing.F) {
	f.Add("hello\n", "body")
	f.Add("a\r\nb", "x\ny")
	f.Add(section("old")+"tail", "new")
	f.Add(BeginMarker, "")
	f.Fuzz(func(t *testing.T, src, b string) {
		sp, found, err := findSection([]byte(src))
		if err != nil {
			return
		}
		if !found {
			out, sep := appendSection([]byte(src), b)
			sp2, ok, err := findSection(out)
			if err != nil || !ok {
				t.Fatalf("appended section not found: %v", err)
			}
			if got := string(removeSection(out, sp2, sep)); got != src {
				t.Fatalf("append+remove changed the file:\n%q\n%q", src, got)
			}
			return
		}
		out := replaceSection([]byte(src), sp, b)
		if !strings.HasPrefix(string(out), src[:sp.start]) || !strings.HasSuffix(string(out), src[sp.end:]) {
			t.Fatalf("replace touched text outside the markers")
		}
	})
}
