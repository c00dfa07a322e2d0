// Package console is the small shell behind the terminal on kubetab's page,
// and behind a lesson's checks.
//
// A learner types a line (or pastes a script); the shell cuts it into words
// the way a POSIX shell does (quotes, backslashes) and runs the command named
// by the first word with the rest as its arguments:
//
//	$ kubectl get pods -o wide
//	  └─────┘ └──────────────┘
//	  command  args → kubectl.Run(ctx, ["get", "pods", "-o", "wide"], ...)
//
// Upstream counterpart: a POSIX sh (bash, dash) and the coreutils a lab
// machine has, cut down to what the Kubernetes tutorials type. The language:
//
//	cmd1; cmd2            one after the other (a newline is the same)
//	cmd1 && cmd2          cmd2 only if cmd1 succeeded; || only if it failed
//	! cmd                 the opposite exit status
//	cmd1 | cmd2           cmd1's output is cmd2's input; every command of a
//	                      pipeline runs at once, so `kubectl get pods -w |
//	                      grep web` streams
//	cmd > f   cmd >> f    output to file f (replaced, or appended to)
//	cmd < f               input from file f
//	cmd 2>&1  cmd 2>/dev/null  cmd >&2  cmd &> f
//	                      errors to where the output goes; errors dropped;
//	                      output to the errors; both to f
//	cat <<EOF > f.yaml    a here-document: the lines up to EOF are the input;
//	...                   <<'EOF' takes them literally, <<-EOF drops their
//	EOF                   leading tabs
//	*.yaml  app/*         the files whose names match (sh's pathname
//	                      expansion; a pattern that matches none stays)
//	$?                    the exit status of the last command
//	# comment             to the end of the line
//
// Quotes: 'single' keeps everything; "double" keeps everything but $? and
// the \ before $ ` " \; outside quotes \ keeps the next character, and a \
// at the end of a line joins the next. $NAME is empty (the console sets no
// variables, as in a shell where NAME is unset); command substitution,
// subshells and background jobs (&) are refused with a message.
//
// Files are the console's working directory (Files), in memory; there is
// nothing outside it except /dev/null, /dev/stdin, /dev/stdout and
// /dev/stderr.
//
// Only the registered commands and the builtins exist: help, ls, cat, rm,
// echo, grep, head, tail, wc, true, false. Anything else answers "<word>:
// command not found" with exit code 127, as bash does; a syntax error is
// exit code 2. Messages follow bash and GNU coreutils ("cat: x.yaml: No
// such file or directory").
//
// A terminal knows whether to run what was typed or to read another line
// from Complete, whose rules are simple enough to mirror in JavaScript.
//
// Cancelling the context passed to Run is the terminal's Ctrl-C: it ends
// every command of the running pipeline (`kubectl get pods -w | grep web`)
// and the rest of the script does not run.
//
// This package has no syscall/js; core/session registers the commands and
// wasm/ connects the shell to the page.
package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kubetab/kubetab/core/lang"
)

// langSet marks a context whose language the caller chose (WithLang).
type langSet struct{}

// WithLang returns ctx with the language l, which Run keeps instead of
// the shell's own (SetLang): a lesson's check in the language it was
// written in.
func WithLang(ctx context.Context, l string) context.Context {
	return lang.With(context.WithValue(ctx, langSet{}, true), l)
}

// Exit codes, as bash uses them.
const (
	ExitOK       = 0
	ExitUsage    = 2   // the line could not be parsed
	ExitNotFound = 127 // no such command
)

// Streams are a command's standard input, output and error.
type Streams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// Command runs one command line's arguments (without the command's own name)
// and returns its exit code. It must return soon after ctx is done. It may
// run at the same time as other commands (the others of a pipeline).
type Command func(ctx context.Context, args []string, streams Streams) int

// Config configures a Shell.
type Config struct {
	// Files is the working directory of the shell's builtins (ls, cat,
	// redirections) and of the commands that read files; nil is a new,
	// empty one.
	Files *Files
}

// Shell looks up and runs commands. Register every command before the first
// Run; Run itself is safe to call from several goroutines.
type Shell struct {
	files     *Files
	commands  map[string]Command
	summaries map[string]string
	// completers answer Tab for their command (tab.go).
	completers map[string]Completer
	// summariesJA are help's lines in Japanese (Translate).
	summariesJA map[string]string

	lang string // the learner's language, put in every Run's context

	mu     sync.Mutex // guards status
	status int        // the exit status of the last Run, its $? to start with
}

// New returns a shell with its builtins and no other commands.
func New(conf Config) (*Shell, error) {
	if conf.Files == nil {
		conf.Files = NewFiles()
	}
	s := &Shell{files: conf.Files, commands: map[string]Command{}, summaries: map[string]string{}, summariesJA: map[string]string{}}
	s.registerBuiltins()
	return s, nil
}

