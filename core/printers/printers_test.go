package printers

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// now is the fixed clock of every printer test.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
func ptr[T any](v T) *T               { return &v }

// --- pod fixtures, in the style of the scheduler's st.MakePod() ---

type podWrapper struct{ corev1.Pod }

func makePod(name string) *podWrapper {
	p := &podWrapper{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(10 * time.Minute)}}}
	p.Spec.Containers = []corev1.Container{{Name: "app", Image: "hello:1.0"}}
	p.Status.Phase = corev1.PodPending
	return p
}

func (p *podWrapper) obj() *corev1.Pod { return &p.Pod }

func (p *podWrapper) phase(ph corev1.PodPhase) *podWrapper { p.Status.Phase = ph; return p }
func (p *podWrapper) reason(r string) *podWrapper          { p.Status.Reason = r; return p }

// on binds the pod to a node and gives it an IP.
func (p *podWrapper) on(node, ip string) *podWrapper {
	p.Spec.NodeName = node
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	return p
}

func (p *podWrapper) containers(names ...string) *podWrapper {
	p.Spec.Containers = nil
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: n})
	}
	return p
}

func (p *podWrapper) initContainers(sidecar bool, names ...string) *podWrapper {
	for _, n := range names {
		c := corev1.Container{Name: n, Image: n}
		if sidecar {
			c.RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

func (p *podWrapper) status(cs ...corev1.ContainerStatus) *podWrapper {
	p.Status.ContainerStatuses = cs
	return p
}

func (p *podWrapper) initStatus(cs ...corev1.ContainerStatus) *podWrapper {
	p.Status.InitContainerStatuses = cs
	return p
}

func (p *podWrapper) cond(t corev1.PodConditionType, s corev1.ConditionStatus, reason string) *podWrapper {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason})
	return p
}

func (p *podWrapper) deleting() *podWrapper {
	ts := ago(time.Minute)
	p.DeletionTimestamp = &ts
	return p
}

func running(name string, ready bool, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, RestartCount: restarts, Started: ptr(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(5 * time.Minute)}}}
}

func waiting(name, reason string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(name, reason string, code, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, Signal: signal}}}
}

// lastTerminated records an earlier run that ended d ago.
func lastTerminated(cs corev1.ContainerStatus, d time.Duration) corev1.ContainerStatus {
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(d)}
	return cs
}

