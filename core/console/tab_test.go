package console

import (
	"context"
	"reflect"
	"testing"
)

func TestTabWords(t *testing.T) {
	for _, tc := range []struct {
		before   string
		words    []string
		raw      string
		text     string
		quote    byte
		redirect bool
	}{
		{"", nil, "", "", 0, false},
		{"kubectl get po", []string{"kubectl", "get"}, "po", "po", 0, false},
		{"kubectl get pods ", []string{"kubectl", "get", "pods"}, "", "", 0, false},
		{"echo 'a b' \"c", []string{"echo", "a b"}, `"c`, "c", '"', false},
		{`cat my\ fi`, []string{"cat"}, `my\ fi`, "my fi", 0, false},
		{"kubectl get pods | grep w", []string{"grep"}, "w", "w", 0, false},
		{"true && kubectl lo", []string{"kubectl"}, "lo", "lo", 0, false},
		{"kubectl get pods > ou", []string{"kubectl", "get", "pods"}, "ou", "ou", 0, true},
		{"kubectl get pods 2>&1 | gre", nil, "gre", "gre", 0, false},
		{"kubectl get pods 2>&1 ", []string{"kubectl", "get", "pods"}, "", "", 0, false},
		{"cat <<EOF > f.yaml\nkind: Pod\nEOF\nkubectl apply -f f", []string{"kubectl", "apply", "-f"}, "f", "f", 0, false},
		{"kubectl get \\\npods -n d", []string{"kubectl", "get", "pods", "-n"}, "d", "d", 0, false},
	} {
		words, cur, quote, redirect := tabWords(tc.before)
		if !reflect.DeepEqual(words, tc.words) || cur.raw != tc.raw || cur.text != tc.text || quote != tc.quote || redirect != tc.redirect {
			t.Errorf("tabWords(%q) = %q, %q/%q, %q, %v; want %q, %q/%q, %q, %v", tc.before, words, cur.raw, cur.text, quote, redirect, tc.words, tc.raw, tc.text, tc.quote, tc.redirect)
		}
	}
}

func TestTab(t *testing.T) {
	s, _ := New(Config{})
	for _, f := range []string{"web.yaml", "web.json", "my file.txt", "app/a.yaml", "app/b.yaml"} {
		if err := s.Files().WriteFile(f, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	s.Register("kubectl", "", func(context.Context, []string, Streams) int { return 0 })
	s.RegisterCompleter("kubectl", func(_ context.Context, args []string, toComplete string) Completion {
		if len(args) > 0 && args[len(args)-1] == "-f" {
			return Completion{Files: true, Exts: []string{"yaml"}}
		}
		return Completion{Candidates: []string{"get", "logs", "label", "pods/"}}
	})
	for _, tc := range []struct {
		before, insert string
		candidates     []string
	}{
		{"ku", "kubectl ", []string{"kubectl"}},
		{"l", "ls ", []string{"ls"}},
		{"kubectl l", "l", []string{"logs", "label"}},
		{"kubectl la", "label ", []string{"label"}},
		{"kubectl po", "pods/", []string{"pods/"}},
		{"kubectl apply -f ", "", []string{"app/", "web.yaml"}},
		{"kubectl apply -f a", "app/", []string{"app/"}},
		{"kubectl apply -f app/", "app/", []string{"app/a.yaml", "app/b.yaml"}},
		{"cat my", `my\ file.txt `, []string{"my file.txt"}},
		{"cat 'my", `'my file.txt' `, []string{"my file.txt"}},
		{"cat \"my", `"my file.txt" `, []string{"my file.txt"}},
		{"cat web.", "web.", []string{"web.json", "web.yaml"}},
		{"cat nope", "nope", nil},
		{"echo hi > my", `my\ file.txt `, []string{"my file.txt"}},
		{"he", "he", []string{"head", "help"}},
		{"hel", "help ", []string{"help"}},
	} {
		got := s.Tab(context.Background(), tc.before)
		if got.Insert != tc.insert || !reflect.DeepEqual(got.Candidates, tc.candidates) {
			t.Errorf("Tab(%q) = %q %q, want %q %q", tc.before, got.Insert, got.Candidates, tc.insert, tc.candidates)
		}
	}
}
