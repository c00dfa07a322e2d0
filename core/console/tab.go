package console

import (
	"context"
	"sort"
	"strings"
)

// Tab completion, as bash with bash-completion does it for the words of
// the line before the cursor:
//
//	$ kub<TAB>                     the command names: kubectl
//	$ kubectl logs web-<TAB>       the command's own completer (kubectl's
//	                               is cobra's __complete: pod names)
//	$ cat w<TAB>   $ … > w<TAB>    file names of the working directory
//	                               (a directory gets "/" and no space)
//
// A unique candidate replaces the word and is followed by a space; several
// replace it by their longest common prefix, and the terminal lists them
// on a second Tab (bash's show-all-if-ambiguous off).

// Completion is what a command's completer offers for the word being typed.
type Completion struct {
	// Candidates replace the word being typed, each whole.
	Candidates []string
	// NoSpace: a unique candidate is not a finished word (TYPE/, --flag=).
	NoSpace bool
	// Files: file names of the working directory are candidates too;
	// Exts, when set, keeps only the files with one of these extensions
	// (without the dot) and the directories.
	Files bool
	Exts  []string
}

// Completer completes the word toComplete of a command line whose earlier
// words (the command's name excluded) are args.
type Completer func(ctx context.Context, args []string, toComplete string) Completion

// RegisterCompleter sets the completer of the command name. A command
// without one completes file names, as bash's default does.
func (s *Shell) RegisterCompleter(name string, c Completer) {
	if s.completers == nil {
		s.completers = map[string]Completer{}
	}
	s.completers[name] = c
}

// TabResult is the answer to a Tab.
type TabResult struct {
	// Word is the text before the cursor that the completion replaces, as
	// typed (quotes and backslashes included).
	Word string `json:"word"`
	// Insert replaces Word: the unique candidate (quoted as Word was, and
	// followed by a space unless it is unfinished), or the candidates'
	// longest common prefix; Word itself when Tab adds nothing.
	Insert string `json:"insert"`
	// Candidates are what a second Tab lists, as the words they would
	// make (unquoted); empty when nothing matches.
	Candidates []string `json:"candidates"`
}

// Tab completes the last word of before, the text of a line (or of a
// script's last line, with the lines before it) up to the cursor.
func (s *Shell) Tab(ctx context.Context, before string) TabResult {
	words, cur, quote, redirect := tabWords(before)
	res := TabResult{Word: cur.raw, Insert: cur.raw}
	var comp Completion
	switch {
	case redirect:
		comp = Completion{Files: true}
	case len(words) == 0:
		for _, n := range append(s.Commands(), "help") {
			comp.Candidates = append(comp.Candidates, n)
		}
		sort.Strings(comp.Candidates)
	case words[0] == "help" && len(words) == 1:
		comp.Candidates = s.Commands()
	default:
		if c := s.completers[words[0]]; c != nil {
			comp = c(ctx, words[1:], cur.text)
		} else {
			comp = Completion{Files: true}
		}
	}
	var cands []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] && strings.HasPrefix(c, cur.text) {
			seen[c] = true
			cands = append(cands, c)
		}
	}
	for _, c := range comp.Candidates {
		add(c)
	}
	noSpace := comp.NoSpace
	if comp.Files {
		for _, f := range s.fileCandidates(cur.text, comp.Exts) {
			add(f)
		}
	}
	res.Candidates = cands
	if len(cands) == 0 {
		return res
	}
	if len(cands) == 1 {
		c := cands[0]
		finished := !noSpace && !strings.HasSuffix(c, "/") && !strings.HasSuffix(c, "=")
		res.Insert = quoteAs(c, quote, finished)
		if finished {
			res.Insert += " "
		}
		return res
	}
	prefix := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if len(prefix) > len(cur.text) {
		res.Insert = quoteAs(prefix, quote, false)
	}
	return res
}

