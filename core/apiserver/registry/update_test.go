package registry

import (
	"context"
	eventsv1 "k8s.io/api/events/v1"
	"math/big"
	"net/netip"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestUpdateImmutable: each update changes a field upstream refuses to
// change, gets 422 with upstream's path and message, and the stored object
// stays as it was.
func TestUpdateImmutable(t *testing.T) {
	reg := newRegistry(t)
	cases := []struct {
		name   string
		create runtime.Object
		change func(runtime.Object)
		want   []string
	}{
		{"service clusterIP", service("svc-ip"), func(o runtime.Object) {
			s := o.(*corev1.Service)
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.77", []string{"10.96.0.77"}
		}, []string{`spec.clusterIPs[0]: Invalid value: ["10.96.0.77"]: may not change once set`}},
		{"secret type", &corev1.Secret{ObjectMeta: objMeta("sec")}, func(o runtime.Object) {
			o.(*corev1.Secret).Type = corev1.SecretTypeBasicAuth
			o.(*corev1.Secret).Data = map[string][]byte{"username": []byte("u")}
		}, []string{`type: Invalid value: "kubernetes.io/basic-auth": field is immutable`}},
		{"immutable configmap data", &corev1.ConfigMap{ObjectMeta: objMeta("frozen"), Immutable: ptr(true), Data: map[string]string{"a": "1"}}, func(o runtime.Object) {
			o.(*corev1.ConfigMap).Data["a"] = "2"
		}, []string{"data: Forbidden: field is immutable when `immutable` is set"}},
		{"immutable configmap unset", &corev1.ConfigMap{ObjectMeta: objMeta("frozen2"), Immutable: ptr(true)}, func(o runtime.Object) {
			o.(*corev1.ConfigMap).Immutable = nil
		}, []string{"immutable: Forbidden: field is immutable when `immutable` is set"}},
		{"job selector", job("j1"), func(o runtime.Object) {
			o.(*batchv1.Job).Spec.Selector.MatchLabels["extra"] = "x"
		}, []string{"spec.selector: Invalid value:", "field is immutable"}},
		{"job template", job("j2"), func(o runtime.Object) {
			o.(*batchv1.Job).Spec.Template.Spec.Containers[0].Image = "hello:2.0"
		}, []string{"spec.template: Invalid value:", "field is immutable"}},
		{"job completions", job("j3"), func(o runtime.Object) {
			o.(*batchv1.Job).Spec.Completions = ptr(int32(4))
		}, []string{"spec.completions: Invalid value: 4: field is immutable"}},
		{"deployment selector", deployment("d1"), func(o runtime.Object) {
			d := o.(*appsv1.Deployment)
			d.Spec.Selector.MatchLabels["tier"] = "x"
			d.Spec.Template.Labels["tier"] = "x"
		}, []string{"spec.selector: Invalid value:", "field is immutable"}},
		{"daemonset selector", daemonSet("ds1"), func(o runtime.Object) {
			d := o.(*appsv1.DaemonSet)
			d.Spec.Selector.MatchLabels["tier"] = "x"
			d.Spec.Template.Labels["tier"] = "x"
		}, []string{"spec.selector: Invalid value:", "field is immutable"}},
		{"statefulset serviceName", statefulSet("ss1"), func(o runtime.Object) {
			o.(*appsv1.StatefulSet).Spec.ServiceName = "other"
		}, []string{"spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"}},
		{"priorityclass value", &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pc1"}, Value: 10}, func(o runtime.Object) {
			o.(*schedulingv1.PriorityClass).Value = 11
		}, []string{"value: Forbidden: may not be changed in an update."}},
		{"endpointslice addressType", slice("es1"), func(o runtime.Object) {
			s := o.(*discoveryv1.EndpointSlice)
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"web.example.com"}
		}, []string{`addressType: Invalid value: "FQDN": field is immutable`}},
		{"pod spec", pod("p1"), func(o runtime.Object) {
			o.(*corev1.Pod).Spec.RestartPolicy = corev1.RestartPolicyNever
		}, []string{"spec: Forbidden: pod updates may not change fields other than"}},
		{"events.k8s.io note", eventV1("ev1"), func(o runtime.Object) {
			o.(*eventsv1.Event).Note = "changed"
		}, []string{`message: Invalid value: "changed": field is immutable`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			created, err := create(t, reg, tc.create)
			if err != nil {
				t.Fatal(err)
			}
			before := created.DeepCopyObject()
			changed := created.DeepCopyObject()
			tc.change(changed)
			_, err = update(t, reg, changed)
			if err == nil {
				t.Fatal("update accepted")
			}
			wantStatus(t, err, 422, tc.want...)
			acc, _ := metaAccessor(before)
			now, err := storeFor(t, reg, before).Get(context.Background(), acc.GetNamespace(), acc.GetName())
			if err != nil {
				t.Fatal(err)
			}
			if !equalJSON(now, before) {
				t.Errorf("stored object changed by a refused update")
			}
		})
	}
}

