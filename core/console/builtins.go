package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kubetab/kubetab/core/lang"
)

// builtinsJA are the builtins' help line and --help text in Japanese. The
// option letters and the error messages stay GNU's, as on a Japanese
// lab machine whose coreutils have no translations installed.
var builtinsJA = map[string][2]string{
	"ls":    {"コンソールのファイルを一覧します", "使い方: ls [-l] [-a] [FILE]...\nコンソールの作業ディレクトリ（または指定した DIR）のファイルを一覧します。\n  -l  詳しい形式: 種類、サイズ、時刻\n  -a  . と .. も表示します"},
	"cat":   {"ファイルを表示します（cat <<EOF > f.yaml で書き込めます）", "使い方: cat [FILE]...\nFILE を順に表示します。FILE がないか - のときは入力を読みます。\nヒアドキュメントでファイルを書き込めます:\n  cat <<EOF > web.yaml\n  ...\n  EOF"},
	"rm":    {"ファイルを削除します", "使い方: rm [-f] [-r] FILE...\nFILE を削除します。\n  -f  存在しないファイルを無視します\n  -r  ディレクトリとその中身を削除します"},
	"echo":  {"引数を表示します", "使い方: echo [-n] [STRING]...\nSTRING を空白で区切って表示し、改行します（-n のときは改行しません）。"},
	"grep":  {"パターンに一致する行を表示します", "使い方: grep [OPTION]... PATTERN [FILE]...\nFILE（または入力）のうち PATTERN（基本正規表現）に一致する行を表示します。\n  -E  PATTERN を拡張正規表現として扱います\n  -F  PATTERN を固定文字列として扱います\n  -i  大文字と小文字を区別しません\n  -v  一致しない行を表示します\n  -w  単語全体が一致するものだけにします\n  -x  行全体が一致するものだけにします\n  -c  一致した行の数だけを表示します\n  -o  一致した部分だけを表示します\n  -n  行番号を表示します\n  -q  何も表示しません。一致があれば終了コード 0 です\n  -e PATTERN  PATTERN を使います（- で始まってもかまいません）\n終了コード: 一致する行があれば 0、なければ 1、エラーは 2 です。"},
	"head":  {"先頭の行を表示します", "使い方: head [-n NUM] [FILE]...\nFILE または入力の先頭 10 行（-n のときは NUM 行）を表示します。"},
	"tail":  {"末尾の行を表示します", "使い方: tail [-n NUM] [FILE]...\nFILE または入力の末尾 10 行（-n のときは NUM 行、-n +NUM のときは NUM 行目から）を表示します。"},
	"wc":    {"行数、単語数、バイト数を数えます", "使い方: wc [-l] [-w] [-c] [FILE]...\nFILE または入力の改行数、単語数、バイト数を表示します。"},
	"true":  {"何もせず、成功します", "使い方: true\n終了コード 0 で終わります。"},
	"false": {"何もせず、失敗します", "使い方: false\n終了コード 1 で終わります。"},
}

// The builtins: the few coreutils a Kubernetes tutorial pipes kubectl
// into, over the working directory (Files). Their messages and exit codes
// are GNU coreutils' and GNU grep's.

type builtin struct {
	name, summary, usage string
	run                  func(b *builtinRun, args []string) int
}

// builtinRun is one run of a builtin.
type builtinRun struct {
	ctx     context.Context
	name    string
	files   *Files
	streams Streams
}

func (b *builtinRun) errorf(format string, a ...any) {
	fmt.Fprintf(b.streams.ErrOut, b.name+": "+format+"\n", a...)
}

// usageError is coreutils' answer to a bad option.
func (b *builtinRun) usageError(format string, a ...any) int {
	b.errorf(format, a...)
	fmt.Fprintf(b.streams.ErrOut, "Try '%s --help' for more information.\n", b.name)
	return ExitUsage
}

