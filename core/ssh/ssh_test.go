package ssh

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// fakeNodes stands in for core/cluster in this table test; the cluster's own
// tests cover what StopNode and StartNode do to a node.
type fakeNodes struct{ running map[string]bool }

var errNoSuchNode = errors.New("cluster: no such node")

func (f *fakeNodes) StopNode(n string) error {
	if _, ok := f.running[n]; !ok {
		return errNoSuchNode
	}
	f.running[n] = false
	return nil
}

func (f *fakeNodes) StartNode(n string) error {
	if _, ok := f.running[n]; !ok {
		return errNoSuchNode
	}
	f.running[n] = true
	return nil
}

func (f *fakeNodes) NodeRunning(n string) bool { return f.running[n] }

func TestSSH(t *testing.T) {
	nodes := &fakeNodes{running: map[string]bool{"node-1": true, "node-2": true}}
	for _, tc := range []struct {
		line      []string
		code      int
		out, err  string
		node2Runs bool
	}{
		{[]string{"node-2", "systemctl", "is-active", "kubelet"}, 0, "active\n", "", true},
		{[]string{"node-2", "systemctl", "stop", "kubelet"}, 0, "", "", false},
		{[]string{"root@node-2", "systemctl", "is-active", "kubelet.service"}, 3, "inactive\n", "", false},
		{[]string{"node-2", "systemctl", "start", "kubelet"}, 0, "", "", true},
		{[]string{"node-9", "systemctl", "stop", "kubelet"}, 255, "", "ssh: Could not resolve hostname node-9: Name or service not known\n", true},
		{[]string{"node-2", "reboot"}, 127, "", "bash: line 1: reboot: command not found\n", true},
		{[]string{"node-2", "systemctl", "stop", "docker"}, 5, "", "Failed to stop docker.service: Unit docker.service not found.\n", true},
		{[]string{"node-2", "systemctl", "frobnicate", "kubelet"}, 1, "", "Unknown command verb 'frobnicate'.\n", true},
	} {
		var out, errb bytes.Buffer
		code := Run(context.Background(), nodes, tc.line, IOStreams{Out: &out, ErrOut: &errb})
		if code != tc.code || out.String() != tc.out || errb.String() != tc.err || nodes.running["node-2"] != tc.node2Runs {
			t.Errorf("ssh %v: exit %d out %q err %q node-2 running %v; want %d %q %q %v",
				tc.line, code, out.String(), errb.String(), nodes.running["node-2"], tc.code, tc.out, tc.err, tc.node2Runs)
		}
	}
}
