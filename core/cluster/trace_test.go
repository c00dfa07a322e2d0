package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/core/trace"
)

// The path a learner follows, as the trace records it: kubectl to the API
// server to etcd; the Deployment controller sees the Deployment and creates
// a ReplicaSet; the ReplicaSet controller sees that and creates a Pod; the
// scheduler decides and binds; the kubelet of that node sees the pod, gets
// an IP from CNI, pulls the image and starts the container through CRI.
// Every step is checked in order, with the write that links each hop to
// the next (its revision).
func TestTraceFollowsADeployment(t *testing.T) {
	c, ctx := startCluster(t)
	tr := kubectl.InProcessTransport(c.Handler())
	var out, errb bytes.Buffer
	if code := kubectl.Run(ctx, []string{"create", "deployment", "web", "--image=hello"}, kubectl.IOStreams{Out: &out, ErrOut: &errb}, tr); code != 0 {
		t.Fatalf("kubectl create deployment: %d %s", code, errb.String())
	}
	cl := c.Client("test")
	var pod *corev1.Pod
	eventually(t, 60*time.Second, "the pod Running", func() (bool, string) {
		pods, _, err := cl.Pods().List(ctx, "default", client.ListOptions{})
		if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Sprint(len(pods), err)
		}
		pod = pods[0]
		return true, ""
	})
	hops, _, lost := c.Trace.Since(0)
	if lost > 0 {
		t.Fatalf("the trace lost %d hops", lost)
	}

	// step finds the first hop after from that matches, or fails the test.
	at := 0
	step := func(what string, match func(trace.Hop) bool) trace.Hop {
		t.Helper()
		for i := at; i < len(hops); i++ {
			if match(hops[i]) {
				at = i + 1
				return hops[i]
			}
		}
		t.Fatalf("no hop %q after hop %d; the trace:\n%s", what, at, dump(hops))
		return trace.Hop{}
	}
	is := func(kind trace.Kind, from, to, verb, resource, name string) func(trace.Hop) bool {
		return func(h trace.Hop) bool {
			return h.Kind == kind && h.From == from && h.To == to && h.Verb == verb && h.Resource == resource && (name == "" || h.Name == name)
		}
	}
	node := "kubelet/" + pod.Spec.NodeName
	rs := pod.OwnerReferences[0].Name

	step("kubectl asks to create the deployment", is(trace.Request, "kubectl", trace.APIServer, "create", "deployments.apps", "web"))
	put := step("the API server writes it to etcd", is(trace.Write, trace.APIServer, trace.Etcd, "put", "deployments.apps", "web"))
	if put.Key != "/registry/deployments/default/web" || put.Revision == 0 {
		t.Errorf("the write: key %q revision %d", put.Key, put.Revision)
	}
	// kubectl's answer and the watch events race (both follow the write):
	// look for the answer without moving on.
	if !slices.ContainsFunc(hops[at:], func(h trace.Hop) bool {
		return h.Kind == trace.Response && h.To == "kubectl" && h.Code == 201 && h.Name == "web"
	}) {
		t.Errorf("no 201 for kubectl after the write; the trace:\n%s", dump(hops))
	}
	seen := step("the deployment controller sees it", is(trace.Watch, trace.APIServer, "deployment-controller", "ADDED", "deployments.apps", "web"))
	if seen.Revision != put.Revision {
		t.Errorf("the watch event reports revision %d, the write was %d", seen.Revision, put.Revision)
	}
	step("the deployment controller creates the replica set", is(trace.Request, "deployment-controller", trace.APIServer, "create", "replicasets.apps", ""))
	step("which is written", is(trace.Write, trace.APIServer, trace.Etcd, "put", "replicasets.apps", rs))
	step("the replica set controller sees it", is(trace.Watch, trace.APIServer, "replicaset-controller", "ADDED", "replicasets.apps", rs))
	step("and creates the pod", is(trace.Request, "replicaset-controller", trace.APIServer, "create", "pods", ""))
	step("which is written", is(trace.Write, trace.APIServer, trace.Etcd, "put", "pods", pod.Name))
	step("the scheduler sees it", is(trace.Watch, trace.APIServer, "kube-scheduler", "ADDED", "pods", pod.Name))
	d := step("and decides", func(h trace.Hop) bool {
		return h.Kind == trace.Decision && h.From == "kube-scheduler" && h.Name == pod.Name
	})
	if !strings.HasPrefix(d.Detail, pod.Spec.NodeName+" (") {
		t.Errorf("the decision %q does not name %s", d.Detail, pod.Spec.NodeName)
	}
	step("and binds", is(trace.Request, "kube-scheduler", trace.APIServer, "create", "pods/binding", pod.Name))
	step("the kubelet of the node sees it (its watch selects spec.nodeName, so the bound pod is new to it)", is(trace.Watch, trace.APIServer, node, "ADDED", "pods", pod.Name))
	ip := step("gets an IP from CNI", is(trace.Call, node, "cni", "ADD", "pods", pod.Name))
	if ip.Detail != pod.Status.PodIP {
		t.Errorf("CNI ADD gave %q, the pod's IP is %q", ip.Detail, pod.Status.PodIP)
	}
	step("pulls the image", is(trace.Call, node, "cri", "PullImage", "pods", pod.Name))
	step("creates the container", is(trace.Call, node, "cri", "CreateContainer", "pods", pod.Name))
	step("starts it", is(trace.Call, node, "cri", "StartContainer", "pods", pod.Name))
	step("and reports its status", is(trace.Request, node, trace.APIServer, "update", "pods/status", pod.Name))

	// The console's trace command prints the same, filtered to the family.
	var tout, terr bytes.Buffer
	if code := trace.Run(context.Background(), c.Trace, []string{"web", "--tail=-1", "--kind=decision,call"}, trace.IOStreams{Out: &tout, ErrOut: &terr}); code != 0 {
		t.Fatalf("trace: %d %s", code, terr.String())
	}
	for _, want := range []string{"kube-scheduler", "schedule pods default/" + pod.Name + ": " + pod.Spec.NodeName, "cni", "ADD pods default/" + pod.Name + ": " + pod.Status.PodIP, "StartContainer"} {
		if !strings.Contains(tout.String(), want) {
			t.Errorf("trace web lacks %q:\n%s", want, tout.String())
		}
	}
}