func (s *Shell) registerBuiltins() {
	for _, bi := range []builtin{
		{"ls", "list the console's files", "Usage: ls [-l] [-a] [FILE]...\nList the files of the console's working directory (or of the DIRs given).\n  -l  long listing: type, size, time\n  -a  also . and ..", runLs},
		{"cat", "print files (cat <<EOF > f.yaml writes one)", "Usage: cat [FILE]...\nPrint the FILEs one after the other; with no FILE, or -, read the input.\nWrite a file with a here-document:\n  cat <<EOF > web.yaml\n  ...\n  EOF", runCat},
		{"rm", "remove files", "Usage: rm [-f] [-r] FILE...\nRemove the FILEs.\n  -f  ignore missing files\n  -r  remove directories and what they hold", runRm},
		{"echo", "print its arguments", "Usage: echo [-n] [STRING]...\nPrint the STRINGs, separated by spaces, and a newline (not with -n).", runEcho},
		{"grep", "print the lines that match a pattern", "Usage: grep [OPTION]... PATTERN [FILE]...\nPrint the lines of the FILEs (or of the input) that match PATTERN, a basic regular expression.\n  -E  PATTERN is an extended regular expression\n  -F  PATTERN is a fixed string\n  -i  ignore case\n  -v  print the lines that do not match\n  -w  match whole words only\n  -x  match whole lines only\n  -c  print only a count of matching lines\n  -o  print only the matched parts\n  -n  print line numbers\n  -q  print nothing; exit 0 on a match\n  -e PATTERN  use PATTERN (may start with -)\nExit status: 0 if a line matched, 1 if none, 2 on an error.", runGrep},
		{"head", "print the first lines", "Usage: head [-n NUM] [FILE]...\nPrint the first 10 lines (NUM lines with -n) of the FILEs or of the input.", runHead},
		{"tail", "print the last lines", "Usage: tail [-n NUM] [FILE]...\nPrint the last 10 lines (NUM lines with -n; from line NUM with -n +NUM) of the FILEs or of the input.", runTail},
		{"wc", "count lines, words and bytes", "Usage: wc [-l] [-w] [-c] [FILE]...\nPrint the newline, word and byte counts of the FILEs or of the input.", runWc},
		{"true", "do nothing, successfully", "Usage: true\nExit with status 0.", func(*builtinRun, []string) int { return 0 }},
		{"false", "do nothing, unsuccessfully", "Usage: false\nExit with status 1.", func(*builtinRun, []string) int { return 1 }},
	} {
		bi := bi
		ja := builtinsJA[bi.name]
		s.Register(bi.name, bi.summary, func(ctx context.Context, args []string, st Streams) int {
			if len(args) == 1 && args[0] == "--help" {
				fmt.Fprintln(st.Out, lang.Pick(ctx, bi.usage, ja[1]))
				return ExitOK
			}
			return bi.run(&builtinRun{ctx: ctx, name: bi.name, files: s.files, streams: st}, args)
		})
		s.Translate(bi.name, ja[0])
	}
}

// flags splits args into single-letter options (clustered as -ln), the
// values of those in withValue (-n 5, -n5), and operands; "--" ends the
// options, and "-" alone is an operand. A number option like head's -5 is
// returned as the option '#' with its value.
type parsedFlags struct {
	set      map[byte]bool
	values   map[byte][]string
	operands []string
}

func (b *builtinRun) parseFlags(args []string, known, withValue string, numbers bool) (*parsedFlags, int, bool) {
	p := &parsedFlags{set: map[byte]bool{}, values: map[byte][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.operands = append(p.operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			p.operands = append(p.operands, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			if a == "--color" || strings.HasPrefix(a, "--color=") || strings.HasPrefix(a, "--colour") || a == "--line-buffered" {
				continue // no colours to give; lines always go out as they match
			}
			return nil, b.usageError("unrecognized option '%s'", a), false
		}
		if numbers && isNumber(a[1:]) {
			p.set['#'] = true
			p.values['#'] = append(p.values['#'], a[1:])
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(withValue, c) >= 0 {
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, b.usageError("option requires an argument -- '%c'", c), false
					}
					i++
					v = args[i]
				}
				p.set[c] = true
				p.values[c] = append(p.values[c], v)
				break
			}
			if strings.IndexByte(known, c) < 0 {
				return nil, b.usageError("invalid option -- '%c'", c), false
			}
			p.set[c] = true
		}
	}
	return p, 0, true
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != ""
}

// open opens a FILE operand: "-" is the input.
func (b *builtinRun) open(name string) (io.Reader, error) {
	if name == "-" || name == "/dev/stdin" {
		return b.streams.In, nil
	}
	if name == "/dev/null" {
		return strings.NewReader(""), nil
	}
	data, err := b.files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(string(data)), nil
}

