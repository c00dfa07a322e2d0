package lesson

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// markdown renders prose and hints. It is goldmark's CommonMark with the
// GitHub extensions (tables, strikethrough, autolinks), and without
// html.WithUnsafe: raw HTML is never passed through (the parser refuses it
// anyway) and javascript: links are dropped. A line break between two
// wide (Japanese) characters joins the lines without a space, as Japanese
// is written; any other stays a space. (goldmark's CSS3Draft mode also drops
// the break after any punctuation, ASCII included, which glued "jane.
// Next" into "jane.Next" throughout the English lessons.)
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM,
	extension.NewCJK(extension.WithEastAsianLineBreaks(extension.EastAsianLineBreaksSimple))))

// folderName is a lesson folder: two or more digits, a dash, a slug.
var folderName = regexp.MustCompile(`^[0-9]{2,}-[a-z0-9]+(-[a-z0-9]+)*$`)

// Languages are the file names a lesson folder holds, without ".md".
var Languages = []string{"en", "ja"}

// Parse reads one lesson file. path names it in messages and gives the
// lesson its Slug (the folder's name, "02-first-deployment") and Lang (the
// file's name: en.md or ja.md). A path with no folder ("ja.md", a file an
// author opens in the page) gives an empty Slug.
//
// A malformed file gives a *ParseError with every problem found, each with
// its line; the Lesson is nil then.
func Parse(path string, data []byte) (*Lesson, error) {
	p := &parser{path: path, l: &Lesson{Path: path}}
	p.names()
	p.parse(data)
	if len(p.problems) > 0 {
		return nil, &ParseError{Problems: p.problems}
	}
	return p.l, nil
}

type parser struct {
	path     string
	l        *Lesson
	problems []Problem

	body      []byte // the Markdown after the front matter
	bodyLine  int    // the file's line of body[0]
	lineStart []int  // offsets in body where each line starts
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// names sets Slug and Lang from the path.
func (p *parser) names() {
	slashed := filepath.ToSlash(p.path)
	base := path.Base(slashed)
	lang := strings.TrimSuffix(base, ".md")
	if lang == base || !isLanguage(lang) {
		p.errorf(0, "a lesson file is named en.md or ja.md, not %s", base)
	}
	p.l.Lang = lang
	if dir := path.Dir(slashed); dir != "." && dir != "/" {
		slug := path.Base(dir)
		if !folderName.MatchString(slug) {
			p.errorf(0, "lesson folder %q must be named NN-slug (digits, a dash, lower-case words joined by dashes: 02-first-deployment)", slug)
		}
		p.l.Slug = slug
	}
}

func isLanguage(s string) bool {
	for _, l := range Languages {
		if s == l {
			return true
		}
	}
	return false
}

// parse splits the front matter from the body and reads both.
func (p *parser) parse(data []byte) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if !utf8.Valid(data) {
		// Markdown is text: goldmark assumes UTF-8 (and panics on some
		// invalid bytes), so say where the first bad byte is.
		bad := 0
		for bad < len(data) {
			r, size := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			bad += size
		}
		p.errorf(1+bytes.Count(data[:bad], []byte("\n")), "the file is not UTF-8 text (byte %d): save it as UTF-8", bad)
		return
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t")) != "---" {
		p.errorf(1, "a lesson starts with front matter: a line ---, then title:, summary: and minutes:, then a line ---")
		return
	}
	// Find the closing --- line.
	fm, body, line := []byte(nil), []byte(nil), 2
	closed := false
	for off := 0; off <= len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		var ln []byte
		next := len(rest) + 1
		if end < 0 {
			ln = rest[off:]
		} else {
			ln = rest[off : off+end]
			next = off + end + 1
		}
		if t := string(bytes.TrimRight(ln, " \t")); t == "---" || t == "..." {
			fm, closed = rest[:off], true
			if next <= len(rest) {
				body = rest[next:]
			}
			break
		}
		off = next
		line++
	}
	if !closed {
		p.errorf(1, "front matter is not closed: add a line --- after it")
		return
	}
	p.frontMatter(fm, 2)
	p.body, p.bodyLine = body, line+1
	p.lineStart = []int{0}
	for i, b := range body {
		if b == '\n' {
			p.lineStart = append(p.lineStart, i+1)
		}
	}
	p.markdown()
}

