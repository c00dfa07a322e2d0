package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/internal/tty"
)

func TestPodExec(t *testing.T) {
	type call struct {
		container string
		cmd       []string
		stdin     string
	}
	var got []call
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.Exec = ExecProviderFunc(func(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
			in := ""
			if stdin != nil {
				b, _ := io.ReadAll(stdin)
				in = string(b)
			}
			got = append(got, call{container, cmd, in})
			if cmd[0] == "missing" {
				return 0, apierrors.NewBadRequest(`container not found ("hello")`)
			}
			fmt.Fprintf(stdout, "out %s\n", strings.Join(cmd, " "))
			fmt.Fprintln(stderr, "err")
			if cmd[0] == "fail" {
				return 3, nil
			}
			return 0, nil
		})
	})
	pods := reg.MustLookup("", "pods")
	for _, p := range []*corev1.Pod{
		{Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}},
		{Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "a", Image: "hello"}, {Name: "b", Image: "hello"}}}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}},
	} {
		p.Namespace = "default"
		p.Name = map[int]string{1: "one", 2: "two"}[len(p.Spec.Containers)]
		if p.Spec.NodeName == "" {
			p.Name = "pending"
		}
		if _, err := pods.Create(context.Background(), "default", p, registry.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base := srv.URL + "/api/v1/namespaces/default/pods/"
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		code                     int
		want                     string // in the body
	}{
		{"runs", "POST", "one/exec?command=ls&command=-l", "", nil, 200, `"stdout":"out ls -l\n","stderr":"err\n","exitCode":0,"status":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`},
		{"non-zero exit", "POST", "one/exec?command=fail", "", nil, 200, `"exitCode":3,"status":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [fail], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}`},
		{"stdout off", "POST", "one/exec?command=ls&stdout=false", "", nil, 200, `"stdout":"","stderr":"err\n"`},
		{"stdin", "POST", "one/exec?command=cat&stdin=true", "hi", nil, 200, `"stdout":"out cat\n"`},
		{"named container", "POST", "two/exec?container=b&command=ls", "", nil, 200, `"exitCode":0`},
		{"container required", "POST", "two/exec?command=ls", "", nil, 400, `a container name must be specified for pod two, choose one of: [a b]`},
		{"bad container", "POST", "one/exec?container=x&command=ls", "", nil, 400, `container x is not valid for pod one`},
		{"no command", "POST", "one/exec", "", nil, 400, `you must specify at least 1 command`},
		{"not scheduled", "POST", "pending/exec?command=ls", "", nil, 400, `pod pending does not have a host assigned`},
		{"no such pod", "POST", "nope/exec?command=ls", "", nil, 404, `pods \"nope\" not found`},
		{"provider error", "POST", "one/exec?command=missing", "", nil, 400, `container not found (\"hello\")`},
		{"GET", "GET", "one/exec?command=ls", "", nil, 405, `"reason":"MethodNotAllowed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := do(t, tt.method, base+tt.path, "", tt.body, tt.hdr...)
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%s %s = %d %s\nwant %d with %s", tt.method, tt.path, code, body, tt.code, tt.want)
			}
		})
	}
	want := []call{
		{"hello", []string{"ls", "-l"}, ""}, {"hello", []string{"fail"}, ""}, {"hello", []string{"ls"}, ""},
		{"hello", []string{"cat"}, "hi"}, {"b", []string{"ls"}, ""}, {"hello", []string{"missing"}, ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls = %v, want %v", got, want)
	}

	// A completed pod cannot be exec'd into.
	obj, _ := pods.Get(context.Background(), "default", "one")
	p := obj.(*corev1.Pod)
	p.Status.Phase = corev1.PodSucceeded
	if _, err := pods.Update(context.Background(), p, registry.UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := do(t, "POST", base+"one/exec?command=ls", "", ""); code != 400 ||
		!strings.Contains(body, "cannot exec into a container in a completed pod; current phase is Succeeded") {
		t.Errorf("exec into a completed pod = %d %s", code, body)
	}
	var res ExecResult
	_, body, _ := do(t, "POST", base+"two/exec?container=a&command=x", "", "")
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Stdout != "out x\n" || res.Status.Status != "Success" {
		t.Errorf("decoded result = %+v, %v", res, err)
	}
}

// execFixture is an API server whose ExecProvider runs a few made-up
// commands in pod "one" (container "hello", on node-1):
//
//	cat          copies stdin to stdout
//	ls ARGS      prints "out ls ARGS" and "err" on stderr, exits 0
//	fail         the same, exits 3
//	missing      cannot run: `container not found ("hello")`, a status error
//	broken       cannot run: a plain error
//	big          writes 100,000 bytes to stdout
//	step         writes "first", waits for the test's release, writes "second"
//	wait         runs until its context ends, then reports that on gone
type execFixture struct {
	base    string // http://.../api/v1/namespaces/default/pods/
	release chan struct{}
	gone    chan error
}

func newExecFixture(t *testing.T) *execFixture {
	t.Helper()
	f := &execFixture{release: make(chan struct{}), gone: make(chan error, 1)}
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.Exec = ExecProviderFunc(func(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
			switch cmd[0] {
			case "cat":
				if stdin == nil {
					return 0, nil
				}
				_, err := io.Copy(stdout, stdin)
				return 0, err
			case "missing":
				return 0, apierrors.NewBadRequest(fmt.Sprintf("container not found (%q)", container))
			case "broken":
				return 0, errors.New("boom")
			case "big":
				_, err := stdout.Write(bytes.Repeat([]byte("0123456789"), 10_000))
				return 0, err
			case "step":
				fmt.Fprintln(stdout, "first")
				<-f.release
				fmt.Fprintln(stdout, "second")
				return 0, nil
			case "term":
				// Reports the terminal the request asked for, and its
				// first size.
				t := tty.From(ctx)
				if t == nil {
					fmt.Fprintln(stdout, "no terminal")
					return 0, nil
				}
				sz := <-t.Resize
				fmt.Fprintf(stdout, "terminal %dx%d\n", sz.Width, sz.Height)
				return 0, nil
			case "wait":
				<-ctx.Done()
				f.gone <- ctx.Err()
				return 0, ctx.Err()
			}
			fmt.Fprintf(stdout, "out %s\n", strings.Join(cmd, " "))
			fmt.Fprintln(stderr, "err")
			if cmd[0] == "fail" {
				return 3, nil
			}
			return 0, nil
		})
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}
	if _, err := reg.MustLookup("", "pods").Create(context.Background(), "default", pod, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.base = srv.URL + "/api/v1/namespaces/default/pods/"
	return f
}

// TestPodAttach: pods/attach finds the pod, then refuses with a reason
// kubectl prints (and kubectl run --attach falls back to the logs on).
func TestPodAttach(t *testing.T) {
	f := newExecFixture(t)
	for _, tt := range []struct {
		method, path string
		code         int
		want         string
	}{
		{"POST", "one/attach?stdout=true", 400, `"message":"kubetab cannot attach to a running container for this request: attach streams over a WebSocket`},
		{"GET", "one/attach?stdin=true&tty=true", 400, `"reason":"BadRequest"`},
		{"POST", "nope/attach", 404, `"message":"pods \"nope\" not found"`},
		{"PUT", "one/attach", 405, `"reason":"MethodNotAllowed"`},
	} {
		code, body, _ := do(t, tt.method, f.base+tt.path, "", "")
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s = %d %s\nwant %d with %s", tt.method, tt.path, code, body, tt.code, tt.want)
		}
	}
}
