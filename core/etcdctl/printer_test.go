package etcdctl

import "testing"

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"k8s\x00\n\x0b\n\x02v1\x12\x03Pod", "k8s.\n.\n.v1..Pod"},
		{"\x1b[31mred\x1b[0m", ".[31mred.[0m"}, // no terminal escapes get through
		{"tab\tand ünïcode", "tab\tand ünïcode"},
		{"\xff\xfebad utf-8 \xc3", "..bad utf-8 ."},
		{"\x7f\u0085", ".."},
		{"", ""},
	} {
		if got := string(printable([]byte(tc.in))); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