// lineOf is the file's line of a byte offset in the body.
func (p *parser) lineOf(off int) int {
	lo, hi := 0, len(p.lineStart)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.lineStart[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return p.bodyLine + lo
}

// blockLine is the line where a block node starts (its first line, or a
// fenced block's opening fence).
func (p *parser) blockLine(n ast.Node) int {
	if pos := n.Pos(); pos >= 0 {
		return p.lineOf(pos)
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return p.lineOf(n.Lines().At(0).Start)
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if l := p.blockLine(c); l > 0 {
			return l
		}
	}
	return 0
}

// step is the step being read; nil before the first ## heading.
func (p *parser) current() *Step {
	if len(p.l.Steps) == 0 {
		return nil
	}
	return &p.l.Steps[len(p.l.Steps)-1]
}

// markdown walks the body's top-level blocks: ## headings start steps,
// fenced blocks and hint blockquotes are sorted by kind, everything else is
// prose rendered to HTML (consecutive prose nodes become one text block).
func (p *parser) markdown() {
	doc := markdown.Parser().Parse(text.NewReader(p.body))
	p.refuseHTML(doc)
	var intro bytes.Buffer
	var prose []ast.Node // pending prose nodes of the current step
	flush := func() {
		if len(prose) == 0 {
			return
		}
		var buf bytes.Buffer
		for _, n := range prose {
			p.render(&buf, n)
		}
		if st := p.current(); st != nil {
			st.Blocks = append(st.Blocks, Block{Kind: KindText, Line: p.blockLine(prose[0]), HTML: buf.String()})
		}
		prose = nil
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		line := p.blockLine(n)
		st := p.current()
		switch n := n.(type) {
		case *ast.Heading:
			switch {
			case n.Level == 1:
				p.errorf(line, "a # heading is not allowed: the lesson's title is in the front matter, and each step is a ## heading")
				continue
			case n.Level == 2:
				flush()
				p.endStep()
				title := strings.TrimSpace(plainText(n, p.body))
				if title == "" {
					p.errorf(line, "a step's ## heading needs a title")
				}
				p.l.Steps = append(p.l.Steps, Step{N: len(p.l.Steps) + 1, Title: title, Line: line, Blocks: []Block{}, Checks: []Check{}})
				continue
			}
		case *ast.FencedCodeBlock:
			if kind, ok := p.fenced(n, line); ok {
				if st == nil {
					p.errorf(line, "a ```%s block before the first ## heading: every step starts with a ## heading (the text before it is the introduction)", kind)
					continue
				}
				flush()
				p.stepBlock(st, n, kind, line)
				continue
			}
			if st != nil { // an example to read
				flush()
				st.Blocks = append(st.Blocks, Block{Kind: KindCode, Line: line, Lang: firstWord(infoString(n, p.body)), Content: content(n, p.body)})
				continue
			}
		case *ast.Blockquote:
			if hint, ok := p.hint(n, line); ok {
				if st == nil {
					p.errorf(line, "a hint before the first ## heading: hints belong to a step")
					continue
				}
				flush()
				st.Blocks = append(st.Blocks, hint)
				continue
			}
		}
		if st == nil {
			p.render(&intro, n)
		} else {
			prose = append(prose, n)
		}
	}
	flush()
	p.endStep()
	p.l.Intro = intro.String()
	if len(p.l.Steps) == 0 && len(p.problems) == 0 {
		p.errorf(p.bodyLine, "a lesson needs at least one step: a ## heading with a ```check block")
	}
}

// endStep checks the step just read.
func (p *parser) endStep() {
	st := p.current()
	if st == nil {
		return
	}
	switch {
	case len(st.Blocks) == 0 && len(st.Checks) == 0 && len(st.Sources) == 0:
		p.errorf(st.Line, "step %d %q is empty: write what the learner does, and a ```check block", st.N, st.Title)
	case len(st.Checks) == 0:
		p.errorf(st.Line, "step %d %q has no check: add a ```check block with what must hold once the step is done", st.N, st.Title)
	}
}

// ours are the info strings kubetab gives a meaning to, and how far a typo
// may be from one before the block is refused as a likely mistake rather
// than shown as code (see lookalike).
var ours = []struct {
	word string
	typo int
}{
	{KindRun, 1}, {"file", 1}, {KindHint, 1},
	{"check", 2}, {"source", 2}, {KindSolution, 2},
}

// lookalike says which of kubetab's block types word looks like: the same
// word in another case (Run, CHECK), or a near miss: one edit from run,
// file or hint, two from check, source or solution (chek, runn, checks,
// soluton). The few languages that close to one (rs, r, ini ...) are
// known and stay code, as does every other info string.
func lookalike(word string) (string, bool) {
	lower := strings.ToLower(word)
	for _, o := range ours {
		if lower == o.word {
			return o.word, true
		}
	}
	if knownLanguages[lower] {
		return "", false
	}
	for _, o := range ours {
		if editDistance(lower, o.word) <= o.typo {
			return o.word, true
		}
	}
	return "", false
}

// knownLanguages are info strings within a typo's reach of one of ours
// that mean a language (or plain text), so they stay code.
var knownLanguages = map[string]bool{"rs": true, "r": true, "ini": true, "cue": true, "nim": true}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// fenced says whether a fenced block is one of kubetab's, and which: run,
// solution, check, source or file. A block that looks like one but is not
// spelt right is reported here (and taken as handled).
func (p *parser) fenced(n *ast.FencedCodeBlock, line int) (string, bool) {
	info := infoString(n, p.body)
	fields := strings.Fields(info)
	if len(fields) == 0 {
		return "", false
	}
	word := fields[0]
	attrs := fields[1:]
	hasFile := false
	for _, a := range attrs {
		if a == "file" || strings.HasPrefix(a, "file=") {
			hasFile = true
		}
	}
	switch word {
	case KindRun, KindSolution, "check", "source":
		if len(attrs) > 0 {
			p.errorf(line, "```%s takes nothing after it, not %q", word, strings.Join(attrs, " "))
			return "", true
		}
		return word, true
	case "file":
		p.errorf(line, "a file block names its language and file: ```yaml file=NAME.yaml")
		return "", true
	case KindHint:
		p.errorf(line, "```hint is not a block: a hint is a blockquote, > Hint: ...")
		return "", true
	}
	if hasFile {
		return KindFile, true
	}
	if like, ok := lookalike(word); ok {
		switch like {
		case KindHint:
			p.errorf(line, "unknown block type ```%s: a hint is a blockquote, > Hint: ...", word)
		case "file":
			p.errorf(line, "unknown block type ```%s: a file block names its language and file: ```yaml file=NAME.yaml", word)
		default:
			p.errorf(line, "unknown block type ```%s: did you mean ```%s? (kubetab's blocks are run, solution, check, source and LANG file=NAME; see lessons/README.md)", word, like)
		}
		return "", true
	}
	return "", false
}

// fileName is a file block's name: one path element, no dot files.
var fileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// stepBlock reads one of kubetab's fenced blocks into the step.
func (p *parser) stepBlock(st *Step, n *ast.FencedCodeBlock, kind string, line int) {
	lines := p.contentLines(n)
	switch kind {
	case KindRun, KindSolution:
		cmds, nos := p.commands(lines, kind)
		if len(cmds) == 0 {
			p.errorf(line, "the ```%s block is empty", kind)
			return
		}
		st.Blocks = append(st.Blocks, Block{Kind: kind, Line: line, Lines: cmds, lineNos: nos})
	case KindFile:
		info := strings.Fields(infoString(n, p.body))
		name := ""
		for _, a := range info[1:] {
			if v, ok := strings.CutPrefix(a, "file="); ok {
				name = strings.Trim(v, `"'`)
			} else if a == "file" {
				name = ""
			} else {
				p.errorf(line, "a file block takes only file=NAME after its language, not %q", a)
				return
			}
		}
		if name == "" {
			p.errorf(line, "a file block needs a name: ```%s file=NAME", info[0])
			return
		}
		if !fileName.MatchString(name) {
			p.errorf(line, "file name %q: use letters, digits, '.', '_' and '-' (one name, no folders)", name)
			return
		}
		for _, b := range st.Blocks {
			if b.Kind == KindFile && b.File == name {
				p.errorf(line, "file %s is already placed by this step (line %d)", name, b.Line)
				return
			}
		}
		st.Blocks = append(st.Blocks, Block{Kind: KindFile, Line: line, File: name, Lang: info[0], Content: content(n, p.body)})
	case "check":
		n := 0
		for _, ln := range lines {
			c, ok, err := parseCheck(ln.text)
			if err != nil {
				p.errorf(ln.no, "check: %v", err)
				continue
			}
			if ok {
				c.Line = ln.no
				st.Checks = append(st.Checks, c)
				n++
			}
		}
		if n == 0 {
			p.errorf(line, "the ```check block is empty")
		}
	case "source":
		for _, ln := range lines {
			t := strings.TrimSpace(ln.text)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			where, path, ok := strings.Cut(t, ":")
			where, path = strings.TrimSpace(where), strings.TrimSpace(path)
			if !ok || (where != "upstream" && where != "kubetab") || path == "" {
				p.errorf(ln.no, "a source line is upstream: PATH (in kubernetes/kubernetes) or kubetab: PATH (here), not %q", t)
				continue
			}
			st.Sources = append(st.Sources, Source{Where: where, Path: path})
		}
	}
}

// fileLine is one line of a fenced block's content and its line number.
type fileLine struct {
	no   int
	text string
}

func (p *parser) contentLines(n *ast.FencedCodeBlock) []fileLine {
	segs := n.Lines()
	out := make([]fileLine, 0, segs.Len())
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		out = append(out, fileLine{no: p.lineOf(s.Start), text: strings.TrimRight(string(s.Value(p.body)), "\n")})
	}
	return out
}

