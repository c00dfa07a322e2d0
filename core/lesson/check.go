package lesson

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Runner runs one console line and returns its exit code: the session's
// shell natively (SessionRunner), the worker's in the page.
type Runner func(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) int

// Result is one evaluation of a check.
type Result struct {
	// OK says whether the check holds.
	OK bool `json:"ok"`
	// Code is the command's exit code.
	Code int `json:"code"`
	// Output is what to show about why: the command's standard output,
	// trimmed and cut to MaxOutput bytes, or the end of its standard error
	// when the output is empty.
	Output string `json:"output,omitempty"`
}

// MaxOutput is how much of a command's output a Result keeps.
const MaxOutput = 2048

// maxCompared is how much standard output a check reads and compares;
// beyond it the check does not hold (no lesson's output is that long).
const maxCompared = 1 << 20

// Eval runs the check's command once and says whether it holds:
//
//	COMMAND == TEXT   its trimmed output is TEXT, whatever its exit code
//	COMMAND =~ REGEX  its trimmed output matches REGEX, whatever its exit code
//	COMMAND != TEXT   it exits 0 and its trimmed output is not TEXT
//	COMMAND           it exits 0
//
// == and =~ look only at the output, so a check can read a command that
// answers with its exit code too (systemctl is-active exits 3 when it
// prints inactive); != asks for exit 0, so that a failing command, which
// prints nothing, does not pass for "different".
func (c Check) Eval(ctx context.Context, run Runner) Result {
	out := &capped{max: maxCompared}
	errOut := &capped{max: 64 << 10, keepTail: true}
	code := run(ctx, c.Command, strings.NewReader(""), out, errOut)
	got := strings.TrimSpace(out.String())
	r := Result{Code: code, Output: cut(got, MaxOutput)}
	if got == "" {
		r.Output = tail(strings.TrimSpace(errOut.String()), MaxOutput)
	}
	if out.over {
		return r
	}
	switch c.Op {
	case OpSucceeds:
		r.OK = code == 0
	case OpEqual:
		r.OK = got == c.Want
	case OpNotEqual:
		r.OK = code == 0 && got != c.Want
	case OpMatch:
		re := c.re
		if re == nil { // a Check that came from JSON
			var err error
			if re, err = regexp.Compile(c.Want); err != nil {
				r.Output = err.Error()
				return r
			}
		}
		r.OK = re.MatchString(got)
	}
	return r
}

// String is the check as written in the lesson.
func (c Check) String() string {
	if c.Op == OpSucceeds {
		return c.Command
	}
	return c.Command + " " + c.Op + " " + c.Want
}

// parseCheck reads one line of a check block. A blank line or a # comment
// gives ok false. The operator is the first " == ", " =~ " or " != " outside
// quotes (an operator at the end of the line compares with empty text).
func parseCheck(line string) (c Check, ok bool, err error) {
	s := strings.TrimSpace(line)
	if s == "" || strings.HasPrefix(s, "#") {
		return c, false, nil
	}
	for _, op := range []string{OpEqual, OpMatch, OpNotEqual} {
		if s == op || strings.HasPrefix(s, op+" ") || strings.HasPrefix(s, op+"\t") {
			return c, false, fmt.Errorf("%q has no command before %s (a check is COMMAND %s TEXT)", s, op, op)
		}
	}
	at, op, err := findOperator(s)
	if err != nil {
		return c, false, err
	}
	c.Command = s
	if at >= 0 {
		c.Command = strings.TrimSpace(s[:at])
		c.Op = op
		c.Want = strings.TrimSpace(s[at+1+len(op):])
	}
	if c.Op == OpMatch {
		if c.Want == "" {
			return c, false, errors.New("=~ needs a regular expression after it")
		}
		if c.re, err = regexp.Compile(c.Want); err != nil {
			return c, false, fmt.Errorf("bad regular expression %q: %v", c.Want, err)
		}
	}
	return c, true, nil
}

// findOperator finds the first operator with a blank on each side (or the
// end of the line after it) outside quotes, and returns the offset of the
// blank before it; -1 for a bare command.
func findOperator(s string) (int, string, error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == ' ' || c == '\t':
			for _, op := range []string{OpEqual, OpMatch, OpNotEqual} {
				rest := s[i+1:]
				if strings.HasPrefix(rest, op) && (len(rest) == len(op) || rest[len(op)] == ' ' || rest[len(op)] == '\t') {
					return i, op, nil
				}
			}
		}
	}
	if quote != 0 {
		return -1, "", fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	return -1, "", nil
}

// capped is a buffer that keeps at most max bytes: the first ones, or with
// keepTail the last ones. over says whether anything was dropped.
type capped struct {
	max      int
	keepTail bool
	over     bool
	buf      bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if c.keepTail {
		c.buf.Write(p)
		if extra := c.buf.Len() - c.max; extra > 0 {
			c.over = true
			b := append([]byte(nil), c.buf.Bytes()[extra:]...)
			c.buf.Reset()
			c.buf.Write(b)
		}
		return n, nil
	}
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return n, nil
}

func (c *capped) String() string { return c.buf.String() }

// cut keeps the first max bytes of s, on a rune boundary, marking the cut.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + " …"
}

// tail keeps the last max bytes of s, on a rune boundary, marking the cut.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "… " + s[i:]
}