func runEcho(b *builtinRun, args []string) int {
	newline := true
	for len(args) > 0 && args[0] == "-n" {
		newline = false
		args = args[1:]
	}
	text := strings.Join(args, " ")
	if newline {
		text += "\n"
	}
	if _, err := io.WriteString(b.streams.Out, text); err != nil {
		b.errorf("write error: %s", ErrorText(err))
		return 1
	}
	return 0
}

func runCat(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "", "", false)
	if !ok {
		return code
	}
	if len(f.operands) == 0 {
		f.operands = []string{"-"}
	}
	status := 0
	for _, name := range f.operands {
		r, err := b.open(name)
		if err != nil {
			b.errorf("%s: %s", name, ErrorText(err))
			status = 1
			continue
		}
		if _, err := io.Copy(b.streams.Out, r); err != nil {
			if b.ctx.Err() == nil {
				b.errorf("write error: %s", ErrorText(err))
			}
			return 1
		}
	}
	return status
}

func runRm(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "frRiv", "", false)
	if !ok {
		return code
	}
	force, recursive := f.set['f'], f.set['r'] || f.set['R']
	if len(f.operands) == 0 {
		if force {
			return 0
		}
		return b.usageError("missing operand")
	}
	status := 0
	for _, name := range f.operands {
		if base := path.Base(path.Clean(name)); base == "." || base == ".." {
			b.errorf("refusing to remove '.' or '..' directory: skipping '%s'", name)
			status = 1
			continue
		}
		fi, err := b.files.Stat(name)
		switch {
		case err != nil:
			if !force || !errors.Is(err, fs.ErrNotExist) {
				b.errorf("cannot remove '%s': %s", name, ErrorText(err))
				status = 1
			}
			continue
		case fi.IsDir() && !recursive:
			b.errorf("cannot remove '%s': Is a directory", name)
			status = 1
			continue
		case fi.IsDir():
			err = b.files.RemoveAll(name)
		default:
			err = b.files.Remove(name)
		}
		if err != nil {
			b.errorf("cannot remove '%s': %s", name, ErrorText(err))
			status = 1
		} else if f.set['v'] {
			fmt.Fprintf(b.streams.Out, "removed '%s'\n", name)
		}
	}
	return status
}

func runLs(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "la1AF", "", false)
	if !ok {
		return code
	}
	long, all := f.set['l'], f.set['a']
	if len(f.operands) == 0 {
		f.operands = []string{"."}
	}
	line := func(fi fs.FileInfo, name string) {
		if !long {
			fmt.Fprintln(b.streams.Out, name)
			return
		}
		when := "            "
		if !fi.ModTime().IsZero() {
			when = fi.ModTime().Format("Jan _2 15:04")
		}
		fmt.Fprintf(b.streams.Out, "%s 1 learner learner %6d %s %s\n", fi.Mode(), fi.Size(), when, name)
	}
	status := 0
	var dirs []string
	for _, name := range f.operands {
		fi, err := b.files.Stat(name)
		if err != nil {
			b.errorf("cannot access '%s': %s", name, ErrorText(err))
			status = ExitUsage
			continue
		}
		if fi.IsDir() {
			dirs = append(dirs, name)
			continue
		}
		line(fi, name)
	}
	for i, dir := range dirs {
		if len(f.operands) > 1 {
			if i > 0 || len(f.operands) > len(dirs) {
				fmt.Fprintln(b.streams.Out)
			}
			fmt.Fprintf(b.streams.Out, "%s:\n", dir)
		}
		entries, err := b.files.ReadDir(dir)
		if err != nil {
			b.errorf("cannot open directory '%s': %s", dir, ErrorText(err))
			status = ExitUsage
			continue
		}
		if long {
			fmt.Fprintf(b.streams.Out, "total %d\n", len(entries))
		}
		if all {
			d := entry{name: ".", dir: true}
			line(d, ".")
			line(d, "..")
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") && !all && !f.set['A'] {
				continue // a dot file shows with -a
			}
			fi, _ := e.Info()
			line(fi, e.Name())
		}
	}
	return status
}