func pods() []runtime.Object {
	return []runtime.Object{
		makePod("pending-unscheduled").obj(),
		makePod("scheduling-gated").cond(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonSchedulingGated).obj(),
		makePod("container-creating").on("node-1", "").status(waiting("app", "ContainerCreating", 0)).obj(),
		makePod("running").phase(corev1.PodRunning).on("node-1", "10.244.1.5").status(running("app", true, 0)).
			cond(corev1.PodReady, corev1.ConditionTrue, "").obj(),
		makePod("running-not-ready").phase(corev1.PodRunning).on("node-2", "10.244.2.7").status(running("app", false, 0)).obj(),
		makePod("restarted").phase(corev1.PodRunning).on("node-1", "10.244.1.6").
			status(lastTerminated(running("app", true, 2), 3*time.Minute)).obj(),
		makePod("crash-loop").phase(corev1.PodRunning).on("node-1", "10.244.1.7").
			status(lastTerminated(waiting("app", "CrashLoopBackOff", 4), 40*time.Second)).obj(),
		makePod("image-pull").on("node-2", "10.244.2.8").status(waiting("app", "ImagePullBackOff", 0)).obj(),
		makePod("completed").phase(corev1.PodSucceeded).on("node-1", "10.244.1.8").status(terminated("app", "Completed", 0, 0)).obj(),
		makePod("error").phase(corev1.PodFailed).on("node-1", "10.244.1.9").status(terminated("app", "Error", 1, 0)).obj(),
		makePod("exit-code").phase(corev1.PodFailed).on("node-1", "10.244.1.10").status(terminated("app", "", 3, 0)).obj(),
		makePod("signal").phase(corev1.PodFailed).on("node-1", "10.244.1.11").status(terminated("app", "", 137, 9)).obj(),
		makePod("evicted").phase(corev1.PodFailed).reason("Evicted").on("node-2", "").obj(),
		makePod("init-waiting").initContainers(false, "setup", "migrate").on("node-1", "10.244.1.12").
			initStatus(waiting("setup", "PodInitializing", 0), waiting("migrate", "PodInitializing", 0)).
			status(waiting("app", "PodInitializing", 0)).obj(),
		makePod("init-second").initContainers(false, "setup", "migrate").on("node-1", "10.244.1.13").
			initStatus(terminated("setup", "Completed", 0, 0), running("migrate", false, 0)).
			status(waiting("app", "PodInitializing", 0)).obj(),
		makePod("init-crash").initContainers(false, "setup").on("node-1", "10.244.1.14").
			initStatus(waiting("setup", "CrashLoopBackOff", 3)).status(waiting("app", "PodInitializing", 0)).obj(),
		makePod("init-error").initContainers(false, "setup").on("node-1", "10.244.1.15").
			initStatus(terminated("setup", "Error", 1, 0)).status(waiting("app", "PodInitializing", 0)).obj(),
		makePod("init-exit-code").initContainers(false, "setup").on("node-1", "10.244.1.16").
			initStatus(terminated("setup", "", 2, 0)).status(waiting("app", "PodInitializing", 0)).obj(),
		makePod("sidecar").phase(corev1.PodRunning).initContainers(true, "proxy").on("node-1", "10.244.1.17").
			initStatus(running("proxy", true, 1)).status(running("app", true, 0)).
			cond(corev1.PodInitialized, corev1.ConditionTrue, "").cond(corev1.PodReady, corev1.ConditionTrue, "").obj(),
		makePod("one-done-one-running").phase(corev1.PodRunning).containers("app", "job").on("node-2", "10.244.2.9").
			status(running("app", true, 0), terminated("job", "Completed", 0, 0)).cond(corev1.PodReady, corev1.ConditionTrue, "").obj(),
		makePod("one-done-not-ready").phase(corev1.PodRunning).containers("app", "job").on("node-2", "10.244.2.10").
			status(running("app", true, 0), terminated("job", "Completed", 0, 0)).obj(),
		makePod("terminating").phase(corev1.PodRunning).on("node-1", "10.244.1.18").status(running("app", true, 0)).deleting().obj(),
		makePod("terminating-done").phase(corev1.PodSucceeded).on("node-1", "10.244.1.19").
			status(terminated("app", "Completed", 0, 0)).deleting().obj(),
		makePod("node-lost").phase(corev1.PodRunning).reason(nodeUnreachablePodReason).on("node-3", "10.244.3.2").deleting().obj(),
		func() *corev1.Pod {
			p := makePod("gates").phase(corev1.PodRunning).on("node-1", "10.244.1.20").status(running("app", true, 0)).
				cond("example.com/lb", corev1.ConditionTrue, "").cond("example.com/dns", corev1.ConditionFalse, "")
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
			p.Status.NominatedNodeName = "node-9"
			return p.obj()
		}(),
		func() *corev1.Pod {
			p := makePod("old").obj()
			p.CreationTimestamp = ago(400 * 24 * time.Hour)
			return p
		}(),
	}
}

func node(name string, ready corev1.ConditionStatus, labels map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: ago(2 * time.Hour)}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: "192.168.0.10"}}
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2-kubetab", OSImage: "kubetab (wazero)", KernelVersion: "wasm", ContainerRuntimeVersion: "wazero://1.12.0"}
	return n
}

func nodes() []runtime.Object {
	cordoned := node("cordoned", corev1.ConditionTrue, nil)
	cordoned.Spec.Unschedulable = true
	external := node("external", corev1.ConditionTrue, map[string]string{"kubernetes.io/role": "worker"})
	external.Status.Addresses = append(external.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.7"})
	fresh := node("fresh", "", nil)
	fresh.Status.Addresses, fresh.Status.NodeInfo = nil, corev1.NodeSystemInfo{}
	return []runtime.Object{
		node("control-plane", corev1.ConditionTrue, map[string]string{LabelNodeRolePrefix + "control-plane": "", LabelNodeRolePrefix + "etcd": ""}),
		node("worker", corev1.ConditionTrue, nil),
		node("sick", corev1.ConditionFalse, nil),
		node("silent", corev1.ConditionUnknown, nil),
		cordoned, external, fresh,
	}
}

func deployment(name string, spec, ready, updated, available int32, images ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(90 * time.Second)}}
	d.Spec.Replicas = &spec
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	for _, im := range images {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: strings.Split(im, ":")[0], Image: im})
	}
	d.Status = appsv1.DeploymentStatus{ReadyReplicas: ready, UpdatedReplicas: updated, AvailableReplicas: available}
	return d
}

func deployments() []runtime.Object {
	multi := deployment("frontend", 2, 1, 2, 1, "web:2", "proxy:1")
	multi.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "frontend"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	return []runtime.Object{
		deployment("web", 3, 3, 3, 3, "hello:1.0"),
		deployment("new", 3, 0, 0, 0, "hello"),
		deployment("zero", 0, 0, 0, 0, "hello"),
		multi,
	}
}

