package kubectl

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		line string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"   \t ", nil, ""},
		{"get pods", []string{"get", "pods"}, ""},
		{"  get   pods  -o   wide ", []string{"get", "pods", "-o", "wide"}, ""},
		{`get pods -l 'app in (web, api)'`, []string{"get", "pods", "-l", "app in (web, api)"}, ""},
		{`-l "app=web"`, []string{"-l", "app=web"}, ""},
		{`a'b'"c"d`, []string{"abcd"}, ""},
		{`'' ""`, []string{"", ""}, ""},
		{`--field-selector=status.phase!=Running`, []string{"--field-selector=status.phase!=Running"}, ""},
		{`a\ b`, []string{"a b"}, ""},
		{`"a \"quoted\" \\ \$HOME \x"`, []string{`a "quoted" \ $HOME \x`}, ""},
		{`'no \escapes in $single'`, []string{`no \escapes in $single`}, ""},
		{"one\\\ntwo", []string{"onetwo"}, ""},
		{"get pods # list them", []string{"get", "pods"}, ""},
		{"a#b", []string{"a#b"}, ""},
		{"こんにちは 'せかい'", []string{"こんにちは", "せかい"}, ""},
		{`get 'pods`, nil, "unterminated single quote"},
		{`get "pods`, nil, "unterminated double quote"},
		{`get "pods\"`, nil, "unterminated double quote"},
		{`get pods\`, nil, "unexpected end of input after backslash"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			got, err := SplitWords(tc.line)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("SplitWords(%q) error = %v, want %q", tc.line, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("SplitWords(%q): %v", tc.line, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("SplitWords(%q) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}

// shellQuote quotes a word for a POSIX shell: inside single quotes
// everything is literal, and a single quote is written '\”.
func shellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// FuzzSplitWords splits arbitrary console lines. It never panics; an error
// is one of the three documented ones; and the words it returns, quoted the
// way a shell user would quote them and joined with blanks, split back into
// the same words (so what the console ran is what the learner typed).
func FuzzSplitWords(f *testing.F) {
	for _, seed := range []string{
		`kubectl get pods -o wide`,
		`kubectl run web --image=hello -- sh -c 'echo "hi $NAME"; sleep 1'`,
		`kubectl annotate pod web note="a \"quoted\" value" --overwrite`,
		`a'b'"c" '' "" \ x`,
		"kubectl exec web -- \\\n ls # a comment",
		`echo 'unterminated`, `echo "unterminated`, `trailing\`,
		"tabs\tand\r\nnewlines", `# only a comment`, `"\$x \` + "`" + `y\` + "`" + ` \\ \a"`,
		"日本語 'ポッド' \"一覧\"", "\xff\xfe invalid utf-8",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitWords(line)
		if err != nil {
			switch err.Error() {
			case "unexpected end of input after backslash", "unterminated single quote", "unterminated double quote":
			default:
				t.Fatalf("SplitWords(%q): unexpected error %v", line, err)
			}
			if words != nil {
				t.Fatalf("SplitWords(%q) returned words with an error: %q", line, words)
			}
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			if !utf8.ValidString(w) {
				t.Fatalf("SplitWords(%q): word %q is not UTF-8", line, w)
			}
			quoted[i] = shellQuote(w)
		}
		again, err := SplitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting %q: %v", quoted, err)
		}
		if !slices.Equal(again, words) && !(len(again) == 0 && len(words) == 0) {
			t.Fatalf("SplitWords(%q) = %q, but quoting them splits into %q", line, words, again)
		}
	})
}
