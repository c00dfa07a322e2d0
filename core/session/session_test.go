package session_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
	"github.com/kubetab/kubetab/wasm/images"
)

// newSession starts a session that stops when the test ends.
func newSession(t *testing.T, cfg session.Config) *session.Session {
	t.Helper()
	if cfg.Images == nil {
		cfg.Images = images.New()
	}
	cfg.WaitForCaches = true
	s, err := session.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// run runs console input and returns what it printed.
func run(t *testing.T, s *session.Session, input string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code = s.Run(ctx, input, console.Streams{Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// mustRun runs console input that must succeed.
func mustRun(t *testing.T, s *session.Session, input string) string {
	t.Helper()
	out, errOut, code := run(t, s, input)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", input, code, out, errOut)
	}
	return out
}

// eventually runs a console line until its output contains want.
func eventually(t *testing.T, s *session.Session, line, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, errOut, _ := run(t, s, line)
		if strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q; last:\n%s%s", line, want, out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 1
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: hello
        image: hello
`

// kubectl -f reads the console's files, those the page or a lesson put
// there included, and a missing one answers as upstream kubectl does.
func TestKubectlReadsTheConsoleFiles(t *testing.T) {
	files := console.NewFiles()
	s := newSession(t, session.Config{Files: files})
	if s.Files() != files {
		t.Fatal("Files() is not the Config's Files")
	}
	if err := files.WriteFile("app/d.yaml", []byte(deployment)); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "kubectl apply -f app/"); got != "deployment.apps/d created\n" {
		t.Errorf("apply -f app/ printed %q", got)
	}
	eventually(t, s, "kubectl get deploy d -o jsonpath={.status.readyReplicas}", "1")

	_, errOut, code := run(t, s, "kubectl apply -f my-app.yaml")
	if code != 1 || errOut != "error: the path \"my-app.yaml\" does not exist\n" {
		t.Errorf("apply -f my-app.yaml = %d %q", code, errOut)
	}
}
