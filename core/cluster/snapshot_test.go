package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/core/snapshot"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/wasm/images"
)

const crontabCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

const crontab = `
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly, namespace: shop}
spec: {cronSpec: "0 3 * * *"}
`

var crontabsGVR = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

// One object of every kind a learner can make, as `kubectl apply -f` takes
// them; the controllers add the rest (ReplicaSets, pods, Endpoints,
// EndpointSlices, Events, Leases ...).
const everyKind = `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: shop}
data: {greeting: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: shop}
stringData: {password: s3cret}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: shop}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tmpl, namespace: shop}
template:
  metadata: {labels: {app: tmpl}}
  spec: {containers: [{name: c, image: hello}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: hello, image: hello}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: solo, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: solo}}
  template:
    metadata: {labels: {app: solo}}
    spec: {containers: [{name: hello, image: hello}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: hello, image: hello}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: web
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: hello, image: hello}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: shop}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: hello, image: hello}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: job, image: job}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: job}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: important}
value: 1000
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: mine, namespace: shop}
spec: {holderIdentity: me}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: shop}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-reads, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: User, name: jane}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: secrets, namespace: shop}
spec: {hard: {count/secrets: "100"}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: claims, namespace: shop}
spec: {limits: [{type: PersistentVolumeClaim, min: {storage: 1Mi}}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: elsewhere, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: elsewhere}
  minReplicas: 1
  maxReplicas: 2
`