// Files is the shell's working directory.
func (s *Shell) Files() *Files { return s.files }

// Register adds a command under name, replacing any command of that name;
// summary is its line in help.
func (s *Shell) Register(name, summary string, cmd Command) {
	s.commands[name] = cmd
	s.summaries[name] = summary
}

// Translate sets the Japanese summary of the command name, help's line
// when the learner reads Japanese.
func (s *Shell) Translate(name, summaryJA string) {
	s.summariesJA[name] = summaryJA
}

// SetLang sets the learner's language ("en" or "ja"): kubetab's own
// commands read it from their context (core/lang) and speak it.
func (s *Shell) SetLang(l string) {
	s.mu.Lock()
	s.lang = l
	s.mu.Unlock()
}

// Commands lists the registered command names in order, builtins included.
func (s *Shell) Commands() []string {
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs a line or a whole script and returns the exit status of the
// last command it ran. An empty script does nothing and succeeds. A nil In
// reads as empty. An incomplete script (see Complete) is an error, except
// that a here-document open at the end ends there, with a warning, as in
// sh.
func (s *Shell) Run(ctx context.Context, script string, streams Streams) int {
	if streams.In == nil {
		streams.In = strings.NewReader("")
	}
	// Commands of a pipeline write at once: one lock for the terminal.
	var mu sync.Mutex
	streams.Out = &lockedWriter{mu: &mu, w: orDiscard(streams.Out)}
	streams.ErrOut = &lockedWriter{mu: &mu, w: orDiscard(streams.ErrOut)}

	sc, err := parse(script, true)
	if err != nil {
		var inc *errIncomplete
		if errors.As(err, &inc) {
			fmt.Fprintf(streams.ErrOut, "kubetab: syntax error: unexpected end of file (%s)\n", inc.what)
		} else {
			fmt.Fprintf(streams.ErrOut, "kubetab: %v\n", err)
		}
		return s.setStatus(ExitUsage)
	}
	s.mu.Lock()
	status := s.status
	if _, set := ctx.Value(langSet{}).(bool); !set && s.lang != "" {
		ctx = lang.With(ctx, s.lang)
	}
	s.mu.Unlock()
	for _, ao := range sc.items {
		if ctx.Err() != nil {
			break
		}
		status = s.runAndOr(ctx, ao, status, streams)
	}
	return s.setStatus(status)
}

func (s *Shell) setStatus(code int) int {
	s.mu.Lock()
	s.status = code
	s.mu.Unlock()
	return code
}

func (s *Shell) runAndOr(ctx context.Context, ao andOr, status int, streams Streams) int {
	status = s.runPipeline(ctx, ao.pipes[0], status, streams)
	for i, op := range ao.ops {
		if ctx.Err() != nil {
			break
		}
		if (op == "&&") != (status == 0) {
			continue // a && b after a failure, a || b after a success
		}
		status = s.runPipeline(ctx, ao.pipes[i+1], status, streams)
	}
	return status
}

// errBrokenPipe is what a command writing into a pipeline gets once the
// command reading it has ended (sh: SIGPIPE).
var errBrokenPipe = errors.New("broken pipe")

// runPipeline runs the commands of a pipeline at once, each one's output
// the next one's input, and returns the last one's status.
func (s *Shell) runPipeline(ctx context.Context, pl pipeline, status int, streams Streams) int {
	n := len(pl.cmds)
	if n == 1 {
		code := s.runSimple(ctx, pl.cmds[0], status, streams)
		return negate(pl.bang, code)
	}
	readers := make([]*io.PipeReader, n-1)
	writers := make([]*io.PipeWriter, n-1)
	for i := range readers {
		readers[i], writers[i] = io.Pipe()
	}
	// Ctrl-C ends every command: closing the pipes wakes those that wait
	// on one, and the context stops the others.
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			for i := range readers {
				readers[i].CloseWithError(ctx.Err())
				writers[i].CloseWithError(ctx.Err())
			}
		case <-done:
		}
	}()
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, cmd := range pl.cmds {
		st := Streams{In: streams.In, Out: streams.Out, ErrOut: streams.ErrOut}
		if i > 0 {
			st.In = readers[i-1]
		}
		if i < n-1 {
			st.Out = writers[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = s.runSimple(ctx, cmd, status, st)
			if i < n-1 {
				writers[i].Close() // the next command reads to the end
			}
			if i > 0 {
				readers[i-1].CloseWithError(errBrokenPipe) // the previous one's writes fail
			}
		}()
	}
	wg.Wait()
	close(done)
	return negate(pl.bang, codes[n-1])
}

