package kubectl

import (
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
)

// newAttachCommand is `kubectl attach` (upstream pkg/cmd/attach): join the
// standard streams of a container's own process, PID 1, while it runs. The
// API server hands the request to the kubelet of the pod's node, which
// joins the runtime's streams of that process (the CRI's Attach). With -i
// what is typed reaches the process when its spec says stdin: true; with
// -t, when its spec says tty: true, the console's terminal is in raw mode
// and the process's terminal does the echo and the line editing.
func (s *session) newAttachCommand() *cobra.Command {
	o := &attachOptions{podTimeout: time.Minute}
	cmd := &cobra.Command{
		Use:                   "attach (POD | TYPE/NAME) -c CONTAINER",
		DisableFlagsInUseLine: true,
		Short:                 "Attach to a running container",
		Long:                  "Attach to a process that is already running inside an existing container.",
		Example: `  # Get output from running pod web-x; use the 'kubectl.kubernetes.io/default-container' annotation
  # for selecting the container to be attached or the first container in the pod will be chosen
  kubectl attach web-x

  # Switch to raw terminal mode; sends stdin to 'sh' in pod debug
  # and sends stdout/stderr from 'sh' back to the client
  kubectl attach debug -c debug -i -t

  # Get output from the first pod of a replica set named web
  kubectl attach rs/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErrorf(cmd, "at least 1 argument is required for attach")
			case len(args) > 2:
				return usageErrorf(cmd, "expected POD, TYPE/NAME, or TYPE NAME, (at most 2 arguments) saw %d: %v", len(args), args)
			case o.podTimeout <= 0:
				return usageErrorf(cmd, "--pod-running-timeout must be higher than zero")
			}
			target := args[0]
			if len(args) == 2 {
				target = args[0] + "/" + args[1]
			}
			pod, err := s.execPod(target, o.podTimeout)
			if err != nil {
				return err
			}
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				return fmt.Errorf("cannot attach a container in a completed pod; current phase is %s", pod.Status.Phase)
			}
			return s.attach(pod, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "Pass stdin to the container")
	f.BoolVarP(&o.tty, "tty", "t", false, "Stdin is a TTY")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "Only print output from the remote session")
	f.DurationVar(&o.podTimeout, "pod-running-timeout", time.Minute, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	return cmd
}

// attachOptions are attach's flags (and what run -i passes it).
type attachOptions struct {
	streamOptions
	container  string
	podTimeout time.Duration
}

// attach is upstream's AttachOptions.Run once the pod is known: the
// container, its TTY, the raw terminal, the streams until the process
// ends or the learner leaves, and the message on how to come back.
func (s *session) attach(pod *corev1.Pod, o *attachOptions) error {
	name := o.container
	if name == "" {
		c, err := defaultContainer(pod, o.quiet, s.errOut())
		if err != nil {
			return fmt.Errorf("cannot attach to the container: %v", err)
		}
		name = c
	}
	var c *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			c = &pod.Spec.Containers[i]
		}
	}
	if c == nil {
		return fmt.Errorf("cannot attach to the container: container %s not found in pod %s", name, pod.Name)
	}
	switch {
	case o.tty && !c.TTY:
		o.tty = false
		if !o.quiet {
			fmt.Fprintf(s.errOut(), "error: Unable to use a TTY - container %s did not allocate one\n", c.Name)
		}
	case !o.tty && c.TTY:
		// The container has a terminal: its one stream must be read as one.
		o.tty = true
	}
	term := s.setupTTY(&o.streamOptions)
	var in io.Reader
	if o.stdin {
		in = s.streams.In
	}
	podsRes, err := s.resolve("pods")
	if err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintln(s.errOut(), "If you don't see a command prompt, try pressing enter.")
	}
	var errOut io.Writer = s.errOut()
	restore := func() {}
	if term != nil {
		if restore, err = term.MakeRaw(); err != nil {
			return err
		}
		errOut = nil
	}
	q := url.Values{"container": {c.Name}}
	_, err = s.streamSession(podsRes.path(pod.Namespace, pod.Name, "attach"), q, in, s.out(), errOut, term)
	restore()
	if err != nil {
		return err
	}
	// upstream's reattachMessage: only for a raw terminal with stdin, on a
	// pod whose container comes back.
	if !o.quiet && o.stdin && term != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		fmt.Fprintf(s.out(), "Session ended, resume using 'kubectl attach %s -c %s -i -t' command when the pod is running\n", pod.Name, c.Name)
	}
	return nil
}
