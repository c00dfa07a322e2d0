package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ExecProvider runs a command in a container and waits for it; the kubelet
// of the pod's node implements it (upstream: kube-apiserver proxies
// pods/exec to that kubelet's /exec endpoint). The pod is bound to a node and
// the container is in its spec. exitCode is the command's; err says why it
// could not run (a Kubernetes status error is answered as is).
type ExecProvider interface {
	Exec(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int, err error)
}

// ExecProviderFunc adapts a function to ExecProvider.
type ExecProviderFunc func(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error)

// Exec calls f.
func (f ExecProviderFunc) Exec(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return f(ctx, pod, container, cmd, stdin, stdout, stderr)
}

// execPattern is where pods/exec is served.
const execPattern = "/api/v1/namespaces/{namespace}/pods/{name}/exec"

// ExecResult is the answer to a pods/exec POST: kubetab serves exec without
// streaming (see podExec). Status is what upstream sends on the stream's
// error channel when the command ends: Success, or Failure with reason
// NonZeroExitCode and the exit code as the cause of type ExitCode, from which
// kubectl prints "command terminated with exit code 3".
type ExecResult struct {
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	ExitCode int           `json:"exitCode"`
	Status   metav1.Status `json:"status"`
}

// podExec serves
//
//	POST /api/v1/namespaces/{namespace}/pods/{name}/exec?container=c&command=ls&command=-l[&stdin=true]
//
// with the command's stdin as the request body, and answers 200 with an
// ExecResult once the command has ended, whatever its exit code.
//
// Upstream kubectl exec upgrades this request to a stream (WebSocket with
// the v5.channel.k8s.io protocol, or SPDY/3.1) and relays stdin, stdout,
// stderr and terminal resizes while the command runs; kubetab's in-browser
// kubectl uses the plain POST instead, and an upgrade request is refused
// with 400 (so the real kubectl's exec does not work against `kubetab
// cluster`).
func (s *Server) podExec(w http.ResponseWriter, r *http.Request) {
	gr := schema.GroupResource{Resource: "pods"}
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	if r.Header.Get("Upgrade") != "" || r.Header.Get("Connection") == "Upgrade" {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("kubetab serves pods/exec without streaming: upgrading to %q is not supported; POST the command instead", r.Header.Get("Upgrade"))))
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/exec"}, strings.ToLower(r.Method)))
		return
	}
	st, ok := s.reg.Lookup(gr)
	if !ok {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	obj, err := st.Get(r.Context(), namespace, name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	pod := obj.(*corev1.Pod)
	q := r.URL.Query()
	cmd := q["command"]
	container := q.Get("container")
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names)))
			return
		}
		container = pod.Spec.Containers[0].Name
	}
	valid := false
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		valid = valid || c.Name == container
	}
	switch {
	case len(cmd) == 0:
		err = apierrors.NewBadRequest("you must specify at least 1 command")
	case !valid:
		err = apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		err = apierrors.NewBadRequest(fmt.Sprintf("cannot exec into a container in a completed pod; current phase is %s", pod.Status.Phase))
	case pod.Spec.NodeName == "":
		err = apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	case s.cfg.Exec == nil:
		err = apierrors.NewServiceUnavailable("no kubelet serves exec")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	var stdin io.Reader
	if q.Get("stdin") == "true" || q.Get("stdin") == "1" {
		stdin = io.LimitReader(r.Body, s.cfg.MaxRequestBodyBytes)
	}
	var stdout, stderr bytes.Buffer
	code, err := s.cfg.Exec.Exec(r.Context(), pod, container, cmd, stdin, &stdout, &stderr)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); !ok {
			err = apierrors.NewInternalError(err)
		}
		writeError(w, r, err)
		return
	}
	res := ExecResult{ExitCode: code, Status: metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess}}
	if q.Get("stdout") != "false" && q.Get("stdout") != "0" {
		res.Stdout = stdout.String()
	}
	if q.Get("stderr") != "false" && q.Get("stderr") != "0" {
		res.Stderr = stderr.String()
	}
	if code != 0 {
		res.Status = metav1.Status{
			TypeMeta: res.Status.TypeMeta,
			Status:   metav1.StatusFailure,
			Reason:   "NonZeroExitCode",
			Message:  fmt.Sprintf("command terminated with non-zero exit code: error executing command %v, exit code %d", cmd, code),
			Details:  &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(code)}}},
		}
	}
	writeJSON(w, http.StatusOK, res)
}
