package kubectl

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
)

// execResult is kubetab's pods/exec answer: the command's output and exit
// code at once (core/apiserver's ExecResult). Upstream kubectl streams
// stdin, stdout and stderr over a WebSocket or SPDY connection instead.
type execResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
}

// newExecCommand is `kubectl exec` (upstream pkg/cmd/exec): run a command in
// a container. The API server hands it to the kubelet of the pod's node,
// which runs a second instance of the container's image with the
// container's environment and mounts (the CRI's ExecSync).
func (s *session) newExecCommand() *cobra.Command {
	var container string
	var stdin, tty, quiet bool
	podTimeout := time.Minute
	cmd := &cobra.Command{
		Use:                   "exec (POD | TYPE/NAME) [-c CONTAINER] -- COMMAND [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Execute a command in a container",
		Long:                  "Execute a command in a container.",
		Example: `  # Get output from running the 'web --unhealthy' command in pod web-x, using the first container by default
  kubectl exec web-x -- web --unhealthy

  # Run 'hello --ticks=0' in container hello of pod web-x
  kubectl exec web-x -c hello -- hello --ticks=0

  # Run 'ls' in the first container of the first pod of deployment web
  kubectl exec deploy/web -- ls`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if len(args) == 0 {
				return usageErrorf(cmd, "exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
			}
			if dash < 0 && len(args) > 1 || dash > 1 {
				return usageErrorf(cmd, "exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
			}
			if dash < 0 || dash == len(args) {
				return usageErrorf(cmd, "you must specify at least one command for the container")
			}
			if dash != 1 {
				return usageErrorf(cmd, "exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
			}
			pod, err := s.execPod(args[0], podTimeout)
			if err != nil {
				return err
			}
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				return fmt.Errorf("cannot exec into a container in a completed pod; current phase is %s", pod.Status.Phase)
			}
			if container == "" {
				c, err := defaultContainer(pod, quiet, s.errOut())
				if err != nil {
					return err
				}
				container = c
			}
			q := url.Values{"command": args[1:], "container": {container}}
			podsRes, err := s.resolve("pods")
			if err != nil {
				return err
			}
			if stdin {
				return s.execStream(podsRes.path(pod.Namespace, pod.Name, "exec"), q, &streamOptions{stdin: stdin, tty: tty, quiet: quiet})
			}
			var res execResult
			if err := s.client.into(s.ctx, request{method: "POST", path: podsRes.path(pod.Namespace, pod.Name, "exec"), query: q}, &res); err != nil {
				return err
			}
			_, _ = io.WriteString(s.out(), res.Stdout)
			_, _ = io.WriteString(s.errOut(), res.Stderr)
			if res.ExitCode != 0 {
				// kubectl's wording, and its exit code is the command's.
				fmt.Fprintf(s.errOut(), "command terminated with exit code %d\n", res.ExitCode)
				return &exitCodeError{code: res.ExitCode}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	cmd.Flags().BoolVarP(&stdin, "stdin", "i", false, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&tty, "tty", "t", false, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "Only print output from the remote session")
	cmd.Flags().DurationVar(&podTimeout, "pod-running-timeout", time.Minute, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	return cmd
}

// execPod is the pod `kubectl exec` runs in: the named pod, or for TYPE/NAME
// of a workload (deployment, replica set, job, service ...) its first pod by
// the workload's selector, the most active first, waiting up to timeout for
// one (upstream polymorphichelpers attachablePodForObject).
func (s *session) execPod(arg string, timeout time.Duration) (*corev1.Pod, error) {
	pods, err := s.resolve("pods")
	if err != nil {
		return nil, err
	}
	typ, name, typed := strings.Cut(arg, "/")
	if !typed {
		typ, name = "pods", arg
	}
	res, err := s.resolve(typ)
	if err != nil {
		return nil, err
	}
	if res.Kind == "Pod" {
		return s.getPod(pods, name)
	}
	obj, err := s.getObject(res, s.namespaceFor(res, false), name)
	if err != nil {
		return nil, err
	}
	sel, err := attachSelector(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot attach to *%s.%s: %v", groupVersionPkg(res), res.Kind, err)
	}
	l, err := s.podsMatching(sel, timeout, true)
	if err != nil {
		return nil, err
	}
	return l[0], nil
}

// attachSelector is workloadSelector with upstream's wording for the kinds
// it cannot pick pods of (polymorphichelpers SelectorsForObject).
func attachSelector(obj map[string]any) (string, error) {
	kind, _ := obj["kind"].(string)
	switch kind {
	case "ReplicationController", "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
	case "Service":
		if len(nestedMap(obj, "spec", "selector")) == 0 {
			name, _ := nestedMap(obj, "metadata")["name"].(string)
			return "", fmt.Errorf("invalid service '%s': Service is defined without a selector", name)
		}
	default:
		return "", fmt.Errorf("selector for *%s.%s not implemented", groupVersionPkgOf(obj), kind)
	}
	return workloadSelector(obj)
}

// groupVersionPkg names the Go package of a kind the way upstream's %T does
// (v1, apps.v1 → "v1", batch/v1 → "v1"): the version.
func groupVersionPkg(res apiResource) string { return res.Version }

func groupVersionPkgOf(obj map[string]any) string {
	av, _ := obj["apiVersion"].(string)
	if i := strings.LastIndex(av, "/"); i >= 0 {
		av = av[i+1:]
	}
	return av
}

// defaultContainer is the container exec runs in without -c: the
// default-container annotation's, else the first, saying so when the pod
// has others (upstream podcmd.FindOrDefaultContainerByName).
func defaultContainer(pod *corev1.Pod, quiet bool, warn io.Writer) (string, error) {
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s/%s does not have any containers", pod.Namespace, pod.Name)
	}
	if d := pod.Annotations[defaultContainerAnnotation]; d != "" && findContainer(pod, d) {
		return d, nil
	}
	name := pod.Spec.Containers[0].Name
	if !quiet && (len(pod.Spec.Containers) > 1 || len(pod.Spec.InitContainers) > 0 || len(pod.Spec.EphemeralContainers) > 0) {
		fmt.Fprintf(warn, "Defaulted container %q out of: %s\n", name, allContainerNames(pod))
	}
	return name, nil
}

// execStream is exec -i (and -it): the command's streams stay open while it
// runs, stdin from kubectl's, on the console's terminal in raw mode with
// -t (stream.go).
func (s *session) execStream(path string, q url.Values, o *streamOptions) error {
	term := s.setupTTY(o)
	var errOut io.Writer = s.errOut()
	restore := func() {}
	if term != nil {
		var err error
		if restore, err = term.MakeRaw(); err != nil {
			return err
		}
		errOut = nil // a terminal has one stream: stderr comes on stdout
	}
	code, err := s.streamSession(path, q, s.streams.In, s.out(), errOut, term)
	restore() // the terminal as it was, before kubectl's own messages
	if err != nil {
		return err
	}
	if code != 0 {
		fmt.Fprintf(s.errOut(), "command terminated with exit code %d\n", code)
		return &exitCodeError{code: code}
	}
	return nil
}