func replicaSets() []runtime.Object {
	rs := func(name string, desired, current, ready int32) *appsv1.ReplicaSet {
		r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(3 * time.Minute)}}
		r.Spec.Replicas = &desired
		r.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": name[len(name)-5:]}}
		r.Spec.Template.Spec.Containers = []corev1.Container{{Name: "hello", Image: "hello:1.0"}}
		r.Status = appsv1.ReplicaSetStatus{Replicas: current, ReadyReplicas: ready}
		return r
	}
	return []runtime.Object{rs("web-7d4b9", 3, 3, 3), rs("web-5c8f6", 0, 0, 0), rs("web-6f7c2", 3, 2, 1)}
}

func events() []runtime.Object {
	ev := func(name, typ, reason, kind, obj, msg string, first, last time.Duration, count int32) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, Namespace: "default"},
			Type:           typ, Reason: reason, Message: msg, Count: count,
			FirstTimestamp: ago(first), LastTimestamp: ago(last),
			Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
		}
	}
	scheduled := ev("web-1.1", "Normal", "Scheduled", "Pod", "web-1", "Successfully assigned default/web-1 to node-1", 2*time.Minute, 2*time.Minute, 1)
	scheduled.Source = corev1.EventSource{Component: "default-scheduler"}
	backoff := ev("web-1.2", "Warning", "BackOff", "Pod", "web-1", "Back-off restarting failed container app in pod web-1_default(uid)\n", 90*time.Second, 5*time.Second, 7)
	backoff.InvolvedObject.FieldPath = "spec.containers{app}"
	newAPI := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.3", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: "default"},
		Type:           "Normal", Reason: "ScalingReplicaSet", Message: "Scaled up replica set web-7d4b9 from 0 to 3",
		EventTime:           metav1.NewMicroTime(now.Add(-time.Minute)),
		ReportingController: "deployment-controller", ReportingInstance: "kube-controller-manager",
	}
	series := newAPI.DeepCopy()
	series.Name, series.Reason, series.Message = "web.4", "Pulled", "Container image already present"
	series.Series = &corev1.EventSeries{Count: 12, LastObservedTime: metav1.NewMicroTime(now.Add(-20 * time.Second))}
	noName := ev("node.5", "Normal", "RegisteredNode", "Node", "", "Registered", 3*time.Hour, 3*time.Hour, 0)
	return []runtime.Object{scheduled, backoff, newAPI, series, noName}
}

func namespaces() []runtime.Object {
	ns := func(name string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(26 * time.Hour)}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	return []runtime.Object{ns("default", corev1.NamespaceActive), ns("kube-system", corev1.NamespaceActive), ns("old", corev1.NamespaceTerminating)}
}

