package console

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// testShell has the builtins and two commands: args prints its arguments
// and exits with their count; fail prints to stderr and exits 3.
func testShell(t *testing.T) *Shell {
	t.Helper()
	sh, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	sh.Register("args", "print the arguments", func(ctx context.Context, args []string, s Streams) int {
		fmt.Fprintf(s.Out, "args=%q\n", args)
		return len(args)
	})
	sh.Register("fail", "fail", func(ctx context.Context, args []string, s Streams) int {
		fmt.Fprintln(s.ErrOut, "fail: it went wrong")
		return 3
	})
	return sh
}

type shellCase struct {
	name     string
	files    map[string]string // in the working directory before
	in       string            // Run's input stream
	script   string
	wantCode int
	wantOut  string
	wantErr  string
	after    map[string]string // files that must hold this after (gone: must not exist)
}

const gone = "\x00gone"

func runCases(t *testing.T, tests []shellCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := testShell(t)
			for name, data := range tt.files {
				if err := sh.Files().WriteFile(name, []byte(data)); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			code := sh.Run(context.Background(), tt.script, Streams{In: strings.NewReader(tt.in), Out: &out, ErrOut: &errOut})
			if code != tt.wantCode || out.String() != tt.wantOut || errOut.String() != tt.wantErr {
				t.Errorf("Run(%q) = %d\nout: %q\nerr: %q\nwant %d\nout: %q\nerr: %q",
					tt.script, code, out.String(), errOut.String(), tt.wantCode, tt.wantOut, tt.wantErr)
			}
			for name, want := range tt.after {
				got, err := sh.Files().ReadFile(name)
				switch {
				case want == gone && err == nil:
					t.Errorf("%s exists after, holding %q", name, got)
				case want != gone && (err != nil || string(got) != want):
					t.Errorf("%s after = %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
}

func TestRunCommands(t *testing.T) {
	runCases(t, []shellCase{
		{name: "words", script: "args get pods", wantCode: 2, wantOut: "args=[\"get\" \"pods\"]\n"},
		{name: "blanks", script: "  args  ", wantOut: "args=[]\n"},
		{name: "empty", script: ""},
		{name: "blank", script: "   \n\n  "},
		{name: "comment", script: "# nothing\nargs a # the rest\n", wantCode: 1, wantOut: "args=[\"a\"]\n"},
		{name: "quotes", script: `args 'a b' "c $? d" e\ f "" '' g"h"'i'`, wantCode: 6,
			wantOut: "args=[\"a b\" \"c 0 d\" \"e f\" \"\" \"\" \"ghi\"]\n"},
		{name: "jsonpath", script: `args -o jsonpath='{.items[*].metadata.name}'`, wantCode: 2,
			wantOut: "args=[\"-o\" \"jsonpath={.items[*].metadata.name}\"]\n"},
		{name: "unset variable", script: `args $NAME "${NAME}x"`, wantCode: 1, wantOut: "args=[\"x\"]\n"},
		{name: "lone dollar", script: `args $ a$`, wantCode: 2, wantOut: "args=[\"$\" \"a$\"]\n"},
		{name: "line continuation", script: "args a \\\n  b", wantCode: 2, wantOut: "args=[\"a\" \"b\"]\n"},
		{name: "not found", script: "ls-l", wantCode: ExitNotFound, wantErr: "ls-l: command not found\n"},
		{name: "not found keeps going", script: "kubect get pods; args", wantCode: 0,
			wantOut: "args=[]\n", wantErr: "kubect: command not found\n"},
		{name: "unterminated quote", script: `args "pods`, wantCode: ExitUsage,
			wantErr: "kubetab: syntax error: unexpected end of file (unterminated double quote)\n"},
		{name: "syntax error", script: "args | | args", wantCode: ExitUsage,
			wantErr: "kubetab: syntax error near unexpected token `|'\n"},
		{name: "syntax error runs nothing", script: "args a\nargs ;; b", wantCode: ExitUsage,
			wantErr: "kubetab: syntax error near unexpected token `;'\n"},
		{name: "redirection without a file", script: "args >", wantCode: ExitUsage,
			wantErr: "kubetab: syntax error near unexpected token `end of file'\n"},
		{name: "background", script: "args &", wantCode: ExitUsage,
			wantErr: "kubetab: background jobs (&) are not supported in this console\n"},
		{name: "command substitution", script: "args $(args)", wantCode: ExitUsage,
			wantErr: "kubetab: command substitution ($(...) and `...`) is not supported in this console\n"},
		{name: "subshell", script: "(args)", wantCode: ExitUsage,
			wantErr: "kubetab: syntax error near unexpected token `(' (this console has no subshells)\n"},
		{name: "help", script: "help | head -n 3", wantOut: "The commands of this console (help NAME for more):\n  args   print the arguments\n  cat    print files (cat <<EOF > f.yaml writes one)\n"},
		{name: "help NAME", script: "help args", wantCode: 1, wantOut: "args=[\"--help\"]\n"},
		{name: "help a builtin", script: "help echo", wantOut: "Usage: echo [-n] [STRING]...\nPrint the STRINGs, separated by spaces, and a newline (not with -n).\n"},
		{name: "help unknown", script: "help nope", wantCode: 1, wantErr: "help: no help topics match 'nope'.\n"},
		{name: "help a b", script: "help a b", wantCode: ExitUsage, wantErr: "help: usage: help [NAME]\n"},
	})
}

func TestRunLists(t *testing.T) {
	runCases(t, []shellCase{
		{name: "semicolon", script: "args a; args b c", wantCode: 2, wantOut: "args=[\"a\"]\nargs=[\"b\" \"c\"]\n"},
		{name: "newlines", script: "args a\nargs\n", wantCode: 0, wantOut: "args=[\"a\"]\nargs=[]\n"},
		{name: "and after success", script: "true && echo yes", wantOut: "yes\n"},
		{name: "and after failure", script: "false && echo yes", wantCode: 1},
		{name: "or after failure", script: "false || echo rescued", wantOut: "rescued\n"},
		{name: "or after success", script: "true || echo no"},
		{name: "chain", script: "false && echo a || echo b && echo c", wantOut: "b\nc\n"},
		{name: "and across lines", script: "true &&\n  echo next", wantOut: "next\n"},
		{name: "status", script: "fail; echo $?; echo $?", wantOut: "3\n0\n", wantErr: "fail: it went wrong\n"},
		{name: "status of not found", script: "nope 2>/dev/null; echo \"$?\"", wantOut: "127\n"},
		{name: "bang", script: "! false && echo negated; ! true; echo $?", wantOut: "negated\n1\n"},
		{name: "bang of a pipeline", script: "! echo web | grep -q web; echo $?", wantOut: "1\n"},
	})
}

func TestRunRedirections(t *testing.T) {
	runCases(t, []shellCase{
		{name: "write", script: "echo hello > f.txt; cat f.txt", wantOut: "hello\n", after: map[string]string{"f.txt": "hello\n"}},
		{name: "replace", files: map[string]string{"f": "old\n"}, script: "echo new > f", after: map[string]string{"f": "new\n"}},
		{name: "append", files: map[string]string{"f": "a\n"}, script: "echo b >> f; echo c >>f", after: map[string]string{"f": "a\nb\nc\n"}},
		{name: "in a directory", script: "echo x > app/x.yaml; ls app", wantOut: "x.yaml\n"},
		{name: "read", files: map[string]string{"in": "line\n"}, script: "cat < in", wantOut: "line\n"},
		{name: "read missing", script: "cat < nope; echo $?", wantOut: "1\n", wantErr: "kubetab: nope: No such file or directory\n"},
		{name: "write a directory", files: map[string]string{"app/a": "x"}, script: "echo x > app", wantCode: 1,
			wantErr: "kubetab: app: Is a directory\n"},
		{name: "write outside", script: "echo x > /tmp/x", wantCode: 1, wantErr: "kubetab: /tmp/x: No such file or directory\n"},
		{name: "failed redirection runs nothing", script: "args > app/ ", wantCode: 1, wantErr: "kubetab: app/: Is a directory\n",
			after: map[string]string{"app": gone}},
		{name: "stderr to stdout", script: "fail 2>&1 | grep wrong", wantOut: "fail: it went wrong\n"},
		{name: "stderr to a file", script: "fail 2> err.txt", wantCode: 3, after: map[string]string{"err.txt": "fail: it went wrong\n"}},
		{name: "both to a file", script: "fail > all.txt 2>&1; args x >> all.txt 2>&1", wantCode: 1,
			after: map[string]string{"all.txt": "fail: it went wrong\nargs=[\"x\"]\n"}},
		{name: "order matters", script: "fail 2>&1 > out.txt", wantCode: 3, wantOut: "fail: it went wrong\n",
			after: map[string]string{"out.txt": ""}},
		{name: "dev null", script: "fail 2>/dev/null; echo hi >/dev/null", wantCode: 0},
		{name: "to stderr", script: "echo oops >&2", wantErr: "oops\n"},
		{name: "both with &>", script: "fail &> all.txt; args >> all.txt; fail &>> all.txt", wantCode: 3,
			after: map[string]string{"all.txt": "fail: it went wrong\nargs=[]\nfail: it went wrong\n"}},
		{name: "truncate only", files: map[string]string{"f": "x"}, script: "> f", after: map[string]string{"f": ""}},
		{name: "bad descriptor", script: "echo x 3> f", wantCode: 1, wantErr: "kubetab: 3: Bad file descriptor (only 0, 1 and 2 exist here)\n"},
		{name: "too large", files: map[string]string{"big": strings.Repeat("x", MaxFileSize)}, script: "cat big big > bigger", wantCode: 1,
			wantErr: "cat: write error: bigger: File too large (a file holds at most 4 MiB here)\n"},
	})
}

func TestRunHeredocs(t *testing.T) {
	runCases(t, []shellCase{
		{name: "to a file", script: "cat <<EOF > d.yaml\napiVersion: v1\nkind: Namespace\nEOF\ncat d.yaml",
			wantOut: "apiVersion: v1\nkind: Namespace\n", after: map[string]string{"d.yaml": "apiVersion: v1\nkind: Namespace\n"}},
		{name: "redirection first", script: "cat > d.yaml <<EOF\nx: 1\nEOF", after: map[string]string{"d.yaml": "x: 1\n"}},
		{name: "expands status", script: "false\ncat <<EOF\ncode $? \\$? ${?}\nEOF", wantOut: "code 1 $? 1\n"},
		{name: "quoted delimiter is literal", script: "cat <<'EOF'\n$? \\$x ${NAME}\nEOF", wantOut: "$? \\$x ${NAME}\n"},
		{name: "double-quoted delimiter", script: "cat <<\"END\"\n$?\nEND", wantOut: "$?\n"},
		{name: "strip tabs", script: "cat <<-EOF\n\tindented\n\t\tmore\n\tEOF\necho after", wantOut: "indented\nmore\nafter\n"},
		{name: "tabs kept without -", script: "cat <<EOF\n\tkept\nEOF", wantOut: "\tkept\n"},
		{name: "quotes in the body are text", script: "cat <<EOF\nit's \"quoted\"\nEOF", wantOut: "it's \"quoted\"\n"},
		{name: "two in a line", script: "cat <<A; cat <<B\none\nA\ntwo\nB", wantOut: "one\ntwo\n"},
		{name: "into a pipeline", script: "cat <<EOF | grep -c web\nweb-1\ndb\nweb-2\nEOF", wantOut: "2\n"},
		{name: "unterminated", script: "cat <<EOF\npartial", wantOut: "partial\n",
			wantErr: "kubetab: warning: here-document delimited by end-of-file (wanted `EOF')\n"},
		{name: "empty", script: "cat <<EOF > e\nEOF", after: map[string]string{"e": ""}},
	})
}

func TestGlobs(t *testing.T) {
	files := map[string]string{"a.yaml": "a\n", "b.yaml": "b\n", "c.yml": "c\n", ".hidden.yaml": "h\n", "app/web.yaml": "w\n", "app/db.json": "d\n", "x*y": "star\n"}
	runCases(t, []shellCase{
		{name: "star", files: files, script: "args *.yaml", wantCode: 2, wantOut: "args=[\"a.yaml\" \"b.yaml\"]\n"},
		{name: "in a directory", files: files, script: "args app/*", wantCode: 2, wantOut: "args=[\"app/db.json\" \"app/web.yaml\"]\n"},
		{name: "question mark and class", files: files, script: "args [ab].y?ml", wantCode: 2, wantOut: "args=[\"a.yaml\" \"b.yaml\"]\n"},
		{name: "dot files", files: files, script: "args .*.yaml", wantCode: 1, wantOut: "args=[\".hidden.yaml\"]\n"},
		{name: "directories", files: files, script: "args */", wantCode: 1, wantOut: "args=[\"app/\"]\n"},
		{name: "dot slash", files: files, script: "args ./*.yml", wantCode: 1, wantOut: "args=[\"./c.yml\"]\n"},
		{name: "no match stays", files: files, script: "args *.txt", wantCode: 1, wantOut: "args=[\"*.txt\"]\n"},
		{name: "quoted is literal", files: files, script: "args '*.yaml' \"*\".yaml \\*.yaml", wantCode: 3, wantOut: "args=[\"*.yaml\" \"*.yaml\" \"*.yaml\"]\n"},
		{name: "quoted star in a pattern", files: files, script: "args x'*'?", wantCode: 1, wantOut: "args=[\"x*y\"]\n"},
		{name: "rm a pattern", files: files, script: "rm *.yaml; ls", wantOut: "app\nc.yml\nx*y\n"},
		{name: "cat a pattern", files: files, script: "cat app/*", wantOut: "d\nw\n"},
	})
}

func TestBuiltins(t *testing.T) {
	pods := "NAME    READY   STATUS\nweb-1   1/1     Running\ndb-1    0/1     Pending\nweb-2   1/1     Running\n"
	files := map[string]string{"pods.txt": pods, "app/web.yaml": "kind: Deployment\n", "app/svc.yaml": "kind: Service\n"}
	runCases(t, []shellCase{
		{name: "ls", files: files, script: "ls", wantOut: "app\npods.txt\n"},
		{name: "ls dir", files: files, script: "ls app/", wantOut: "svc.yaml\nweb.yaml\n"},
		{name: "ls files and dirs", files: files, script: "ls pods.txt app", wantOut: "pods.txt\n\napp:\nsvc.yaml\nweb.yaml\n"},
		{name: "ls missing", files: files, script: "ls nope", wantCode: 2, wantErr: "ls: cannot access 'nope': No such file or directory\n"},
		{name: "ls bad option", script: "ls -z", wantCode: 2, wantErr: "ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n"},
		{name: "ls empty", script: "ls"},
		{name: "cat", files: files, script: "cat app/svc.yaml app/web.yaml", wantOut: "kind: Service\nkind: Deployment\n"},
		{name: "cat input", in: "typed\n", script: "cat", wantOut: "typed\n"},
		{name: "cat missing", files: files, script: "cat nope.yaml app/svc.yaml", wantCode: 1,
			wantOut: "kind: Service\n", wantErr: "cat: nope.yaml: No such file or directory\n"},
		{name: "cat dir", files: files, script: "cat app", wantCode: 1, wantErr: "cat: app: Is a directory\n"},
		{name: "rm", files: files, script: "rm pods.txt && ls", wantOut: "app\n", after: map[string]string{"pods.txt": gone}},
		{name: "rm missing", script: "rm nope", wantCode: 1, wantErr: "rm: cannot remove 'nope': No such file or directory\n"},
		{name: "rm -f missing", script: "rm -f nope"},
		{name: "rm dir", files: files, script: "rm app", wantCode: 1, wantErr: "rm: cannot remove 'app': Is a directory\n"},
		{name: "rm -r dir", files: files, script: "rm -r app; ls", wantOut: "pods.txt\n", after: map[string]string{"app/web.yaml": gone}},
		{name: "rm dot", files: files, script: "rm -rf .", wantCode: 1, wantErr: "rm: refusing to remove '.' or '..' directory: skipping '.'\n"},
		{name: "rm nothing", script: "rm", wantCode: 2, wantErr: "rm: missing operand\nTry 'rm --help' for more information.\n"},
		{name: "echo", script: "echo a  'b  c'; echo -n d; echo", wantOut: "a b  c\nd\n"},
		{name: "grep", files: files, script: "grep web pods.txt", wantOut: "web-1   1/1     Running\nweb-2   1/1     Running\n"},
		{name: "grep stdin", in: pods, script: "grep Pending", wantOut: "db-1    0/1     Pending\n"},
		{name: "grep no match", files: files, script: "grep nothing pods.txt", wantCode: 1},
		{name: "grep -i", files: files, script: "grep -i PENDING pods.txt", wantOut: "db-1    0/1     Pending\n"},
		{name: "grep -v -c", files: files, script: "grep -vc Running pods.txt", wantOut: "2\n"},
		{name: "grep -n", files: files, script: "grep -n db pods.txt", wantOut: "3:db-1    0/1     Pending\n"},
		{name: "grep -o -E", files: files, script: "grep -oE 'web-[0-9]+' pods.txt", wantOut: "web-1\nweb-2\n"},
		{name: "grep BRE", files: files, script: `grep 'web-\(1\|2\)' pods.txt | wc -l`, wantOut: "2\n"},
		{name: "grep BRE plus is literal", in: "a+b\naab\n", script: "grep 'a+b'", wantOut: "a+b\n"},
		{name: "grep -w", in: "web\nwebsite\nmy web app\n", script: "grep -w web", wantOut: "web\nmy web app\n"},
		{name: "grep -F", in: "a.b\naxb\n", script: "grep -F a.b", wantOut: "a.b\n"},
		{name: "grep -e", in: "-x\ny\n", script: "grep -e -x", wantOut: "-x\n"},
		{name: "grep files", files: files, script: "grep kind app/svc.yaml app/web.yaml", wantOut: "app/svc.yaml:kind: Service\napp/web.yaml:kind: Deployment\n"},
		{name: "grep missing file", script: "grep x nope", wantCode: 2, wantErr: "grep: nope: No such file or directory\n"},
		{name: "grep bad regexp", script: "grep -E '(' ", wantCode: 2, wantErr: "grep: Unmatched ( or \\(\n"},
		{name: "grep no pattern", script: "grep", wantCode: 2, wantErr: "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"},
		{name: "grep -q", files: files, script: "grep -q web pods.txt && echo found", wantOut: "found\n"},
		{name: "head", files: files, script: "head -n 2 pods.txt", wantOut: "NAME    READY   STATUS\nweb-1   1/1     Running\n"},
		{name: "head -N", files: files, script: "head -1 pods.txt", wantOut: "NAME    READY   STATUS\n"},
		{name: "head default", in: strings.Repeat("x\n", 12), script: "head | wc -l", wantOut: "10\n"},
		{name: "head bad number", script: "head -n x", wantCode: 1, wantErr: "head: invalid number of lines: 'x'\n"},
		{name: "tail", files: files, script: "tail -n 1 pods.txt", wantOut: "web-2   1/1     Running\n"},
		{name: "tail +N", files: files, script: "tail -n +2 pods.txt | wc -l", wantOut: "3\n"},
		{name: "head files", files: files, script: "head -n 1 pods.txt nope app/svc.yaml", wantCode: 1,
			wantOut: "==> pods.txt <==\nNAME    READY   STATUS\n\n==> app/svc.yaml <==\nkind: Service\n",
			wantErr: "head: cannot open 'nope' for reading: No such file or directory\n"},
		{name: "tail files", files: files, script: "tail -n 1 pods.txt pods.txt", wantOut: "==> pods.txt <==\nweb-2   1/1     Running\n\n==> pods.txt <==\nweb-2   1/1     Running\n"},
		{name: "tail missing", script: "tail nope", wantCode: 1, wantErr: "tail: cannot open 'nope' for reading: No such file or directory\n"},
		{name: "wc -l", files: files, script: "wc -l pods.txt", wantOut: "4 pods.txt\n"},
		{name: "wc stdin", in: "a b\nc\n", script: "wc", wantOut: "      2       3       6\n"},
		{name: "wc files", files: files, script: "wc app/svc.yaml app/web.yaml", wantOut: " 1  2 14 app/svc.yaml\n 1  2 17 app/web.yaml\n 2  4 31 total\n"},
		{name: "wc missing", script: "wc -l nope", wantCode: 1, wantErr: "wc: nope: No such file or directory\n"},
	})
}

// streamer writes a numbered line every few milliseconds until ctx is done
// or a write fails, like `kubectl get pods -w`.
func streamer(ctx context.Context, args []string, s Streams) int {
	for i := 1; ; i++ {
		if _, err := fmt.Fprintf(s.Out, "line %d\n", i); err != nil {
			return 1
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a pipeline's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A pipeline streams: grep prints while the watch still runs, and Ctrl-C
// (cancelling the context) ends every command of it and the rest of the
// script.
func TestPipelineStreamsAndCancels(t *testing.T) {
	sh := testShell(t)
	sh.Register("watch", "stream lines", streamer)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int)
	go func() {
		done <- sh.Run(ctx, "watch | grep 'line [0-9]*3$' | cat; echo not reached", Streams{Out: &out, ErrOut: &out})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "line 13\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the pipeline did not stream; output so far %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not end the pipeline")
	}
	if got := out.String(); !strings.HasPrefix(got, "line 3\nline 13\n") || strings.Contains(got, "not reached") {
		t.Errorf("output %q", got)
	}
}

// When the reader of a pipe ends, the writer's next write fails (sh:
// SIGPIPE), so `watch | head -n 2` ends by itself.
func TestPipelineBrokenPipe(t *testing.T) {
	sh := testShell(t)
	sh.Register("watch", "stream lines", streamer)
	var out bytes.Buffer
	done := make(chan int)
	go func() { done <- sh.Run(context.Background(), "watch | head -n 2", Streams{Out: &out}) }()
	select {
	case code := <-done:
		if code != 0 || out.String() != "line 1\nline 2\n" {
			t.Errorf("= %d %q", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch | head -n 2 did not end")
	}
}

// The status of the last Run is the next one's $?, as at a prompt.
func TestStatusCarriesOver(t *testing.T) {
	sh := testShell(t)
	var out bytes.Buffer
	sh.Run(context.Background(), "fail", Streams{Out: io.Discard, ErrOut: io.Discard})
	sh.Run(context.Background(), "echo $?", Streams{Out: &out})
	if out.String() != "3\n" {
		t.Errorf("$? after a failed Run = %q, want 3", out.String())
	}
}

func TestComplete(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"kubectl get pods", true},
		{"", true},
		{"echo 'open", false},
		{"echo \"open", false},
		{"echo 'a\nb'", true},
		{"echo a \\", false},
		{"echo a \\\nb", true},
		{"cat <<EOF > f.yaml", false},
		{"cat <<EOF > f.yaml\nkind: Pod", false},
		{"cat <<EOF > f.yaml\nkind: Pod\nEOF", true},
		{"cat <<'EOF'\nx\nEOF\n", true},
		{"cat <<-EOF\n\tx\n\tEOF", true},
		{"kubectl get pods |", false},
		{"kubectl get pods | \n grep web", true},
		{"true &&", false},
		{"false ||", false},
		{"a | | b", true}, // a syntax error: Run reports it
		{"echo # it's a comment", true},
		{"echo a#'b", false}, // not at a word's start: a quote
		{"cat <<EOF\nit's\nEOF", true},
		{"cat <<A <<B\na\nA\n", false},
		{"cat <<A <<B\na\nA\nb\nB", true},
		{"cat <<-EOF\n\tEOF", true},
		{"cat <<EOF\n EOF", false}, // not exactly EOF
		{"kubectl get pods |\n\n", false},
	}
	for _, tt := range tests {
		if got := Complete(tt.text); got != tt.want {
			t.Errorf("Complete(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestCommands(t *testing.T) {
	sh := testShell(t)
	got := strings.Join(sh.Commands(), " ")
	if want := "args cat echo fail false grep head ls rm tail true wc"; got != want {
		t.Errorf("Commands() = %s, want %s", got, want)
	}
}
