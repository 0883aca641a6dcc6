// Package tokens estimates how many tokens Anthropic's models count for a
// text or a Messages API request body, without a tokenizer.
//
// # Method
//
// One pass over the bytes sorts them into character classes and counts
// features a BPE tokenizer is sensitive to:
//
//   - words: runs of ASCII letters (a common word is one token) and their
//     letters (long identifiers split into pieces), plus case humps
//     ("getUserName" has two), where camel case splits a run;
//   - digits (numbers split into short chunks);
//   - punctuation and symbols (mostly a token each, some merge);
//   - newlines, and runs of two or more spaces or tabs (indentation);
//     a single space merges into the following word and costs nothing;
//   - non-ASCII runes (accents, CJK, emoji: roughly a token or more each).
//
// The estimate is a linear combination of those counts. The coefficients
// were fitted by least squares (on relative error, non-negative) against
// token counts the API reported for real traffic (see calibration_test.go):
// whole request bodies with the prompt tokens of their responses, and the
// growth of a real Claude Code session's prompt between consecutive calls.
// The fit settled on about 0.21 tokens a letter (4.8 letters a token), 0.73
// a digit, 1.07 a punctuation mark, 0.86 a newline and 2.3 a non-ASCII
// rune, plus 7 a message and 25 a content block; word starts, humps and
// indentation added nothing once letters and punctuation were counted.
// Measured error of the calibrated coefficients (absolute relative error):
//
//   - 44 distinct real request bodies (claude-cli 1.0.6, Sonnet 4 and
//     Haiku 3.5, 8 to 25,000 tokens): median 2.4%, p90 11.1%, total +0.8%;
//   - 100 prompt-growth steps of a real Claude Code 2.1.39 session (Opus
//     4.6, tool calls and results, 46 to 13,000 tokens): median 6.0%, p90
//     16.8%, total +0.3%;
//   - two-fold cross-validation over both (fit on half, measure the other
//     half): median 4.4-4.6%, p90 16.6-18.4%;
//   - for comparison, bytes/4 on the same data: median 33% and 20%.
//
// Because the fitted weights are zero for every feature that depends on
// context (words, humps, indentation), Estimate and EstimateBytes count a
// histogram of byte classes instead, which gives the same features those
// weights use, about five times faster (TestHistogramMatchesCounter holds them
// equal). A calibration that weighs a context feature switches them back to
// the full count.
//
// The fit and its measured error are reproduced by
//
//	go test ./tokens -run 'TestCalibrate|TestAccuracy' -v -args -calibrate
//
// The calibration counts whole request bodies with a scanner that lives in
// the tests (requests_test.go): the text of system, messages and tools,
// tool inputs and schemas as JSON text, and a fixed overhead per message,
// content block, tool and image. No binary estimates a request body: the
// proxy measures those with the provider's count_tokens.
package tokens

import (
	"math"
)

// Coefficients weigh each counted feature. They are the package's
// calibration; see the package doc.
type Coefficients struct {
	Word, Letter, Hump, Digit, Punct, Newline, Indent, NonASCII float64
	// Request structure (request bodies, counted in calibration only).
	Message, Block, Tool, Request float64
	Image                         float64
}

// Calibrated are the fitted coefficients (see the package doc).
var Calibrated = Coefficients{
	Letter: 0.2085, Digit: 0.7285, Punct: 1.067, Newline: 0.8601, NonASCII: 2.329,
	Message: 7.147, Block: 24.53, Image: 1600,
	// Word, Hump, Indent, Tool and Request fitted to zero on the current
	// measurements: they are counted, and a future calibration may use them.
	// Block is large (about 25 tokens a content block) because it also
	// absorbs what Claude Code adds around tool results that the transcript
	// does not store; for a bare API request it overestimates slightly.
}

// Features are the raw counts of one text or request.
type Features struct {
	Words, Letters, Humps, Digits, Punct, Newlines, Indents, NonASCII int
	Messages, Blocks, Tools, Requests, Images                         int
}

// Vector lists the features in the order of Coefficients' fields.
func (f Features) Vector() []float64 {
	return []float64{
		float64(f.Words), float64(f.Letters), float64(f.Humps), float64(f.Digits),
		float64(f.Punct), float64(f.Newlines), float64(f.Indents), float64(f.NonASCII),
		float64(f.Messages), float64(f.Blocks), float64(f.Tools), float64(f.Requests),
		float64(f.Images),
	}
}

// Vector lists the coefficients in the order of Features.Vector.
func (c Coefficients) Vector() []float64 {
	return []float64{c.Word, c.Letter, c.Hump, c.Digit, c.Punct, c.Newline, c.Indent,
		c.NonASCII, c.Message, c.Block, c.Tool, c.Request, c.Image}
}

// Apply weighs f with c and rounds to whole tokens.
func (c Coefficients) Apply(f Features) int {
	x, w := f.Vector(), c.Vector()
	sum := 0.0
	for i := range x {
		sum += x[i] * w[i]
	}
	return int(math.Round(sum))
}

// Estimate returns the estimated token count of s.
func Estimate(s string) int { return estimate(s) }

// EstimateBytes returns the estimated token count of b.
func EstimateBytes(b []byte) int { return estimate(b) }

