package console

import (
	"errors"
	"fmt"
	"strings"
)

// This file reads a script into commands: the lexer cuts the text into
// words and operators (quotes, backslashes, comments, here-documents), the
// parser groups them into lists, and-or chains, pipelines and simple
// commands, as POSIX's Shell Command Language does, for the subset the
// package doc lists. Written by hand: a POSIX shell parser such as
// mvdan.cc/sh would add a large dependency to the page for a few operators.

// errIncomplete is a script that needs more lines: an open quote or
// here-document, a trailing backslash or a trailing |, && or ||.
type errIncomplete struct{ what string }

func (e *errIncomplete) Error() string { return e.what }

// syntaxError is a script that no more lines can mend.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func unexpected(tok token) error {
	return &syntaxError{fmt.Sprintf("syntax error near unexpected token `%s'", tok.text())}
}

type tokKind int

const (
	tWord tokKind = iota
	tOp
	tNewline
	tEOF
)

// part is a piece of a word: literal text, or an expansion done when the
// command runs ($? and $NAME; kubetab sets no variables, so $NAME is empty,
// as an unset variable is in sh).
type part struct {
	lit    string
	glob   bool   // lit was not quoted: its * ? [ are a pattern
	status bool   // $?
	param  string // $NAME: expands to nothing
}

// word is one word of a command before expansion.
type word struct {
	parts  []part
	quoted bool // some part was quoted: the word stays even if empty
}

// literal is the word's text with quotes removed and no expansion (a
// here-document's delimiter).
func (w word) literal() string {
	var b strings.Builder
	for _, p := range w.parts {
		b.WriteString(p.lit)
		if p.status {
			b.WriteString("$?")
		}
		if p.param != "" {
			b.WriteString("$" + p.param)
		}
	}
	return b.String()
}

// heredoc is a <<DELIM redirection's body.
type heredoc struct {
	delim  string
	quoted bool // <<'EOF': the body is taken literally
	strip  bool // <<-EOF: leading tabs are removed
	body   string
	closed bool // the delimiter line was found
}

type token struct {
	kind tokKind
	op   string // for tOp
	fd   int    // a redirection's file descriptor (2>), -1 if none
	word word
	hd   *heredoc // for << and <<-
}

func (t token) text() string {
	switch t.kind {
	case tOp:
		return t.op
	case tNewline:
		return "newline"
	case tEOF:
		return "end of file"
	}
	return t.word.literal()
}

// isRedirect reports whether op is a redirection operator.
func isRedirect(op string) bool {
	switch op {
	case ">", ">>", "<", "<<", "<<-", ">&", "<&", ">|", "&>", "&>>":
		return true
	}
	return false
}

// lex cuts a script into tokens.
// With lenient, a here-document open at the end ends there (sh's "here-document
// delimited by end-of-file" warning) instead of making the script incomplete.
func lex(src string, lenient bool) ([]token, error) {
	l := &lexer{src: src, lenient: lenient}
	return l.run()
}

type lexer struct {
	src     string
	lenient bool
	i       int
	toks    []token
	pending []*heredoc // here-documents whose bodies start after the next newline
}

func (l *lexer) run() ([]token, error) {
	for {
		// Blanks and line continuations between tokens.
		for l.i < len(l.src) {
			c := l.src[l.i]
			if c == ' ' || c == '\t' || c == '\r' {
				l.i++
			} else if c == '\\' && l.i+1 < len(l.src) && l.src[l.i+1] == '\n' {
				l.i += 2
			} else {
				break
			}
		}
		if l.i >= len(l.src) {
			if len(l.pending) > 0 && !l.lenient {
				return l.toks, &errIncomplete{"here-document"}
			}
			l.toks = append(l.toks, token{kind: tEOF})
			return l.toks, nil
		}
		c := l.src[l.i]
		switch {
		case c == '\\' && l.i+1 == len(l.src):
			return nil, &errIncomplete{"backslash at the end"}
		case c == '#':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
		case c == '\n':
			l.i++
			l.toks = append(l.toks, token{kind: tNewline})
			if err := l.bodies(); err != nil {
				return l.toks, err
			}
		case strings.IndexByte("|&;<>()", c) >= 0:
			if err := l.operator(-1); err != nil {
				return nil, err
			}
		default:
			w, err := l.word()
			if err != nil {
				return nil, err
			}
			// digits right before < or > name a file descriptor (2>&1).
			if l.i < len(l.src) && (l.src[l.i] == '<' || l.src[l.i] == '>') && !w.quoted && isDigits(w.literal()) && len(w.parts) == 1 {
				fd := 0
				for _, d := range w.literal() {
					fd = fd*10 + int(d-'0')
				}
				if err := l.operator(fd); err != nil {
					return nil, err
				}
				continue
			}
			l.toks = append(l.toks, token{kind: tWord, fd: -1, word: w})
			if err := l.delimiter(); err != nil {
				return nil, err
			}
		}
	}
}