// heredoc finds `<<WORD`, `<<-WORD`, `<<'WORD'` or `<<"WORD"` outside
// quotes.
var heredocStart = regexp.MustCompile(`^<<(-?)\s*(?:'([^']+)'|"([^"]+)"|([A-Za-z_][A-Za-z0-9_]*))`)

// commands groups a run or solution block's lines into console commands:
// one a line, except that a line ending in a backslash continues on the
// next, and a heredoc (cat <<EOF > web.yaml ... EOF) is one command with its
// body. Blank lines are dropped; # comments are kept for the shell (which
// ignores them) so a learner sees them typed.
func (p *parser) commands(lines []fileLine, kind string) ([]string, []int) {
	var cmds []string
	var nos []int
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		if strings.TrimSpace(ln.text) == "" {
			continue
		}
		cmd := ln.text
		for continued(cmd) && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i].text
		}
		if delim, strip, ok := heredocOf(cmd); ok {
			closed := false
			for i+1 < len(lines) {
				i++
				cmd += "\n" + lines[i].text
				t := lines[i].text
				if strip {
					t = strings.TrimLeft(t, "\t")
				}
				if t == delim {
					closed = true
					break
				}
			}
			if !closed {
				p.errorf(ln.no, "the heredoc <<%s is not closed: end it with a line %s", delim, delim)
			}
		}
		cmds = append(cmds, cmd)
		nos = append(nos, ln.no)
	}
	return cmds, nos
}