// render draws a table the way `kubectl get -o wide` does (3 spaces between
// columns), after a line naming the columns only -o wide shows.
func render(t *testing.T, table *metav1.Table) string {
	t.Helper()
	var buf bytes.Buffer
	var wide []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority > 0 {
			wide = append(wide, strings.ToUpper(c.Name))
		}
	}
	fmt.Fprintf(&buf, "# -o wide only: %s\n", strings.Join(wide, ", "))
	tw := tabwriter.NewWriter(&buf, 6, 4, 3, ' ', 0)
	var header []string
	for _, c := range table.ColumnDefinitions {
		header = append(header, strings.ToUpper(c.Name))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range table.Rows {
		if len(row.Cells) != len(table.ColumnDefinitions) {
			t.Fatalf("row has %d cells for %d columns: %v", len(row.Cells), len(table.ColumnDefinitions), row.Cells)
		}
		cells := make([]string, len(row.Cells))
		for i, c := range row.Cells {
			switch c.(type) {
			case string, int64, bool:
			default:
				t.Fatalf("cell %d is a %T; tables carry strings, int64s and bools", i, c)
			}
			cells[i] = fmt.Sprint(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	return buf.String()
}

func TestGolden(t *testing.T) {
	cases := []goldenCase{
		{"pods", &corev1.PodList{}, pods()},
		{"nodes", &corev1.NodeList{}, nodes()},
		{"deployments", &appsv1.DeploymentList{}, deployments()},
		{"replicasets", &appsv1.ReplicaSetList{}, replicaSets()},
		{"events", &corev1.EventList{}, events()},
		{"namespaces", &corev1.NamespaceList{}, namespaces()},
		{"default-printer", &corev1.ComponentStatusList{}, []runtime.Object{
			&corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0", CreationTimestamp: ago(time.Hour)}},
		}},
	}
	cases = append(cases, moreGoldenCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := setList(tc.list, tc.objs); err != nil {
				t.Fatal(err)
			}
			table, err := ToTable(tc.list, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != len(tc.objs) {
				t.Fatalf("%d rows for %d objects", len(table.Rows), len(tc.objs))
			}
			got := render(t, table)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", tc.name, got, want)
			}
		})
	}
}

// TestColumns pins the column names and their priorities to upstream's.
func TestColumns(t *testing.T) {
	cases := []struct {
		obj          runtime.Object
		normal, wide string
	}{
		{&corev1.Pod{}, "Name Ready Status Restarts Age", "IP Node Nominated-Node Readiness-Gates"},
		{&corev1.Node{}, "Name Status Roles Age Version", "Internal-IP External-IP OS-Image Kernel-Version Container-Runtime"},
		{&appsv1.Deployment{}, "Name Ready Up-to-date Available Age", "Containers Images Selector"},
		{&appsv1.ReplicaSet{}, "Name Desired Current Ready Age", "Containers Images Selector"},
		{&corev1.Event{}, "Last-Seen Type Reason Object Message", "Subobject Source First-Seen Count Name"},
		{&corev1.Namespace{}, "Name Status Age", ""},
		{&eventsv1.Event{}, "Last-Seen Type Reason Object Message", "Subobject Source First-Seen Count Name"},
		{&corev1.Service{}, "Name Type Cluster-IP External-IP Port(s) Age", "Selector"},
		{&corev1.Endpoints{}, "Name Endpoints Age", ""},
		{&discoveryv1.EndpointSlice{}, "Name AddressType Ports Endpoints Age", ""},
		{&corev1.ConfigMap{}, "Name Data Age", ""},
		{&corev1.Secret{}, "Name Type Data Age", ""},
		{&corev1.ServiceAccount{}, "Name Secrets Age", ""},
		{&coordinationv1.Lease{}, "Name Holder Age", ""},
		{&schedulingv1.PriorityClass{}, "Name Value Global-Default Age PreemptionPolicy", ""},
		{&appsv1.DaemonSet{}, "Name Desired Current Ready Up-to-date Available Node-Selector Age", "Containers Images Selector"},
		{&appsv1.StatefulSet{}, "Name Ready Age", "Containers Images"},
		{&batchv1.Job{}, "Name Status Completions Duration Age", "Containers Images Selector"},
		{&batchv1.CronJob{}, "Name Schedule Timezone Suspend Active Last-Schedule Age", "Containers Images Selector"},
		{&policyv1.PodDisruptionBudget{}, "Name Min-Available Max-Unavailable Allowed-Disruptions Age", ""},
	}
	for _, tc := range cases {
		table, err := ToTable(tc.obj, now)
		if err != nil {
			t.Fatal(err)
		}
		var normal, wide []string
		for _, c := range table.ColumnDefinitions {
			name := strings.ReplaceAll(c.Name, " ", "-")
			switch c.Priority {
			case 0:
				normal = append(normal, name)
			case 1:
				wide = append(wide, name)
			default:
				t.Errorf("%T: column %s has priority %d", tc.obj, c.Name, c.Priority)
			}
			if c.Description == "" {
				t.Errorf("%T: column %s has no description", tc.obj, c.Name)
			}
		}
		if got := strings.Join(normal, " "); got != tc.normal {
			t.Errorf("%T columns: got %q, want %q", tc.obj, got, tc.normal)
		}
		if got := strings.Join(wide, " "); got != tc.wide {
			t.Errorf("%T wide columns: got %q, want %q", tc.obj, got, tc.wide)
		}
	}
}

// TestRowMetadata: every row carries the object's metadata, which kubectl
// uses for --show-labels and the NAMESPACE column of -A.
func TestRowMetadata(t *testing.T) {
	p := makePod("web").obj()
	p.Labels = map[string]string{"app": "web"}
	table, err := ToTable(p, now)
	if err != nil {
		t.Fatal(err)
	}
	pom, ok := table.Rows[0].Object.Object.(*metav1.PartialObjectMetadata)
	if !ok || pom.Namespace != "default" || pom.Labels["app"] != "web" || pom.Kind != "PartialObjectMetadata" {
		t.Fatalf("row object: %#v", table.Rows[0].Object.Object)
	}
}

func setList(list runtime.Object, objs []runtime.Object) error {
	return meta.SetList(list, objs)
}