func dump(hops []trace.Hop) string {
	var b strings.Builder
	for i, h := range hops {
		fmt.Fprintf(&b, "%4d %-24s %-24s %s\n", i, h.From, h.To, trace.What(h))
	}
	return b.String()
}

// TestStartWaitsForCaches: when Start returns, every component has its
// first lists (their answers are in the trace), so a first command reaches
// the controllers by watch.
func TestStartWaitsForCaches(t *testing.T) {
	c, _ := startCluster(t)
	hops, _, _ := c.Trace.Since(0)
	listed := map[[2]string]bool{}
	for _, h := range hops {
		if h.Kind == trace.Response && h.From == trace.APIServer && h.Code == 200 {
			listed[[2]string{h.To, h.Resource}] = true
		}
	}
	for _, want := range [][2]string{
		{"deployment-controller", "deployments.apps"}, {"deployment-controller", "replicasets.apps"}, {"deployment-controller", "pods"},
		{"replicaset-controller", "replicasets.apps"}, {"replicaset-controller", "pods"},
		{"job-controller", "jobs.batch"}, {"cronjob-controller", "cronjobs.batch"}, {"cronjob-controller", "jobs.batch"}, {"endpointslice-controller", "services"},
		{"kube-scheduler", "pods"}, {"kube-scheduler", "nodes"},
		{"kubelet/node-1", "pods"}, {"kubelet/node-2", "pods"}, {"kubelet/node-3", "services"},
	} {
		if !listed[want] {
			t.Errorf("Start returned before %s had listed %s", want[0], want[1])
		}
	}
}
