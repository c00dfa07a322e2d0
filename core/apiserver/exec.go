package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/remotecommand"

	"github.com/kubetab/kubetab/core/internal/capped"
)

// ExecProvider runs a command in a container and waits for it; the kubelet
// of the pod's node implements it (upstream: kube-apiserver proxies
// pods/exec to that kubelet's /exec endpoint). The pod is bound to a node and
// the container is in its spec. exitCode is the command's; err says why it
// could not run (a Kubernetes status error is answered as is).
//
// stdin is nil unless the client asked for it; it ends (io.EOF) when the
// client closes its stdin. Over a WebSocket (exec_stream.go) every write to
// stdout and stderr goes to the client at once, so a provider that writes as
// the command runs is streamed; ctx ends when the client goes away.
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

// ExecResult is the answer to a pods/exec POST, exec without streaming (see
// podExec). Status is what the WebSocket form sends on its error channel
// when the command ends (exitStatus): Success, or Failure with reason
// NonZeroExitCode and the exit code as the cause of type ExitCode, from which
// kubectl prints "command terminated with exit code 3".
type ExecResult struct {
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	ExitCode int           `json:"exitCode"`
	Status   metav1.Status `json:"status"`
}

// podExec serves pods/exec, in two forms:
//
//	POST /api/v1/namespaces/{namespace}/pods/{name}/exec?container=c&command=ls&command=-l[&stdin=true]
//
// with the command's stdin as the request body, answers 200 with an
// ExecResult once the command has ended, whatever its exit code: kubetab's
// in-browser kubectl uses this form.
//
//	GET  /api/v1/namespaces/{namespace}/pods/{name}/exec?command=ls&stdin=true&stdout=true&stderr=true
//	Connection: Upgrade
//	Upgrade: websocket
//	Sec-WebSocket-Protocol: v5.channel.k8s.io
//
// is what upstream kubectl exec (v1.30 and later) sends: the request is
// upgraded to a WebSocket that carries stdin, stdout, stderr, the final
// status and terminal resizes while the command runs (exec_stream.go; the
// browser build refuses it with 400). Older kubectls ask for SPDY/3.1
// instead, which kubetab does not speak: 400.
//
// A third form, POST with Content-Type application/vnd.kubetab.channels,
// carries the WebSocket's messages on the request and response bodies: the
// in-process kubectl's interactive exec (exec_frames.go).
//
// Every way the pod, container and command are checked first, as
// kube-apiserver's pods/exec does before it dials the kubelet, so a bad
// request is a plain HTTP error (kubectl then prints "Error from server
// (BadRequest): container x is not valid for pod web").
func (s *Server) podExec(w http.ResponseWriter, r *http.Request) {
	upgrade := isUpgrade(r)
	if r.Method != http.MethodPost && !(r.Method == http.MethodGet && upgrade) {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/exec"}, strings.ToLower(r.Method)))
		return
	}
	pod, container, cmd, err := s.execTarget(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if upgrade {
		s.execUpgrade(w, r, pod, container, cmd)
		return
	}
	if isChannelsRequest(r) {
		s.execChannels(w, r, pod, container, cmd) // kubetab's kubectl, interactive (exec_frames.go)
		return
	}
	q := r.URL.Query()
	var stdin io.Reader
	if execOption(q, "stdin", false) {
		stdin = io.LimitReader(r.Body, s.cfg.MaxRequestBodyBytes)
	}
	// The answer holds the output whole, so it is bounded: a command that
	// prints without end would otherwise fill the tab's memory.
	stdout, stderr := &capped.Buffer{Max: maxExecAnswerOutput}, &capped.Buffer{Max: maxExecAnswerOutput}
	code, err := s.cfg.Exec.Exec(r.Context(), pod, container, cmd, stdin, stdout, stderr)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); !ok {
			err = apierrors.NewInternalError(err)
		}
		writeError(w, r, err)
		return
	}
	res := ExecResult{ExitCode: code, Status: exitStatus(cmd, code)}
	if execOption(q, "stdout", true) {
		res.Stdout = stdout.String()
	}
	if execOption(q, "stderr", true) {
		res.Stderr = stderr.String()
		for _, c := range []*capped.Buffer{stdout, stderr} {
			if c.Dropped > 0 {
				res.Stderr += fmt.Sprintf("kubetab: %d bytes of output past %d MiB were dropped\n", c.Dropped, maxExecAnswerOutput>>20)
			}
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// maxExecAnswerOutput bounds each stream of a non-streaming exec's answer.
const maxExecAnswerOutput = 4 << 20

// requestPod is the pod a pods/{name}/<subresource> request names.
func (s *Server) requestPod(r *http.Request) (*corev1.Pod, error) {
	st, ok := s.reg.Lookup(schema.GroupResource{Resource: "pods"})
	if !ok {
		return nil, notFoundPath(r.URL.Path)
	}
	obj, err := st.Get(r.Context(), r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// execTarget reads the pod, container and command of a pods/exec request
// and checks them: the pod exists and runs on a node, the container is in
// its spec (the only one when none is named), the command is not empty.
func (s *Server) execTarget(r *http.Request) (pod *corev1.Pod, container string, cmd []string, err error) {
	pod, err = s.requestPod(r)
	if err != nil {
		return nil, "", nil, err
	}
	q := r.URL.Query()
	cmd = q["command"]
	container = q.Get("container")
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			return nil, "", nil, apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
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
		return nil, "", nil, err
	}
	return pod, container, cmd, nil
}

// exitStatus is the status that ends an exec, as the kubelet reports it on
// the stream's error channel: Success for exit code 0; otherwise Failure
// with reason NonZeroExitCode and the code as a cause of type ExitCode, from
// which kubectl prints "command terminated with exit code 3" and exits 3.
func exitStatus(cmd []string, code int) metav1.Status {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess}
	if code != 0 {
		st.Status = metav1.StatusFailure
		st.Reason = remotecommand.NonZeroExitCodeReason
		st.Message = fmt.Sprintf("command terminated with non-zero exit code: error executing command %v, exit code %d", cmd, code)
		st.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: strconv.Itoa(code)}}}
	}
	return st
}

// isUpgrade reports whether r asks to switch protocols (RFC 9110 section
// 7.8): "Connection: Upgrade" (a comma-separated list, any case) or an
// Upgrade header.
func isUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return true
	}
	for _, v := range r.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// execOption reads a boolean of PodExecOptions from the query (queryBool);
// absent is def. Upstream defaults stdout and stderr to true, stdin and tty
// to false.
func execOption(q url.Values, name string, def bool) bool {
	if v, ok := queryBool(q, name); ok {
		return v
	}
	return def
}