func negate(bang bool, code int) int {
	if !bang {
		return code
	}
	if code == 0 {
		return 1
	}
	return 0
}

// expand turns words into arguments: $? is status, $NAME is empty, an
// unquoted word that expands to nothing is dropped, and a word with an
// unquoted * ? or [ is replaced by the files it matches (Files.Glob), or
// stays as it is if none does (sh without nullglob).
func (s *Shell) expand(words []word, status int) []string {
	var out []string
	for _, w := range words {
		var b, pattern strings.Builder
		isPattern := false
		for _, p := range w.parts {
			b.WriteString(p.lit)
			if p.glob {
				pattern.WriteString(p.lit)
				isPattern = isPattern || strings.ContainsAny(p.lit, "*?[")
			} else {
				for _, r := range p.lit {
					if strings.ContainsRune(`*?[\`, r) {
						pattern.WriteByte('\\')
					}
					pattern.WriteRune(r)
				}
			}
			if p.status {
				b.WriteString(strconv.Itoa(status))
				pattern.WriteString(strconv.Itoa(status))
			}
		}
		if b.Len() == 0 && !w.quoted {
			continue
		}
		if isPattern {
			if matches, err := s.files.Glob(pattern.String()); err == nil && len(matches) > 0 {
				out = append(out, matches...)
				continue
			}
		}
		out = append(out, b.String())
	}
	return out
}

// expandOne expands a redirection's target: no pathname expansion.
func expandOne(w word, status int) string {
	var b strings.Builder
	for _, p := range w.parts {
		b.WriteString(p.lit)
		if p.status {
			b.WriteString(strconv.Itoa(status))
		}
	}
	return b.String()
}

// expandHeredoc expands a here-document body whose delimiter was not
// quoted: $? and $NAME, and \ before $ ` \ or a newline.
func expandHeredoc(body string, status int) string {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body) && strings.IndexByte("$`\\\n", body[i+1]) >= 0:
			if body[i+1] != '\n' {
				b.WriteByte(body[i+1])
			}
			i++
		case c == '$' && strings.HasPrefix(body[i:], "$?"):
			b.WriteString(strconv.Itoa(status))
			i++
		case c == '$' && strings.HasPrefix(body[i:], "${"):
			if end := strings.IndexByte(body[i:], '}'); end > 0 {
				if body[i+2:i+end] == "?" {
					b.WriteString(strconv.Itoa(status))
				}
				i += end
			} else {
				b.WriteByte(c)
			}
		case c == '$' && i+1 < len(body) && (body[i+1] == '_' || isAlnum(body[i+1]) && !(body[i+1] >= '0' && body[i+1] <= '9')):
			j := i + 1
			for j < len(body) && (body[j] == '_' || isAlnum(body[j])) {
				j++
			}
			i = j - 1 // an unset variable: nothing
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// runSimple sets up a command's redirections and runs it.
func (s *Shell) runSimple(ctx context.Context, c simple, status int, streams Streams) (code int) {
	args := s.expand(c.words, status)
	st, closeAll, err := s.redirect(c.redirs, status, streams)
	defer closeAll()
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "kubetab: %v\n", err)
		return 1
	}
	if len(args) == 0 {
		return ExitOK // only redirections: `> f` makes f empty
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(st.ErrOut, "kubetab: internal error in %s: %v\n", args[0], p)
			code = 1
		}
	}()
	if args[0] == "help" {
		return s.help(ctx, args[1:], st)
	}
	cmd, ok := s.commands[args[0]]
	if !ok {
		fmt.Fprintf(st.ErrOut, "%s: command not found\n", args[0])
		return ExitNotFound
	}
	return cmd(ctx, args[1:], st)
}

// redirect applies redirections in order, as sh does: `> f 2>&1` sends
// both to f, `2>&1 > f` only the output.
func (s *Shell) redirect(rs []redirect, status int, streams Streams) (Streams, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	in, out, errOut := streams.In, streams.Out, streams.ErrOut
	get := func(fd int) (io.Writer, bool) {
		switch fd {
		case 1:
			return out, true
		case 2:
			return errOut, true
		}
		return nil, false
	}
	set := func(fd int, w io.Writer) error {
		switch fd {
		case 1:
			out = w
		case 2:
			errOut = w
		default:
			return fmt.Errorf("%d: Bad file descriptor (only 0, 1 and 2 exist here)", fd)
		}
		return nil
	}
	for _, r := range rs {
		target := expandOne(r.target, status)
		switch r.op {
		case "<<", "<<-":
			body := r.hd.body
			if !r.hd.quoted {
				body = expandHeredoc(body, status)
			}
			if !r.hd.closed {
				fmt.Fprintf(errOut, "kubetab: warning: here-document delimited by end-of-file (wanted `%s')\n", r.hd.delim)
			}
			if r.fd != 0 {
				return streams, closeAll, fmt.Errorf("%d: only the input (0) takes a here-document", r.fd)
			}
			in = strings.NewReader(body)
		case "<":
			if r.fd != 0 {
				return streams, closeAll, fmt.Errorf("%d<%s: only the input (0) can be read from here", r.fd, target)
			}
			switch target {
			case "/dev/null":
				in = strings.NewReader("")
			case "/dev/stdin":
			default:
				data, err := s.files.ReadFile(target)
				if err != nil {
					return streams, closeAll, fmt.Errorf("%s: %s", target, ErrorText(err))
				}
				in = strings.NewReader(string(data))
			}
		case ">", ">|", ">>", "&>", "&>>":
			var w io.Writer
			switch target {
			case "/dev/null":
				w = io.Discard
			case "/dev/stdout":
				w = streams.Out
			case "/dev/stderr":
				w = streams.ErrOut
			default:
				var err error
				if r.op == ">>" || r.op == "&>>" {
					err = s.files.AppendFile(target, nil)
				} else {
					err = s.files.WriteFile(target, nil)
				}
				if err != nil {
					return streams, closeAll, fmt.Errorf("%s: %s", target, ErrorText(err))
				}
				w = &fileWriter{files: s.files, name: target}
			}
			if r.op[0] == '&' { // &> f: both, as > f 2>&1
				out, errOut = w, w
				continue
			}
			if err := set(r.fd, w); err != nil {
				return streams, closeAll, err
			}
		case ">&", "<&":
			if target == "-" {
				if err := set(r.fd, io.Discard); err != nil {
					return streams, closeAll, err
				}
				continue
			}
			n, err := strconv.Atoi(target)
			if err != nil {
				return streams, closeAll, fmt.Errorf("%s: ambiguous redirect (a file descriptor: 1 or 2)", target)
			}
			w, ok := get(n)
			if !ok {
				return streams, closeAll, fmt.Errorf("%d: Bad file descriptor", n)
			}
			if err := set(r.fd, w); err != nil {
				return streams, closeAll, err
			}
		}
	}
	return Streams{In: in, Out: out, ErrOut: errOut}, closeAll, nil
}

// fileWriter appends every write to a file of the working directory, so
// that `kubectl get pods -w > pods.txt` fills it as events come.
type fileWriter struct {
	files *Files
	name  string
}

func (w *fileWriter) Write(p []byte) (int, error) {
	if err := w.files.AppendFile(w.name, p); err != nil {
		return 0, errors.New(w.name + ": " + ErrorText(err))
	}
	return len(p), nil
}

// ErrorText is an error of Files as coreutils words it (strerror):
// "No such file or directory", "Is a directory" ...
func ErrorText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, ErrIsDir):
		return "Is a directory"
	case errors.Is(err, ErrNotDir):
		return "Not a directory"
	case errors.Is(err, ErrTooLarge):
		return fmt.Sprintf("File too large (a file holds at most %d MiB here)", MaxFileSize>>20)
	case errors.Is(err, ErrNoSpace):
		return fmt.Sprintf("No space left on device (the console's files hold at most %d MiB in all; rm some)", MaxTotalSize>>20)
	case errors.Is(err, errBrokenPipe):
		return "Broken pipe"
	}
	return err.Error()
}

// lockedWriter serializes writes to one terminal.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// help lists the commands with their summaries; `help NAME` is
// `NAME --help`.
func (s *Shell) help(ctx context.Context, args []string, streams Streams) int {
	switch len(args) {
	case 0:
		names := s.Commands()
		width := 0
		for _, n := range names {
			width = max(width, len(n))
		}
		ja := lang.Of(ctx) == lang.Japanese
		if ja {
			fmt.Fprintln(streams.Out, "このコンソールのコマンドです（詳しくは help NAME）:")
		} else {
			fmt.Fprintln(streams.Out, "The commands of this console (help NAME for more):")
		}
		for _, n := range names {
			summary := s.summaries[n]
			if t := s.summariesJA[n]; ja && t != "" {
				summary = t
			}
			fmt.Fprintf(streams.Out, "  %-*s  %s\n", width, n, summary)
		}
		return ExitOK
	case 1:
		cmd, ok := s.commands[args[0]]
		if !ok {
			fmt.Fprintf(streams.ErrOut, "help: no help topics match '%s'.\n", args[0])
			return 1
		}
		return cmd(ctx, []string{"--help"}, streams)
	}
	fmt.Fprintln(streams.ErrOut, "help: usage: help [NAME]")
	return ExitUsage
}
