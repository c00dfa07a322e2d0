package session_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
)

// TestTab: Tab over a live cluster answers as kubectl's bash completion
// does (cobra's __complete): commands, flags, resource types, the names of
// the objects there are now, namespaces, nodes, containers and files.
func TestTab(t *testing.T) {
	s := newSession(t, session.Config{})
	mustRun(t, s, "kubectl create deployment web --image=hello --replicas=2")
	mustRun(t, s, "kubectl create namespace team-a")
	mustRun(t, s, "cat <<EOF > web.yaml\nx\nEOF\ncat <<EOF > notes.txt\nx\nEOF\ncat <<EOF > app/svc.yaml\nx\nEOF")
	// The pods' names are random: wait for two, then read them.
	var pods []string
	deadline := time.Now().Add(30 * time.Second)
	for len(pods) < 2 {
		out, _, _ := run(t, s, "kubectl get pods -o name")
		pods = nil
		for _, l := range strings.Fields(out) {
			pods = append(pods, strings.TrimPrefix(l, "pod/"))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two pods: %v", pods)
		}
		time.Sleep(20 * time.Millisecond)
	}
	common := commonPrefix(pods)

	for _, tc := range []struct {
		before     string
		insert     string   // "" means: the Word as it was
		candidates []string // nil: do not check; []string{}: none
		has        []string // candidates must include these
	}{
		{before: "kubec", insert: "kubectl ", candidates: []string{"kubectl"}},
		{before: "kubectl lo", insert: "logs ", candidates: []string{"logs"}},
		{before: "kubectl logs web-", insert: common, candidates: pods},
		{before: "kubectl logs " + pods[0][:len(pods[0])-1], insert: pods[0] + " "},
		{before: "kubectl logs " + pods[0] + " ", insert: "hello ", candidates: []string{"hello"}},
		{before: "kubectl get deployments.apps w", insert: "web ", candidates: []string{"web"}},
		{before: "kubectl get deploy", has: []string{"deployments.apps", "deploy"}},
		{before: "kubectl get nodes no", insert: "node-", candidates: []string{"node-1", "node-2", "node-3"}},
		{before: "kubectl describe deployment/w", insert: "deployment/web ", candidates: []string{"deployment/web"}},
		{before: "kubectl get pods -n team", insert: "team-a ", candidates: []string{"team-a"}},
		{before: "kubectl get pods --namespace=kube-", insert: "--namespace=kube-", has: []string{"--namespace=kube-system"}},
		{before: "kubectl get pods -o w", insert: "wide ", candidates: []string{"wide"}},
		{before: "kubectl get pods --all-n", insert: "--all-namespaces ", candidates: []string{"--all-namespaces"}},
		{before: "kubectl apply -f ", candidates: []string{"app/", "web.yaml"}},
		{before: "kubectl apply -f w", insert: "web.yaml ", candidates: []string{"web.yaml"}},
		{before: "kubectl apply -f app/", insert: "app/svc.yaml ", candidates: []string{"app/svc.yaml"}},
		{before: "kubectl cordon node-2", insert: "node-2 ", candidates: []string{"node-2"}},
		// a required flag is offered first, as cobra does upstream
		{before: "kubectl create deployment ", insert: "--image ", candidates: []string{"--image"}},
		{before: "kubectl create deployment web --image=hello ", candidates: []string{}},
		{before: "kubectl scale dep", insert: "deployment ", candidates: []string{"deployment"}},
		{before: "kubectl rollout status deployment ", insert: "web ", candidates: []string{"web"}},
		{before: "kubectl scheduling explain web-", insert: common, candidates: pods},
		{before: "cat n", insert: "notes.txt ", candidates: []string{"notes.txt"}},
		{before: "kubectl get pods > n", insert: "notes.txt ", candidates: []string{"notes.txt"}},
		{before: "kubectl get pods | gr", insert: "grep ", candidates: []string{"grep"}},
		{before: "ssh node-3 ", insert: "systemctl ", candidates: []string{"systemctl"}},
		{before: "ssh node-3 systemctl st", insert: "st", candidates: []string{"start", "stop", "status"}},
		{before: "help no", insert: "node ", candidates: []string{"node"}},
		{before: "node remove node-1", insert: "node-1 ", candidates: []string{"node-1"}},
		{before: "trace we", insert: "web", has: []string{"web"}},
		{before: "kubectl get pods nope", insert: "nope", candidates: []string{}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		got := s.Shell().Tab(ctx, tc.before)
		cancel()
		want := tc.insert
		if want == "" {
			want = got.Word
		}
		if got.Insert != want {
			t.Errorf("%q: Insert = %q, want %q (candidates %q)", tc.before, got.Insert, want, got.Candidates)
		}
		if tc.candidates != nil && !reflect.DeepEqual(nonNil(got.Candidates), tc.candidates) {
			t.Errorf("%q: candidates = %q, want %q", tc.before, got.Candidates, tc.candidates)
		}
		for _, h := range tc.has {
			if !contains(got.Candidates, h) {
				t.Errorf("%q: candidates %q lack %q", tc.before, got.Candidates, h)
			}
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func commonPrefix(list []string) string {
	p := list[0]
	for _, l := range list[1:] {
		for !strings.HasPrefix(l, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

var _ = console.Streams{}

// TestJapanese: with the page in Japanese, help and kubetab's own commands'
// help speak it; kubectl's output stays upstream's.
func TestJapanese(t *testing.T) {
	s := newSession(t, session.Config{})
	s.Shell().SetLang("ja")
	for _, tc := range []struct{ line, want string }{
		{"help", "このコンソールのコマンドです"},
		{"help", "クラスターを操作します"},
		{"help", "ファイルを表示します"},
		{"cat --help", "使い方: cat"},
		{"node --help", "ノード（kubelet が動くマシン）"},
		{"trace --help", "リクエストがクラスターの中をどう進むか"},
		{"kubectl get nodes", "NAME"},
	} {
		out := mustRun(t, s, tc.line)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s in Japanese: no %q in\n%s", tc.line, tc.want, out)
		}
	}
	// scheduling explain's prose, once the pod is bound.
	mustRun(t, s, "kubectl run solo --image=hello")
	eventually(t, s, "kubectl scheduling explain solo", "にスケジュールされました")
	s.Shell().SetLang("en")
	eventually(t, s, "kubectl scheduling explain solo", "Result:    Scheduled on node-")
	if out := mustRun(t, s, "help"); !strings.Contains(out, "The commands of this console") {
		t.Errorf("help in English:\n%s", out)
	}
}