// EstimateSpan returns the estimated token counts of s and of its part
// s[i:j] (0 <= i <= j <= len(s)), reading s once while the calibration
// weighs only byte classes (the histogram of s is the sum of its parts').
// A tool result's text inside its content block is estimated this way
// with the block.
func EstimateSpan(s string, i, j int) (whole, part int) {
	if !Calibrated.contextFree() {
		return estimate(s), estimate(s[i:j])
	}
	p := histogram(s[i:j])
	w := histogram(s[:i]).plus(p).plus(histogram(s[j:]))
	return Calibrated.Apply(w), Calibrated.Apply(p)
}

// plus adds the counts of g to f's.
func (f Features) plus(g Features) Features {
	return Features{
		Words: f.Words + g.Words, Letters: f.Letters + g.Letters, Humps: f.Humps + g.Humps,
		Digits: f.Digits + g.Digits, Punct: f.Punct + g.Punct, Newlines: f.Newlines + g.Newlines,
		Indents: f.Indents + g.Indents, NonASCII: f.NonASCII + g.NonASCII,
		Messages: f.Messages + g.Messages, Blocks: f.Blocks + g.Blocks, Tools: f.Tools + g.Tools,
		Requests: f.Requests + g.Requests, Images: f.Images + g.Images,
	}
}

func estimate[T string | []byte](b T) int {
	if Calibrated.contextFree() {
		return Calibrated.Apply(histogram(b))
	}
	var c counter
	feed(&c, b)
	return Calibrated.Apply(c.done())
}

// contextFree reports whether c weighs only features that a byte's class
// decides alone (no words, humps or indentation), so that a histogram of
// byte classes gives the same estimate as the full count, faster.
func (c Coefficients) contextFree() bool {
	return c.Word == 0 && c.Hump == 0 && c.Indent == 0
}

// histogram counts the context-free features of b: letters, digits,
// punctuation, newlines and non-ASCII runes, exactly as the counter does.
func histogram[T string | []byte](b T) Features {
	// Four tables, one per byte position mod 4, so consecutive bytes of
	// the same class do not wait on one counter.
	var n [4][8]int
	i := 0
	for ; i+4 <= len(b); i += 4 {
		n[0][class[b[i]]]++
		n[1][class[b[i+1]]]++
		n[2][class[b[i+2]]]++
		n[3][class[b[i+3]]]++
	}
	for ; i < len(b); i++ {
		n[0][class[b[i]]]++
	}
	var t [8]int
	for _, row := range n {
		for k, v := range row {
			t[k] += v
		}
	}
	return Features{Letters: t[clLower] + t[clUpper], Digits: t[clDigit], Punct: t[clPunct],
		Newlines: t[clNewline], NonASCII: t[clHigh]}
}

// Byte classes.
const (
	clPunct = iota
	clLower
	clUpper
	clDigit
	clSpace
	clNewline
	clHigh     // first byte of a multi-byte UTF-8 sequence, or invalid byte
	clContinue // UTF-8 continuation byte
)

var class [256]uint8

func init() {
	for i := range 256 {
		b := byte(i)
		switch {
		case b >= 'a' && b <= 'z':
			class[i] = clLower
		case b >= 'A' && b <= 'Z':
			class[i] = clUpper
		case b >= '0' && b <= '9':
			class[i] = clDigit
		case b == ' ' || b == '\t' || b == '\r':
			class[i] = clSpace
		case b == '\n':
			class[i] = clNewline
		case b >= 0x80 && b < 0xC0:
			class[i] = clContinue
		case b >= 0xC0:
			class[i] = clHigh
		default:
			class[i] = clPunct
		}
	}
}

// counter accumulates Features over a stream of bytes that may arrive in
// pieces (the calibration's request scanner feeds it string fragments).
type counter struct {
	f        Features
	prev     uint8 // class of the previous byte
	inWord   bool
	spaceRun int
}

// feed counts b; generic so that strings are not copied to bytes.
func feed[T string | []byte](c *counter, b T) {
	for i := 0; i < len(b); {
		// Fast path: the rest of a lower-case word, the commonest run.
		if c.inWord && class[b[i]] == clLower {
			j := i + 1
			for j < len(b) && class[b[j]] == clLower {
				j++
			}
			c.f.Letters += j - i
			c.prev = clLower
			i = j
			continue
		}
		c.addByte(class[b[i]])
		i++
	}
}

func (c *counter) addByte(cl uint8) {
	switch cl {
	case clLower:
		if !c.inWord {
			c.f.Words++
			c.inWord = true
		}
		c.f.Letters++
		c.spaceRun = 0
	case clUpper:
		if !c.inWord {
			c.f.Words++
			c.inWord = true
		} else if c.prev == clLower {
			c.f.Humps++
		}
		c.f.Letters++
		c.spaceRun = 0
	case clSpace:
		c.inWord = false
		c.spaceRun++
		if c.spaceRun == 2 {
			c.f.Indents++
		}
	default:
		c.inWord = false
		c.spaceRun = 0
		switch cl {
		case clDigit:
			c.f.Digits++
		case clNewline:
			c.f.Newlines++
		case clHigh:
			c.f.NonASCII++
		case clPunct:
			c.f.Punct++
		}
	}
	c.prev = cl
}

func (c *counter) done() Features { return c.f }