// lines calls fn for each line of r (without its newline) until fn returns
// false; it reads as lines come, so a pipeline streams.
func lines(r io.Reader, fn func(line string, newline bool) bool) error {
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if len(l) > 0 {
			nl := strings.HasSuffix(l, "\n")
			if !fn(strings.TrimSuffix(l, "\n"), nl) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// bre turns a POSIX basic regular expression into Go's syntax: in a BRE,
// + ? | ( ) { } are literal and \+ \? \| \( \) \{ \} are the operators (GNU).
func bre(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte("+?|(){}", p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte("+?|(){}", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '[':
			// A bracket expression is copied whole: ] first is literal.
			end := i + 1
			if end < len(p) && p[end] == '^' {
				end++
			}
			if end < len(p) && p[end] == ']' {
				end++
			}
			for end < len(p) && p[end] != ']' {
				end++
			}
			if end >= len(p) {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteString(p[i : end+1])
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func runGrep(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "EFGivcownqxhHsl", "e", false)
	if !ok {
		return code
	}
	patterns := f.values['e']
	if len(patterns) == 0 {
		if len(f.operands) == 0 {
			fmt.Fprintln(b.streams.ErrOut, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.")
			return ExitUsage
		}
		patterns, f.operands = strings.Split(f.operands[0], "\n"), f.operands[1:]
	}
	var alts []string
	for _, p := range patterns {
		switch {
		case f.set['F']:
			p = regexp.QuoteMeta(p)
		case !f.set['E']:
			p = bre(p)
		}
		alts = append(alts, "(?:"+p+")")
	}
	expr := strings.Join(alts, "|")
	if f.set['w'] {
		expr = `(?:^|\b)(?:` + expr + `)(?:\b|$)`
	}
	if f.set['x'] {
		expr = `^(?:` + expr + `)$`
	}
	if f.set['i'] {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		b.errorf("%s", regexpMessage(err))
		return ExitUsage
	}
	if len(f.operands) == 0 {
		f.operands = []string{"-"}
	}
	prefix := (len(f.operands) > 1 || f.set['H']) && !f.set['h']
	matched, status := false, 0
	for _, name := range f.operands {
		r, err := b.open(name)
		if err != nil {
			if !f.set['s'] {
				b.errorf("%s: %s", name, ErrorText(err))
			}
			status = ExitUsage
			continue
		}
		label := name
		if name == "-" {
			label = "(standard input)"
		}
		count, n := 0, 0
		werr := lines(r, func(line string, _ bool) bool {
			n++
			hit := re.MatchString(line) != f.set['v']
			if !hit {
				return true
			}
			matched = true
			count++
			if f.set['q'] {
				return false
			}
			if f.set['c'] || f.set['l'] {
				return true
			}
			lead := ""
			if prefix {
				lead = label + ":"
			}
			if f.set['n'] {
				lead += strconv.Itoa(n) + ":"
			}
			var werr error
			if f.set['o'] && !f.set['v'] {
				for _, m := range re.FindAllString(line, -1) {
					if m != "" {
						if _, werr = fmt.Fprintf(b.streams.Out, "%s%s\n", lead, m); werr != nil {
							break
						}
					}
				}
			} else if !f.set['o'] {
				_, werr = fmt.Fprintf(b.streams.Out, "%s%s\n", lead, line)
			}
			return werr == nil
		})
		if werr != nil && b.ctx.Err() == nil {
			b.errorf("%s: %s", label, ErrorText(werr))
			status = ExitUsage
		}
		switch {
		case f.set['q'] && matched:
			return 0
		case f.set['l'] && count > 0:
			fmt.Fprintln(b.streams.Out, label)
		case f.set['c']:
			if prefix {
				fmt.Fprintf(b.streams.Out, "%s:%d\n", label, count)
			} else {
				fmt.Fprintf(b.streams.Out, "%d\n", count)
			}
		}
	}
	if status != 0 && !(matched && f.set['q']) {
		return status
	}
	if !matched {
		return 1
	}
	return 0
}

// regexpMessage words a pattern error as GNU grep does where it can.
func regexpMessage(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "missing closing )"):
		return "Unmatched ( or \\("
	case strings.Contains(msg, "unexpected )"):
		return "Unmatched ) or \\)"
	case strings.Contains(msg, "missing closing ]"):
		return "Unmatched [, [^, [:, [., or [="
	case strings.Contains(msg, "missing argument to repetition operator"):
		return "Invalid preceding regular expression"
	}
	return "invalid regular expression: " + strings.TrimPrefix(msg, "error parsing regexp: ")
}

// count reads the -n NUM of head and tail (and their -NUM): from tells
// whether it was +NUM.
func (b *builtinRun) count(f *parsedFlags) (n int, from bool, ok bool) {
	n = 10
	v := ""
	if vs := f.values['n']; len(vs) > 0 {
		v = vs[len(vs)-1]
	} else if vs := f.values['#']; len(vs) > 0 {
		v = vs[len(vs)-1]
	}
	if v == "" {
		return n, false, true
	}
	if strings.HasPrefix(v, "+") {
		from, v = true, v[1:]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.errorf("invalid number of lines: '%s'", v)
		return 0, false, false
	}
	return n, from, true
}

func runHead(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "qv", "n", true)
	if !ok {
		return code
	}
	n, _, ok := b.count(f)
	if !ok {
		return 1
	}
	return b.eachFile(f.operands, func(r io.Reader) bool {
		seen := 0
		var werr error
		if n > 0 {
			_ = lines(r, func(line string, nl bool) bool {
				seen++
				if nl {
					line += "\n"
				}
				_, werr = io.WriteString(b.streams.Out, line)
				return werr == nil && seen < n
			})
		}
		return werr == nil
	})
}

// eachFile gives fn each operand's contents in turn (standard input for
// "-" or none), with the "==> name <==" headers head and tail print between
// several files. A file that cannot be opened is reported and skipped (exit
// status 1); fn returns false when writing failed, which ends the command.
func (b *builtinRun) eachFile(operands []string, fn func(r io.Reader) bool) int {
	if len(operands) == 0 {
		operands = []string{"-"}
	}
	status := 0
	for i, name := range operands {
		r, err := b.open(name)
		if err != nil {
			b.errorf("cannot open '%s' for reading: %s", name, ErrorText(err))
			status = 1
			continue
		}
		if len(operands) > 1 {
			if i > 0 {
				fmt.Fprintln(b.streams.Out)
			}
			fmt.Fprintf(b.streams.Out, "==> %s <==\n", headerName(name))
		}
		if !fn(r) {
			return 1
		}
	}
	return status
}

func headerName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

func runTail(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "qv", "n", true)
	if !ok {
		return code
	}
	n, from, ok := b.count(f)
	if !ok {
		return 1
	}
	return b.eachFile(f.operands, func(r io.Reader) bool {
		var kept []string
		seen := 0
		_ = lines(r, func(line string, nl bool) bool {
			seen++
			if nl {
				line += "\n"
			}
			if from {
				if seen >= n {
					_, err := io.WriteString(b.streams.Out, line)
					return err == nil
				}
				return true
			}
			kept = append(kept, line)
			if len(kept) > n {
				kept = kept[1:]
			}
			return true
		})
		for _, l := range kept {
			io.WriteString(b.streams.Out, l)
		}
		return true
	})
}

func runWc(b *builtinRun, args []string) int {
	f, code, ok := b.parseFlags(args, "lwcm", "", false)
	if !ok {
		return code
	}
	show := []bool{f.set['l'], f.set['w'], f.set['c'] || f.set['m']}
	if !show[0] && !show[1] && !show[2] {
		show = []bool{true, true, true}
	}
	if len(f.operands) == 0 {
		f.operands = []string{"-"}
	}
	type counts struct {
		n    [3]int
		name string
	}
	var rows []counts
	var total [3]int
	status, stdin := 0, false
	for _, name := range f.operands {
		r, err := b.open(name)
		if err != nil {
			b.errorf("%s: %s", name, ErrorText(err))
			status = 1
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil && b.ctx.Err() == nil {
			b.errorf("%s: %s", name, ErrorText(err))
			status = 1
		}
		c := counts{name: name}
		if name == "-" {
			c.name, stdin = "", true
		}
		c.n = [3]int{strings.Count(string(data), "\n"), len(strings.Fields(string(data))), len(data)}
		for i := range total {
			total[i] += c.n[i]
		}
		rows = append(rows, c)
	}
	if len(rows) > 1 {
		rows = append(rows, counts{n: total, name: "total"})
	}
	shown := 0
	for _, s := range show {
		if s {
			shown++
		}
	}
	width := 1
	switch {
	case shown == 1 && len(rows) == 1:
	case stdin:
		width = 7
	default:
		width = len(strconv.Itoa(total[2]))
	}
	for _, r := range rows {
		var cols []string
		for i, s := range show {
			if s {
				cols = append(cols, fmt.Sprintf("%*d", width, r.n[i]))
			}
		}
		if r.name != "" {
			cols = append(cols, r.name)
		}
		fmt.Fprintln(b.streams.Out, strings.Join(cols, " "))
	}
	return status
}
