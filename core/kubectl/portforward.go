package kubectl

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// `kubectl port-forward` listens on a port of the learner's computer and
// carries each connection to it into a pod. A browser tab cannot listen on
// a port, so the console's kubectl cannot forward; it does everything
// else upstream's does first (parse the ports, find the pod behind
// TYPE/NAME, translate a Service port to the pod's port, check that the
// pod runs) and then says how to reach the same port from inside the
// cluster, where the console's curl works. The native build serves
// pods/portforward to the real kubectl (core/apiserver/portforward.go).

// forwardedPort is one LOCAL:REMOTE pair.
type forwardedPort struct {
	local, remote uint16
}

// parseForwardedPorts reads [LOCAL:]REMOTE and :REMOTE pairs, with
// upstream's messages (client-go tools/portforward parsePorts).
func parseForwardedPorts(specs []string) ([]forwardedPort, error) {
	var out []forwardedPort
	for _, spec := range specs {
		parts := strings.Split(spec, ":")
		var local, remote string
		switch len(parts) {
		case 1:
			local, remote = parts[0], parts[0]
		case 2:
			local, remote = parts[0], parts[1]
			if local == "" {
				local = "0"
			}
		default:
			return nil, fmt.Errorf("invalid port format '%s'", spec)
		}
		l, err := strconv.ParseUint(local, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("error parsing local port '%s': %s", local, err)
		}
		r, err := strconv.ParseUint(remote, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("error parsing remote port '%s': %s", remote, err)
		}
		if r == 0 {
			return nil, fmt.Errorf("remote port must be > 0")
		}
		out = append(out, forwardedPort{uint16(l), uint16(r)})
	}
	return out, nil
}

func (s *session) newPortForwardCommand() *cobra.Command {
	var podRunningTimeout time.Duration
	cmd := &cobra.Command{
		Use:                   "port-forward TYPE/NAME [options] [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		DisableFlagsInUseLine: true,
		Short:                 "Forward one or more local ports to a pod",
		Long: `Forward one or more local ports to a pod.

 A browser tab cannot listen on a port of your computer, so in kubetab's
 console this finds the pod and port and shows how to reach them from inside
 the cluster with curl. Run kubetab natively ("kubetab cluster") to forward
 ports with the real kubectl.`,
		Example: `  # Which pod and port would serve localhost:8080 for the Service web's port 80
  kubectl port-forward svc/web 8080:80

  # The same for a pod of the deployment web
  kubectl port-forward deployment/web 8080:8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf(cmd, "TYPE/NAME and list of ports are required for port-forward")
			}
			ports, err := parseForwardedPorts(args[1:])
			if err != nil {
				return err
			}
			pod, svc, err := s.portForwardTarget(args[0], podRunningTimeout)
			if err != nil {
				return err
			}
			if pod.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("unable to forward port because pod is not running. Current status=%v", pod.Status.Phase)
			}
			var b strings.Builder
			b.WriteString("kubetab's console cannot port-forward: a browser tab cannot listen on a port of this computer.\n")
			fmt.Fprintf(&b, "pod/%s (IP %s) would serve:\n", pod.Name, pod.Status.PodIP)
			for _, p := range ports {
				remote := int32(p.remote)
				if svc != nil {
					if remote, err = servicePortToPodPort(svc, pod, remote); err != nil {
						return err
					}
				}
				local := "a free local port"
				if p.local != 0 {
					local = fmt.Sprintf("localhost:%d", p.local)
				}
				fmt.Fprintf(&b, "  %s -> %d: from inside the cluster, curl http://%s:%d/\n", local, remote, pod.Status.PodIP, remote)
			}
			b.WriteString(`Run kubetab natively ("kubetab cluster") to port-forward with the real kubectl.`)
			return fmt.Errorf("%s", b.String())
		},
	}
	cmd.Flags().DurationVar(&podRunningTimeout, "pod-running-timeout", time.Minute, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	cmd.Flags().StringSlice("address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, kubectl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	return cmd
}

// portForwardTarget finds the pod behind pod/NAME, NAME, svc/NAME or a
// workload (deployment/NAME ...), as upstream's AttachablePodForObject does;
// svc is the Service when TYPE/NAME named one.
func (s *session) portForwardTarget(arg string, timeout time.Duration) (pod *corev1.Pod, svc *corev1.Service, err error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok {
		typ, name = "pods", arg
	}
	res, err := s.resolve(typ)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case res.Group == "" && res.Name == "pods":
		pod, err = s.getPod(res, name)
		return pod, nil, err
	case res.Group == "" && res.Name == "services":
		svc = &corev1.Service{}
		if err := s.client.into(s.ctx, request{method: "GET", path: res.path(s.namespace, name, "")}, svc); err != nil {
			return nil, nil, err
		}
		if len(svc.Spec.Selector) == 0 {
			return nil, nil, fmt.Errorf("invalid service '%s': Service is defined without a selector", name)
		}
		pod, err = s.firstPodMatching(labels.SelectorFromSet(svc.Spec.Selector).String(), timeout)
		return pod, svc, err
	}
	if !selectsPods[res.Kind] {
		if _, err := s.getObject(res, s.namespaceFor(res, false), name); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("cannot attach to *%s.%s: not implemented", res.Version, res.Kind)
	}
	pod, err = s.firstPodOf(res, name, timeout)
	return pod, nil, err
}

// selectsPods are the kinds whose pods port-forward can pick (upstream
// AttachablePodForObject).
var selectsPods = map[string]bool{
	"Deployment": true, "ReplicaSet": true, "StatefulSet": true,
	"DaemonSet": true, "Job": true, "ReplicationController": true,
}

// servicePortToPodPort is the pod port behind a Service's port: its
// targetPort, a number or the name of a container port of pod (upstream
// util.LookupContainerPortNumberByServicePort).
func servicePortToPodPort(svc *corev1.Service, pod *corev1.Pod, port int32) (int32, error) {
	for _, sp := range svc.Spec.Ports {
		if sp.Port != port {
			continue
		}
		switch {
		case sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == 0:
			return sp.Port, nil // no targetPort: the same number
		case sp.TargetPort.Type == intstr.Int:
			return sp.TargetPort.IntVal, nil
		}
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == sp.TargetPort.StrVal {
					return cp.ContainerPort, nil
				}
			}
		}
		return 0, fmt.Errorf("cannot find a container port named '%s' in pod %s", sp.TargetPort.StrVal, pod.Name)
	}
	return 0, fmt.Errorf("Service %s does not have a service port %d", svc.Name, port)
}