func isDigits(s string) bool {
	if s == "" || len(s) > 2 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (l *lexer) operator(fd int) error {
	for _, op := range []string{"<<-", "&>>", "&&", "&>", "||", ">>", "<<", ">&", "<&", ">|", "|", "&", ";", "<", ">", "(", ")"} {
		if strings.HasPrefix(l.src[l.i:], op) {
			l.i += len(op)
			if op == "(" || op == ")" {
				return &syntaxError{fmt.Sprintf("syntax error near unexpected token `%s' (this console has no subshells)", op)}
			}
			l.toks = append(l.toks, token{kind: tOp, op: op, fd: fd})
			return nil
		}
	}
	panic("console: lexer called operator on " + l.src[l.i:])
}

// delimiter registers a here-document when the word just read follows <<.
func (l *lexer) delimiter() error {
	n := len(l.toks)
	if n < 2 || l.toks[n-2].kind != tOp || (l.toks[n-2].op != "<<" && l.toks[n-2].op != "<<-") {
		return nil
	}
	w := l.toks[n-1].word
	hd := &heredoc{delim: w.literal(), quoted: w.quoted, strip: l.toks[n-2].op == "<<-"}
	l.toks[n-2].hd = hd
	l.pending = append(l.pending, hd)
	return nil
}

// bodies reads the bodies of the pending here-documents, one after the
// other, from the line after the one that named them.
func (l *lexer) bodies() error {
	for len(l.pending) > 0 {
		hd := l.pending[0]
		var b strings.Builder
		for {
			if l.i >= len(l.src) {
				hd.body = b.String()
				if l.lenient {
					l.pending = nil
					return nil
				}
				return &errIncomplete{"here-document"}
			}
			end := strings.IndexByte(l.src[l.i:], '\n')
			var line string
			if end < 0 {
				line, l.i = l.src[l.i:], len(l.src)
			} else {
				line, l.i = l.src[l.i:l.i+end], l.i+end+1
			}
			if hd.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if strings.TrimSuffix(line, "\r") == hd.delim {
				hd.closed = true
				break
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		hd.body = b.String()
		l.pending = l.pending[1:]
	}
	return nil
}

// word reads one word: quotes, backslashes and $ expansions.
func (l *lexer) word() (word, error) {
	var w word
	var lit strings.Builder
	unquoted := false // what lit holds came without quotes (it may be a pattern)
	flush := func() {
		if lit.Len() > 0 {
			w.parts = append(w.parts, part{lit: lit.String(), glob: unquoted})
			lit.Reset()
		}
	}
	put := func(text string, bare bool) {
		if lit.Len() > 0 && unquoted != bare {
			flush()
		}
		unquoted = bare
		lit.WriteString(text)
	}
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || strings.IndexByte("|&;<>()", c) >= 0:
			flush()
			return w, nil
		case c == '\\':
			if l.i+1 >= len(l.src) {
				return w, &errIncomplete{"backslash at the end"}
			}
			if l.src[l.i+1] != '\n' {
				put(l.src[l.i+1:l.i+2], false)
				w.quoted = true
			}
			l.i += 2
		case c == '\'':
			end := strings.IndexByte(l.src[l.i+1:], '\'')
			if end < 0 {
				return w, &errIncomplete{"unterminated single quote"}
			}
			put(l.src[l.i+1:l.i+1+end], false)
			w.quoted = true
			l.i += end + 2
		case c == '"':
			w.quoted = true
			l.i++
			closed := false
			for l.i < len(l.src) {
				d := l.src[l.i]
				if d == '"' {
					closed = true
					l.i++
					break
				}
				if d == '\\' && l.i+1 < len(l.src) && strings.IndexByte("$`\"\\\n", l.src[l.i+1]) >= 0 {
					if l.src[l.i+1] != '\n' {
						put(l.src[l.i+1:l.i+2], false)
					}
					l.i += 2
					continue
				}
				if d == '$' || d == '`' {
					flush()
					if err := l.dollar(&w, func(s string) { put(s, false) }); err != nil {
						return w, err
					}
					continue
				}
				put(l.src[l.i:l.i+1], false)
				l.i++
			}
			if !closed {
				return w, &errIncomplete{"unterminated double quote"}
			}
		case c == '$' || c == '`':
			flush()
			if err := l.dollar(&w, func(s string) { put(s, true) }); err != nil {
				return w, err
			}
		default:
			put(l.src[l.i:l.i+1], true)
			l.i++
		}
	}
	flush()
	return w, nil
}

// dollar reads an expansion at l.i: $?, ${?}, $NAME, ${NAME}. Command
// substitution is refused; a lone $ is itself.
func (l *lexer) dollar(w *word, put func(string)) error {
	rest := l.src[l.i:]
	switch {
	case strings.HasPrefix(rest, "`") || strings.HasPrefix(rest, "$("):
		return &syntaxError{"command substitution ($(...) and `...`) is not supported in this console"}
	case strings.HasPrefix(rest, "$?"):
		w.parts = append(w.parts, part{status: true})
		l.i += 2
	case strings.HasPrefix(rest, "${?}"):
		w.parts = append(w.parts, part{status: true})
		l.i += 4
	case strings.HasPrefix(rest, "${"):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return &syntaxError{"bad substitution: no closing `}'"}
		}
		w.parts = append(w.parts, part{param: rest[2:end]})
		l.i += end + 1
	default:
		n := 1
		for n < len(rest) && (rest[n] == '_' || isAlnum(rest[n])) {
			n++
		}
		if n == 1 {
			put("$")
			l.i++
			return nil
		}
		w.parts = append(w.parts, part{param: rest[1:n]})
		l.i += n
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// The parsed script.
type (
	script struct{ items []andOr }
	andOr  struct {
		pipes []pipeline
		ops   []string // "&&" or "||" before pipes[i+1]
	}
	pipeline struct {
		bang bool
		cmds []simple
	}
	simple struct {
		words  []word
		redirs []redirect
	}
	redirect struct {
		fd     int // the descriptor redirected
		op     string
		target word
		hd     *heredoc
	}
)

// parse reads a whole script; lenient as for lex.
func parse(src string, lenient bool) (*script, error) {
	toks, err := lex(src, lenient)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	return p.script()
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(ops ...string) bool {
	t := p.peek()
	if t.kind != tOp {
		return false
	}
	for _, op := range ops {
		if t.op == op {
			return true
		}
	}
	return false
}

func (p *parser) skipNewlines() {
	for p.peek().kind == tNewline {
		p.next()
	}
}

func (p *parser) script() (*script, error) {
	s := &script{}
	for {
		for p.peek().kind == tNewline {
			p.next()
		}
		if p.peek().kind == tEOF {
			return s, nil
		}
		ao, err := p.andOr()
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, ao)
		switch t := p.peek(); {
		case t.kind == tEOF || t.kind == tNewline:
		case t.kind == tOp && t.op == ";":
			p.next()
		case t.kind == tOp && t.op == "&":
			return nil, &syntaxError{"background jobs (&) are not supported in this console"}
		default:
			return nil, unexpected(t)
		}
	}
}

func (p *parser) andOr() (andOr, error) {
	var ao andOr
	pl, err := p.pipeline()
	if err != nil {
		return ao, err
	}
	ao.pipes = append(ao.pipes, pl)
	for p.isOp("&&", "||") {
		ao.ops = append(ao.ops, p.next().op)
		p.skipNewlines()
		if p.peek().kind == tEOF {
			return ao, &errIncomplete{"a command after " + ao.ops[len(ao.ops)-1]}
		}
		if pl, err = p.pipeline(); err != nil {
			return ao, err
		}
		ao.pipes = append(ao.pipes, pl)
	}
	return ao, nil
}

func (p *parser) pipeline() (pipeline, error) {
	var pl pipeline
	if t := p.peek(); t.kind == tWord && !t.word.quoted && t.word.literal() == "!" {
		p.next()
		pl.bang = true
	}
	cmd, err := p.simple()
	if err != nil {
		return pl, err
	}
	pl.cmds = append(pl.cmds, cmd)
	for p.isOp("|") {
		p.next()
		p.skipNewlines()
		if p.peek().kind == tEOF {
			return pl, &errIncomplete{"a command after |"}
		}
		if cmd, err = p.simple(); err != nil {
			return pl, err
		}
		pl.cmds = append(pl.cmds, cmd)
	}
	return pl, nil
}

func (p *parser) simple() (simple, error) {
	var c simple
	for {
		t := p.peek()
		switch {
		case t.kind == tWord:
			p.next()
			c.words = append(c.words, t.word)
		case t.kind == tOp && isRedirect(t.op):
			p.next()
			target := p.next()
			if target.kind != tWord {
				return c, unexpected(target)
			}
			fd := t.fd
			if fd < 0 {
				fd = 1
				if t.op[0] == '<' {
					fd = 0
				}
			}
			c.redirs = append(c.redirs, redirect{fd: fd, op: t.op, target: target.word, hd: t.hd})
		default:
			if len(c.words) == 0 && len(c.redirs) == 0 {
				return c, unexpected(t)
			}
			return c, nil
		}
	}
}

// Complete reports whether text is a whole script that Run can take, or
// whether a terminal should read another line first (and show its "> "
// prompt). It is incomplete when it ends:
//
//   - inside 'single' or "double" quotes (a newline inside them is text);
//   - with a backslash (a line continuation);
//   - inside a here-document: a line held <<WORD, <<'WORD', <<"WORD" or
//     <<-WORD, and no later line is exactly WORD (for <<-, after its
//     leading tabs); several here-documents of one line end one after
//     the other;
//   - after |, && or || (the command that follows is missing; blank
//     lines do not supply it).
//
// Outside quotes, a # at the start of a word begins a comment to the end
// of the line, whose quotes do not count; inside a here-document's body
// quotes do not count either. Anything else is complete, syntax errors
// included: Run reports them. A terminal in another language can mirror
// these rules, or ask this function.
func Complete(text string) bool {
	_, err := parse(text, false)
	var inc *errIncomplete
	return !errors.As(err, &inc)
}
