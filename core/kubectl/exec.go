package kubectl

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
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
	var stdin, tty bool
	cmd := &cobra.Command{
		Use:                   "exec (POD | TYPE/NAME) [-c CONTAINER] -- COMMAND [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Execute a command in a container",
		Long:                  "Execute a command in a container.",
		Example: `  # Get output from running the 'web --unhealthy' command in pod web-x, using the first container by default
  kubectl exec web-x -- web --unhealthy

  # Run 'hello --ticks=0' in container hello of pod web-x
  kubectl exec web-x -c hello -- hello --ticks=0`,
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
			if stdin || tty {
				return errors.New("interactive exec (-i, -t) is not available in kubetab's console: the command runs to completion and its output is printed")
			}
			pod := args[0]
			if typ, name, ok := strings.Cut(pod, "/"); ok {
				if typ != "pod" && typ != "pods" && typ != "po" {
					return fmt.Errorf("cannot exec into %s: only pods are supported here", typ)
				}
				pod = name
			}
			q := url.Values{"command": args[1:]}
			if container != "" {
				q.Set("container", container)
			}
			podsRes, err := s.resolve("pods")
			if err != nil {
				return err
			}
			var res execResult
			if err := s.client.into(s.ctx, request{method: "POST", path: podsRes.path(s.namespace, pod, "exec"), query: q}, &res); err != nil {
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
	return cmd
}