// continued says whether a line ends in an unescaped backslash.
func continued(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// heredocOf finds a heredoc operator outside quotes and returns its
// delimiter, and whether leading tabs are stripped (<<-).
func heredocOf(line string) (delim string, strip, ok bool) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
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
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return "", false, false
		case c == '<' && strings.HasPrefix(line[i:], "<<") && !strings.HasPrefix(line[i:], "<<<"):
			m := heredocStart.FindStringSubmatch(line[i:])
			if m == nil {
				return "", false, false
			}
			return m[2] + m[3] + m[4], m[1] == "-", true
		}
	}
	return "", false, false
}

// hintPrefixes open a hint blockquote, in each language.
var hintPrefixes = []string{"Hint:", "ヒント:", "ヒント："}

// hint reads a `> Hint: ...` blockquote. Other blockquotes are prose.
func (p *parser) hint(n *ast.Blockquote, line int) (Block, bool) {
	para, ok := n.FirstChild().(*ast.Paragraph)
	if !ok || para.Lines().Len() == 0 {
		return Block{}, false
	}
	firstSeg := para.Lines().At(0)
	first := string(firstSeg.Value(p.body))
	prefix := ""
	for _, h := range hintPrefixes {
		if strings.HasPrefix(first, h) {
			prefix = h
		}
	}
	if prefix == "" {
		return Block{}, false
	}
	// Drop the prefix from the paragraph's leading text nodes.
	drop := len(prefix)
	for c := para.FirstChild(); c != nil && drop > 0; {
		t, ok := c.(*ast.Text)
		if !ok {
			break
		}
		next := c.NextSibling()
		if seg := t.Segment; seg.Len() <= drop {
			drop -= seg.Len()
			para.RemoveChild(para, c)
		} else {
			t.Segment = seg.WithStart(seg.Start + drop)
			drop = 0
		}
		c = next
	}
	if t, ok := para.FirstChild().(*ast.Text); ok {
		s := t.Segment
		v := s.Value(p.body)
		trimmed := bytes.TrimLeft(v, " \t")
		t.Segment = s.WithStart(s.Start + len(v) - len(trimmed))
		if t.Segment.Len() == 0 && !t.SoftLineBreak() && !t.HardLineBreak() {
			para.RemoveChild(para, t)
		}
	}
	var buf bytes.Buffer
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		p.render(&buf, c)
	}
	if strings.TrimSpace(plainText(n, p.body)) == "" {
		p.errorf(line, "the hint is empty: write it after %q", prefix)
	}
	return Block{Kind: KindHint, Line: line, HTML: strings.TrimSpace(buf.String())}, true
}

// refuseHTML reports raw HTML, which a lesson may not carry: the page shows
// lessons that anyone can write, and Markdown says everything they need.
func (p *parser) refuseHTML(doc ast.Node) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			p.errorf(p.blockLine(n), "raw HTML is not allowed in a lesson: write Markdown (put `<tags>` in backticks to show them)")
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			line := 0
			if n.Segments.Len() > 0 {
				line = p.lineOf(n.Segments.At(0).Start)
			}
			p.errorf(line, "raw HTML %q is not allowed in a lesson: write Markdown (put `<tags>` in backticks to show them)", string(n.Segments.Value(p.body)))
		}
		return ast.WalkContinue, nil
	})
}

func (p *parser) render(buf *bytes.Buffer, n ast.Node) {
	if err := markdown.Renderer().Render(buf, p.body, n); err != nil {
		p.errorf(p.blockLine(n), "render: %v", err)
	}
}

// plainText is a node's text without markup (a heading's title).
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func infoString(n *ast.FencedCodeBlock, src []byte) string {
	if n.Info == nil {
		return ""
	}
	return strings.TrimSpace(string(n.Info.Segment.Value(src)))
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func content(n *ast.FencedCodeBlock, src []byte) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}