// TestUpdateAllowed: the changes upstream allows go through.
func TestUpdateAllowed(t *testing.T) {
	reg := newRegistry(t)
	// A suspended Job that never started may change its scheduling directives.
	j := mustCreate(t, reg, job("later", func(j *batchv1.Job) { j.Spec.Suspend = ptr(true) }))
	j.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	mustUpdate(t, reg, j)
	// A StatefulSet may change replicas and template.
	ss := mustCreate(t, reg, statefulSet("db"))
	ss.Spec.Replicas = ptr(int32(3))
	ss.Spec.Template.Spec.Containers[0].Image = "hello:2.0"
	ss = mustUpdate(t, reg, ss)
	if ss.Generation != 2 {
		t.Errorf("statefulset generation %d after a spec change, want 2", ss.Generation)
	}
	// A DaemonSet's template change bumps its template generation.
	ds := mustCreate(t, reg, daemonSet("agent"))
	ds.Spec.Template.Spec.Containers[0].Image = "hello:2.0"
	ds = mustUpdate(t, reg, ds)
	if ds.Annotations[templateGenerationAnnotation] != "2" {
		t.Errorf("templateGeneration annotation %q, want 2", ds.Annotations[templateGenerationAnnotation])
	}
	// An update without clusterIP keeps the allocated one (kubectl replace).
	svc := mustCreate(t, reg, service("web"))
	replaced := service("web")
	replaced.ResourceVersion = svc.ResourceVersion
	replaced.Labels = map[string]string{"new": "label"}
	got := mustUpdate(t, reg, replaced)
	if got.Spec.ClusterIP != svc.Spec.ClusterIP || !equalJSON(got.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
		t.Errorf("clusterIP %q after an update without one, want %q", got.Spec.ClusterIP, svc.Spec.ClusterIP)
	}
	// The scale subresource works for StatefulSets.
	st := storeOf(t, reg, "apps", "statefulsets")
	sc, err := st.GetScale(context.Background(), "default", "db")
	if err != nil || sc.Spec.Replicas != 3 || sc.Status.Selector != "app=db" {
		t.Fatalf("scale %+v %v", sc, err)
	}
	sc.Spec.Replicas = 5
	if _, err := st.UpdateScale(context.Background(), sc, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, reg, &appsv1.StatefulSet{}, "default", "db"); *got.Spec.Replicas != 5 {
		t.Errorf("replicas %d after scale, want 5", *got.Spec.Replicas)
	}
	// Status updates keep the spec.
	j = get(t, reg, &batchv1.Job{}, "default", "later")
	j.Status.Active = 1
	j.Spec.Parallelism = ptr(int32(9))
	if _, err := storeOf(t, reg, "batch", "jobs").Update(context.Background(), j, UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
	if j = get(t, reg, &batchv1.Job{}, "default", "later"); j.Status.Active != 1 || *j.Spec.Parallelism != 1 {
		t.Errorf("status update: active %d parallelism %d", j.Status.Active, *j.Spec.Parallelism)
	}
}

// --- Service clusterIP and nodePort allocation ---

func ipKeys(reg *Registry) int { return reg.KV().Count(ipAddressPrefix) }

func TestServiceClusterIPAllocation(t *testing.T) {
	reg := newRegistry(t)
	cidr := netip.MustParsePrefix(DefaultServiceCIDR)
	if ipKeys(reg) != 1 {
		t.Fatalf("%d IPAddress objects after bootstrap, want 1 (the kubernetes Service)", ipKeys(reg))
	}
	kube := get(t, reg, &corev1.Service{}, "default", KubernetesServiceName)
	if kube.Spec.ClusterIP != "10.96.0.1" {
		t.Fatalf("kubernetes Service at %s, want 10.96.0.1", kube.Spec.ClusterIP)
	}
	seen := map[string]bool{kube.Spec.ClusterIP: true}
	for i := 0; i < 20; i++ {
		svc := mustCreate(t, reg, service("s"+string(rune('a'+i))))
		ip := netip.MustParseAddr(svc.Spec.ClusterIP)
		if !cidr.Contains(ip) || seen[svc.Spec.ClusterIP] || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP {
			t.Fatalf("service %s got %s (clusterIPs %v): not a fresh IP of %s", svc.Name, ip, svc.Spec.ClusterIPs, cidr)
		}
		// Dynamic picks come from above the static band (the first 256).
		if off := ip.As4(); off[1] == 96 && off[2] == 0 {
			t.Errorf("dynamic IP %s is in the static band", ip)
		}
		seen[svc.Spec.ClusterIP] = true
	}
	if ipKeys(reg) != 21 {
		t.Errorf("%d IPAddress objects, want 21", ipKeys(reg))
	}
	// An asked-for IP; deleting the Service frees it for another. The
	// IPAddress object names its Service.
	mustCreate(t, reg, service("fixed", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.10" }))
	kv, err := reg.KV().Get(ipAddressKey("10.96.0.10"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"IPAddress"`, `"name":"10.96.0.10"`, `"parentRef":{"group":"","name":"fixed","namespace":"default","resource":"services"}`, `"ipaddress.kubernetes.io/managed-by":"ipallocator.k8s.io"`} {
		if !strings.Contains(string(kv.Value), want) {
			t.Errorf("IPAddress %s lacks %s", kv.Value, want)
		}
	}
	if _, err := create(t, reg, service("again", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.10" })); err == nil {
		t.Fatal("a second Service got 10.96.0.10")
	}
	if err := del(t, reg, &corev1.Service{}, "default", "fixed"); err != nil {
		t.Fatal(err)
	}
	if ipKeys(reg) != 21 {
		t.Errorf("%d IPAddress objects after delete, want 21", ipKeys(reg))
	}
	again := mustCreate(t, reg, service("again", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.10" }))
	if again.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("got %s", again.Spec.ClusterIP)
	}
	// A create that fails after allocating (the name exists) leaks nothing;
	// a dry run allocates nothing.
	var dry runtime.Object
	n := ipKeys(reg)
	if _, err := create(t, reg, service("again")); err == nil {
		t.Fatal("created a duplicate")
	}
	dry, err = storeOf(t, reg, "", "services").Create(context.Background(), "default", service("dry"), CreateOptions{DryRun: true})
	if err != nil || dry.(*corev1.Service).Spec.ClusterIP == "" {
		t.Fatalf("dry run: %v %+v", err, dry)
	}
	if ipKeys(reg) != n {
		t.Errorf("%d IPAddress objects, want %d", ipKeys(reg), n)
	}
	// Headless and ExternalName Services hold no IP.
	h := mustCreate(t, reg, service("headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }))
	e := mustCreate(t, reg, service("ext", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName, s.Spec.Ports, s.Spec.Selector = corev1.ServiceTypeExternalName, "db.example.com", nil, nil
	}))
	if h.Spec.ClusterIP != "None" || e.Spec.ClusterIP != "" || ipKeys(reg) != n {
		t.Errorf("headless %q, externalName %q, %d IPs (want %d)", h.Spec.ClusterIP, e.Spec.ClusterIP, ipKeys(reg), n)
	}
	// ExternalName -> ClusterIP allocates; back releases.
	e.Spec.Type, e.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
	e.Spec.Ports = []corev1.ServicePort{{Port: 80}}
	e = mustUpdate(t, reg, e)
	if e.Spec.ClusterIP == "" || ipKeys(reg) != n+1 {
		t.Fatalf("ExternalName -> ClusterIP: clusterIP %q, %d IPs", e.Spec.ClusterIP, ipKeys(reg))
	}
	e.Spec.Type, e.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
	e = mustUpdate(t, reg, e)
	if e.Spec.ClusterIP != "" || len(e.Spec.IPFamilies) != 0 || ipKeys(reg) != n {
		t.Errorf("ClusterIP -> ExternalName: clusterIP %q families %v, %d IPs", e.Spec.ClusterIP, e.Spec.IPFamilies, ipKeys(reg))
	}
}

func nodePortsInUse(t *testing.T, reg *Registry) int {
	t.Helper()
	n := 0
	err := reg.updatePorts(true, func(bits *big.Int) error {
		for i := 0; i < reg.nodePorts.size; i++ {
			n += int(bits.Bit(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestServiceNodePortAllocation(t *testing.T) {
	reg := newRegistry(t)
	np := mustCreate(t, reg, service("np", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}, {Name: "dns", Port: 80, Protocol: corev1.ProtocolUDP}}
	}))
	p := np.Spec.Ports
	for _, port := range p {
		if port.NodePort < 30000 || port.NodePort > 32767 {
			t.Errorf("nodePort %d out of range", port.NodePort)
		}
	}
	if p[0].NodePort == p[1].NodePort || p[2].NodePort != p[0].NodePort {
		t.Errorf("nodePorts %d %d %d: distinct ports, and port 80 shares one over TCP and UDP", p[0].NodePort, p[1].NodePort, p[2].NodePort)
	}
	if np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Errorf("externalTrafficPolicy %q", np.Spec.ExternalTrafficPolicy)
	}
	if got := nodePortsInUse(t, reg); got != 2 {
		t.Errorf("%d nodePorts in use, want 2", got)
	}
	lb := mustCreate(t, reg, service("lb", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}))
	if lb.Spec.Ports[0].NodePort == 0 || lb.Spec.HealthCheckNodePort == 0 || lb.Spec.AllocateLoadBalancerNodePorts == nil || !*lb.Spec.AllocateLoadBalancerNodePorts {
		t.Errorf("load balancer: %+v", lb.Spec)
	}
	if got := nodePortsInUse(t, reg); got != 4 {
		t.Errorf("%d nodePorts in use, want 4", got)
	}
	// NodePort -> ClusterIP gives the ports back; deleting releases the rest.
	np.Spec.Type = corev1.ServiceTypeClusterIP
	np = mustUpdate(t, reg, np)
	if np.Spec.Ports[0].NodePort != 0 || np.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("after -> ClusterIP: %+v", np.Spec)
	}
	if got := nodePortsInUse(t, reg); got != 2 {
		t.Errorf("%d nodePorts in use after NodePort -> ClusterIP, want 2", got)
	}
	if err := del(t, reg, &corev1.Service{}, "default", "lb"); err != nil {
		t.Fatal(err)
	}
	if got := nodePortsInUse(t, reg); got != 0 {
		t.Errorf("%d nodePorts in use after deleting, want 0", got)
	}
	// An asked-for port, then the same port for another Service.
	mustCreate(t, reg, service("fixed", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
	}))
	_, err := create(t, reg, service("dup", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30080
	}))
	wantStatus(t, err, 422, "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated")
	// The failed create released the clusterIP it took first.
	if ipKeys(reg) != 3 { // kubernetes, np, fixed
		t.Errorf("%d IPAddress objects, want 3", ipKeys(reg))
	}
	// ClusterIP -> NodePort allocates.
	np.Spec.Type = corev1.ServiceTypeNodePort
	np = mustUpdate(t, reg, np)
	if np.Spec.Ports[0].NodePort == 0 {
		t.Errorf("ClusterIP -> NodePort: no nodePort")
	}
}
