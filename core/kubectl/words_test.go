package kubectl

import (
	"reflect"
	"testing"
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

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`get pods -l "a=b"`, `a'b'\ c`, `"x\"y"`, "#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitWords(line)
		if err != nil {
			return
		}
		// Quoting each word back in single quotes must give the words again.
		var b []byte
		for _, w := range words {
			b = append(b, '\'')
			for _, r := range w {
				if r == '\'' {
					b = append(b, `'\''`...)
				} else {
					b = append(b, string(r)...)
				}
			}
			b = append(b, '\'', ' ')
		}
		again, err := SplitWords(string(b))
		if err != nil || (len(words) > 0 && !reflect.DeepEqual(again, words)) {
			t.Fatalf("round trip of %q: %q -> %q (%v)", line, words, again, err)
		}
	})
}