// A whole cluster stopped and started again from its store's snapshot:
// every object of every kind is there with its UID, the nodes come back
// (a node added by hand too), no controller makes a second copy of what
// exists, and the Deployment's pods, whose containers died with the
// machines, run again.
func TestSnapshotRestartsTheWholeCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c1, err := cluster.New(cluster.Config{Images: images.New(), Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c1.AddNode(ctx, cluster.NodeSpec{Name: "big", CPU: resource.MustParse("16"), Labels: map[string]string{"size": "big"}}); err != nil {
		t.Fatal(err)
	}
	if out, code := apply(t, c1, everyKind); code != 0 {
		t.Fatalf("apply: %d %s", code, out)
	}
	// A custom resource, once its CRD is served (kubectl, like upstream's,
	// cannot map a CronTab in the same apply as its CRD).
	if out, code := apply(t, c1, crontabCRD); code != 0 {
		t.Fatalf("apply CRD: %d %s", code, out)
	}
	eventually(t, 10*time.Second, "crontabs served", func() (bool, string) {
		_, ok := c1.Registry.LookupVersion(crontabsGVR)
		return ok, "not yet"
	})
	if out, code := apply(t, c1, crontab); code != 0 {
		t.Fatalf("apply CronTab: %d %s", code, out)
	}
	cl1 := c1.Client("test")
	webPods := labels.SelectorFromSet(labels.Set{"app": "web"})
	eventually(t, 90*time.Second, "web's pods Running and the Job done", func() (bool, string) {
		pods, _, err := cl1.Pods().List(ctx, "shop", client.ListOptions{LabelSelector: webPods})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		job, err := client.For[*batchv1.Job](cl1, "batch", "jobs").Get(ctx, "shop", "once")
		done := err == nil && job.Status.Succeeded == 1
		return running == 2 && done, fmt.Sprintf("%d running, job done %v", running, done)
	})
	before := map[string]*corev1.Pod{}
	pods, _, _ := cl1.Pods().List(ctx, "shop", client.ListOptions{LabelSelector: webPods})
	for _, p := range pods {
		before[p.Name] = p
	}

	var snap bytes.Buffer
	if err := c1.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	cancel() // the whole cluster stops: every container dies with it
	// What the snapshot holds (c1's store may still take a write or two
	// while its components stop).
	saved, err := store.Restore(bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	kvs1, rev1 := saved.List("/")

	// Every resource the API server stores is in the snapshot: a kind
	// added to the registry without an object here fails this test.
	have := map[string]bool{}
	for _, kv := range kvs1 {
		if s, _, _ := c1.Registry.StoreOfKey(kv.Key); s != nil {
			have[s.Resource.KeyPrefix] = true
		}
	}
	for _, s := range c1.Registry.Resources() {
		if s.Resource.KeyPrefix != "" && !have[s.Resource.KeyPrefix] {
			t.Errorf("no %s in the snapshot: add one to everyKind", s.Resource.Resource)
		}
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	c2, err := cluster.New(cluster.Config{Images: images.New(), Snapshot: snap.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Store.Revision(); got < rev1 {
		t.Fatalf("revision %d after restore, snapshot at %d", got, rev1)
	}
	var names []string
	for _, n := range c2.Nodes() {
		names = append(names, n.Name)
	}
	if strings.Join(names, ",") != "node-1,node-2,big" {
		t.Fatalf("nodes after restore: %v", names)
	}
	if n := c2.Nodes()[2]; n.CPU.String() != "16" {
		t.Fatalf("node big has %s cpu", n.CPU.String())
	}
	// Before anything runs, the restored store holds every key with the
	// same value (the kube-apiserver's bootstrap found everything there).
	for _, kv := range kvs1 {
		got, err := c2.Store.Get(kv.Key)
		if err != nil || !bytes.Equal(got.Value, kv.Value) || got.ModRevision != kv.ModRevision {
			t.Fatalf("%s after restore: %v", kv.Key, err)
		}
	}
	if err := c2.Start(ctx2); err != nil {
		t.Fatal(err)
	}
	// The restored CRD is served again, with its object.
	eventually(t, 10*time.Second, "crontabs served after the restart", func() (bool, string) {
		st, ok := c2.Registry.LookupVersion(crontabsGVR)
		if !ok {
			return false, "not served"
		}
		_, err := st.Get(ctx2, "shop", "nightly")
		return err == nil, fmt.Sprint(err)
	})
	cl2 := c2.Client("test")
	restarted := time.Now()
	defer func() { t.Logf("pods Running again %v after the restart", time.Since(restarted)) }()
	eventually(t, 90*time.Second, "web's pods Running again with new containers", func() (bool, string) {
		pods, _, err := cl2.Pods().List(ctx2, "shop", client.ListOptions{LabelSelector: webPods})
		if err != nil {
			return false, err.Error()
		}
		var state []string
		ok := len(pods) == 2
		for _, p := range pods {
			old := before[p.Name]
			again := old != nil && old.UID == p.UID && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].Ready && p.Status.ContainerStatuses[0].ContainerID != old.Status.ContainerStatuses[0].ContainerID
			// The restart signs of a node reboot: the container that was
			// running is lastState, exited 255 Unknown (its process was
			// lost), and the new one is its restart.
			if again {
				cs, was := p.Status.ContainerStatuses[0], old.Status.ContainerStatuses[0]
				last := cs.LastTerminationState.Terminated
				again = cs.RestartCount == was.RestartCount+1 && last != nil && last.ExitCode == 255 && last.Reason == "Unknown" &&
					last.ContainerID == was.ContainerID && last.StartedAt.Equal(&was.State.Running.StartedAt)
				state = append(state, fmt.Sprintf("%s restartCount %d lastState %+v", p.Name, cs.RestartCount, last))
			}
			ok = ok && again
			state = append(state, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
		}
		return ok, strings.Join(state, ", ")
	})
	// Each pod's sandbox was re-created, with upstream's event.
	events, _, err := cl2.Events().List(ctx2, "shop", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string]bool{}
	for _, e := range events {
		if e.Reason == "SandboxChanged" && e.Message == "Pod sandbox changed, it will be killed and re-created." && e.Source.Component == "kubelet" {
			changed[e.InvolvedObject.Name] = true
		}
	}
	for name := range before {
		if !changed[name] {
			t.Errorf("no SandboxChanged event for pod %s; events: %d", name, len(events))
		}
	}
	eventually(t, 30*time.Second, "every node Ready", func() (bool, string) {
		nodes, _, err := cl2.Nodes().List(ctx2, "", client.ListOptions{})
		ready := 0
		for _, n := range nodes {
			if nodeReady(n) == corev1.ConditionTrue && len(n.Spec.Taints) == 0 {
				ready++
			}
		}
		return err == nil && ready == 3, fmt.Sprint(ready, err)
	})
	// Every object that was there is there still, the same object (UID); the
	// Job's finished pod is not run again.
	for _, kv := range kvs1 {
		s, ns, name := c1.Registry.StoreOfKey(kv.Key)
		if s == nil || s.Resource.Resource == "events" {
			continue // kept, but a later event may merge into one (count)
		}
		old, _ := s.DecodeValue(kv)
		kv2, err := c2.Store.Get(kv.Key)
		if err != nil {
			t.Errorf("%s %s/%s is gone after the restart: %v", s.Resource.Resource, ns, name, err)
			continue
		}
		s2, _, _ := c2.Registry.StoreOfKey(kv.Key)
		cur, _ := s2.DecodeValue(kv2)
		m1, _ := meta.Accessor(old)
		m2, _ := meta.Accessor(cur)
		if m1.GetUID() != m2.GetUID() {
			t.Errorf("%s %s/%s was replaced: uid %s -> %s", s.Resource.Resource, ns, name, m1.GetUID(), m2.GetUID())
		}
	}
	// Nothing made twice: still one ReplicaSet for web, 2 web pods, one Job pod.
	rss, _, _ := cl2.ReplicaSets().List(ctx2, "shop", client.ListOptions{})
	if len(rss) != 2 { // web's and solo
		t.Errorf("%d ReplicaSets after the restart", len(rss))
	}
	// A Service made now gets a clusterIP of its own, not one in use.
	if out, code := apply(t, c2, "apiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: shop}\nspec: {selector: {app: x}, ports: [{port: 80}]}\n"); code != 0 {
		t.Fatal(out)
	}
	svcs, _, _ := client.For[*corev1.Service](cl2, "", "services").List(ctx2, "", client.ListOptions{})
	seen := map[string]string{}
	for _, s := range svcs {
		if o, dup := seen[s.Spec.ClusterIP]; dup {
			t.Errorf("services %s and %s share %s", o, s.Name, s.Spec.ClusterIP)
		}
		seen[s.Spec.ClusterIP] = s.Name
	}
}

// A snapshot that is not one, or holds what no resource can decode, is
// refused by New with ErrBadSnapshot.
func TestBadSnapshotIsRefused(t *testing.T) {
	c, err := cluster.New(cluster.Config{Images: images.New(), Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var good bytes.Buffer
	if err := c.Snapshot(&good); err != nil {
		t.Fatal(err)
	}
	withKey := func(key string, value []byte) []byte {
		s := store.New(store.Config{})
		if err := s.Restore(bytes.NewReader(good.Bytes())); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(key, value); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		s.Snapshot(&b)
		return b.Bytes()
	}
	flipped := bytes.Clone(good.Bytes())
	flipped[len(flipped)/2] ^= 0xff
	for name, data := range map[string][]byte{
		"garbage":      []byte("hello"),
		"empty":        {},
		"truncated":    good.Bytes()[:good.Len()-10],
		"flipped byte": flipped,
		"unknown key":  withKey("/registry/widgets/default/w", []byte(`{}`)),
		"bad value":    withKey("/registry/configmaps/default/x", []byte("k8s\x00garbage")),
		"wrong name":   withKey("/registry/namespaces/zzz", bytes.Clone(mustGet(t, c, "/registry/namespaces/default"))),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := cluster.New(cluster.Config{Images: images.New(), Snapshot: data})
			if !errors.Is(err, cluster.ErrBadSnapshot) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func mustGet(t *testing.T, c *cluster.Cluster, key string) []byte {
	kv, err := c.Store.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	return kv.Value
}

func apply(t *testing.T, c *cluster.Cluster, manifest string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := kubectl.Run(context.Background(), []string{"apply", "-f", "-"}, kubectl.IOStreams{In: strings.NewReader(manifest), Out: &out, ErrOut: &out}, kubectl.InProcessTransport(c.Handler()))
	return out.String(), code
}

// A share link of a small cluster opens as the same cluster: the
// Deployment, its ReplicaSet and its pods, each the same object.
func TestShareLinkOpensTheSameCluster(t *testing.T) {
	c1, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Nodes: 1})
	if out, code := apply(t, c1, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: hello, image: hello}]}
`); code != 0 {
		t.Fatal(out)
	}
	cl1 := c1.Client("test")
	eventually(t, 60*time.Second, "2 pods", func() (bool, string) {
		pods, _, err := cl1.Pods().List(ctx, "default", client.ListOptions{})
		return err == nil && len(pods) == 2, fmt.Sprint(len(pods), err)
	})
	var snap bytes.Buffer
	c1.Snapshot(&snap)
	link, err := snapshot.EncodeLink(snap.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot %d bytes, link %d characters", snap.Len(), len(link))
	data, err := snapshot.DecodeLink(link)
	if err != nil {
		t.Fatal(err)
	}
	c2, ctx2 := startClusterWith(t, cluster.Config{Images: images.New(), Snapshot: data})
	for _, prefix := range []string{"/registry/deployments/", "/registry/replicasets/", "/registry/pods/", "/registry/services/"} {
		a, _ := c1.Store.List(prefix)
		b, _ := c2.Store.List(prefix)
		if len(a) != len(b) {
			t.Fatalf("%s: %d keys, %d through the link", prefix, len(a), len(b))
		}
		for i := range a {
			if a[i].Key != b[i].Key || a[i].CreateRevision != b[i].CreateRevision {
				t.Fatalf("%s differs through the link from %s", b[i].Key, a[i].Key)
			}
		}
	}
	if evs, _ := c2.Store.List("/registry/events/"); len(evs) != 0 {
		// the new cluster's own events may come, but none from before
		for _, e := range evs {
			if e.CreateRevision <= c2.Store.CompactedRevision() {
				t.Fatalf("event %s came through the link", e.Key)
			}
		}
	}
	_ = ctx2
}
