// Package ssh is the console's `ssh NODE COMMAND`: the way a learner reaches
// "the machine" behind a node, to do what an administrator would do there.
// The one command a node understands is systemctl, for its kubelet:
//
//	$ ssh node-2 systemctl stop kubelet     # the node stops reporting
//	$ kubectl get nodes -w                  # ... and turns NotReady/Unknown
//	$ ssh node-2 systemctl start kubelet    # ... and comes back
//
// Upstream counterpart: none in Kubernetes; on a real cluster this is an SSH
// session and systemd's unit for the kubelet (kubeadm installs
// /lib/systemd/system/kubelet.service). Stopping it is the classic way to
// watch the node lifecycle controller at work: the Lease stops being renewed,
// the node turns Unknown, gets the node.kubernetes.io/unreachable taints, and
// its pods are evicted after their tolerationSeconds.
package ssh

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubetab/kubetab/core/lang"
)

// Nodes is what the command needs from the cluster (core/cluster.Cluster).
type Nodes interface {
	StopNode(name string) error
	StartNode(name string) error
	NodeRunning(name string) bool
}

// IOStreams are the command's output streams.
type IOStreams struct {
	Out, ErrOut io.Writer
}

// Exit codes, as ssh, bash and systemctl use them.
const (
	exitOK           = 0
	exitUnitInactive = 3   // systemctl is-active/status of a stopped unit
	exitNoUnit       = 5   // systemctl: unit not loaded
	exitNotFound     = 127 // bash: command not found
	exitSSH          = 255 // ssh's own errors
)

// Run runs `ssh NODE COMMAND [ARGS...]`; args exclude the word "ssh".
func Run(ctx context.Context, nodes Nodes, args []string, s IOStreams) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(s.ErrOut, lang.Pick(ctx, "usage: ssh NODE systemctl (start|stop|restart|status|is-active) kubelet",
			"使い方: ssh NODE systemctl (start|stop|restart|status|is-active) kubelet（ノードの kubelet を止めたり動かしたりします）"))
		return exitSSH
	}
	host := args[0]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:] // root@node-1 works too
	}
	if err := checkNode(nodes, host); err != nil {
		fmt.Fprintf(s.ErrOut, "ssh: Could not resolve hostname %s: Name or service not known\n", host)
		return exitSSH
	}
	if len(args) == 1 {
		fmt.Fprintf(s.ErrOut, "%s: an interactive shell is not available here; run one command, e.g. ssh %s systemctl status kubelet\n", host, host)
		return exitSSH
	}
	if args[1] != "systemctl" {
		fmt.Fprintf(s.ErrOut, "bash: line 1: %s: command not found\n", args[1])
		return exitNotFound
	}
	return systemctl(nodes, host, args[2:], s)
}

// checkNode reports whether the cluster has the node; NodeRunning alone
// cannot tell a stopped node from a missing one, StartNode on a running
// node is a no-op, so ask with a start only when the node is not running.
func checkNode(nodes Nodes, name string) error {
	if nodes.NodeRunning(name) {
		return nil
	}
	// A stopped node exists too: StopNode of a stopped node is a no-op that
	// fails only for unknown names.
	return nodes.StopNode(name)
}

func systemctl(nodes Nodes, host string, args []string, s IOStreams) int {
	if len(args) == 0 {
		fmt.Fprintln(s.ErrOut, "systemctl: this node only manages the kubelet unit: systemctl (start|stop|restart|status|is-active) kubelet")
		return 1
	}
	verb := args[0]
	units := args[1:]
	switch verb {
	case "start", "stop", "restart", "status", "is-active":
	default:
		fmt.Fprintf(s.ErrOut, "Unknown command verb '%s'.\n", verb)
		return 1
	}
	if len(units) == 0 {
		fmt.Fprintf(s.ErrOut, "Too few arguments.\n")
		return 1
	}
	code := exitOK
	for _, unit := range units {
		name := strings.TrimSuffix(unit, ".service")
		if name != "kubelet" {
			switch verb {
			case "status":
				fmt.Fprintf(s.ErrOut, "Unit %s.service could not be found.\n", name)
				code = 4
			case "is-active":
				fmt.Fprintln(s.Out, "inactive")
				code = exitUnitInactive
			default:
				fmt.Fprintf(s.ErrOut, "Failed to %s %s.service: Unit %s.service not found.\n", verb, name, name)
				code = exitNoUnit
			}
			continue
		}
		var err error
		switch verb {
		case "start":
			err = nodes.StartNode(host)
		case "stop":
			err = nodes.StopNode(host)
		case "restart":
			if err = nodes.StopNode(host); err == nil {
				err = nodes.StartNode(host)
			}
		case "is-active":
			if nodes.NodeRunning(host) {
				fmt.Fprintln(s.Out, "active")
			} else {
				fmt.Fprintln(s.Out, "inactive")
				code = exitUnitInactive
			}
		case "status":
			state, dot := "active (running)", "●"
			if !nodes.NodeRunning(host) {
				state, dot = "inactive (dead)", "○"
				code = exitUnitInactive
			}
			fmt.Fprintf(s.Out, "%s kubelet.service - kubelet: The Kubernetes Node Agent\n", dot)
			fmt.Fprintln(s.Out, "     Loaded: loaded (/lib/systemd/system/kubelet.service; enabled; vendor preset: enabled)")
			fmt.Fprintf(s.Out, "     Active: %s\n", state)
		}
		if err != nil {
			fmt.Fprintf(s.ErrOut, "Failed to %s kubelet.service: %v\n", verb, err)
			code = 1
		}
	}
	return code
}