// fileCandidates lists the working directory's names that start with
// prefix (a path: app/w lists app's), directories with a trailing "/".
func (s *Shell) fileCandidates(prefix string, exts []string) []string {
	dir, base := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir, base = prefix[:i+1], prefix[i+1:]
	}
	name := dir
	if name == "" {
		name = "."
	}
	entries, err := s.files.ReadDir(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), base) {
			continue
		}
		if e.IsDir() {
			out = append(out, dir+e.Name()+"/")
			continue
		}
		if len(exts) > 0 {
			ok := false
			for _, x := range exts {
				ok = ok || strings.HasSuffix(e.Name(), "."+strings.TrimPrefix(x, "."))
			}
			if !ok {
				continue
			}
		}
		out = append(out, dir+e.Name())
	}
	return out
}

// quoteAs writes word as the shell reads it: inside the quote the word was
// begun with (closed when finished), or with backslashes before the
// characters the shell would take as its own.
func quoteAs(word string, quote byte, finished bool) string {
	switch quote {
	case '\'':
		w := "'" + strings.ReplaceAll(word, "'", `'\''`)
		if finished {
			w += "'"
		}
		return w
	case '"':
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range word {
			if strings.ContainsRune("\"\\$`", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		if finished {
			b.WriteByte('"')
		}
		return b.String()
	}
	var b strings.Builder
	for _, r := range word {
		if strings.ContainsRune(" \t\n'\"\\|&;<>()$`*?[#~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tabWord is the word at the cursor: raw as typed, text without quotes.
type tabWord struct{ raw, text string }

// tabWords cuts the last command of before into its finished words
// (unquoted) and the word at the cursor; quote is the quote the cursor's
// word is open in (0 for none), redirect whether that word follows a
// redirection (a file name). A ; | & or newline outside quotes starts a new
// command, so `kubectl get pods | grep w<TAB>` completes grep's word.
func tabWords(before string) (words []string, cur tabWord, quote byte, redirect bool) {
	var raw, text strings.Builder
	inWord := false
	afterRedirect := false
	end := func() {
		if !inWord {
			return
		}
		if afterRedirect {
			afterRedirect = false // the file name of a redirection is not an argument
		} else {
			words = append(words, text.String())
		}
		raw.Reset()
		text.Reset()
		inWord = false
	}
	for i := 0; i < len(before); i++ {
		c := before[i]
		switch {
		case quote == '\'':
			raw.WriteByte(c)
			if c == '\'' {
				quote = 0
			} else {
				text.WriteByte(c)
			}
		case quote == '"':
			raw.WriteByte(c)
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(before) && strings.IndexByte("\"\\$`", before[i+1]) >= 0:
				i++
				raw.WriteByte(before[i])
				text.WriteByte(before[i])
			default:
				text.WriteByte(c)
			}
		case c == '\\' && i+1 < len(before):
			i++
			if before[i] == '\n' {
				continue // a line continuation
			}
			inWord = true
			raw.WriteByte(c)
			raw.WriteByte(before[i])
			text.WriteByte(before[i])
		case c == '\'' || c == '"':
			inWord = true
			quote = c
			raw.WriteByte(c)
		case c == ' ' || c == '\t':
			end()
		case c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')':
			end()
			if c == '&' && i > 0 && before[i-1] == '>' || c == '&' && i+1 < len(before) && before[i+1] == '>' {
				continue // 2>&1, &> f
			}
			words = nil
			afterRedirect = false
		case c == '<' || c == '>':
			if inWord && isDigits(raw.String()) {
				raw.Reset() // 2> f: the fd is not a word
				text.Reset()
				inWord = false
			}
			end()
			afterRedirect = true
			if i+1 < len(before) && before[i+1] == '&' {
				// 2>&1, >&-: a file descriptor, not a file
				i++
				for i+1 < len(before) && (before[i+1] >= '0' && before[i+1] <= '9' || before[i+1] == '-') {
					i++
				}
				afterRedirect = false
			}
		case c == '#' && !inWord:
			// a comment to the end of the line
			for i < len(before) && before[i] != '\n' {
				i++
			}
			i--
		default:
			inWord = true
			raw.WriteByte(c)
			text.WriteByte(c)
		}
	}
	cur = tabWord{raw: raw.String(), text: text.String()}
	return words, cur, quote, afterRedirect
}
