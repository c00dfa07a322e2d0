package registry

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/store"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// newRegistry returns the default registry over a fresh store with the
// bootstrap objects (namespaces, their default ServiceAccounts, the system
// PriorityClasses and the kubernetes Service).
func newRegistry(t *testing.T) *Registry {
	t.Helper()
	reg, err := Default(Config{Store: store.New(store.Config{}), Clock: testingclock.NewFakeClock(testNow)})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Bootstrap(context.Background(), BootstrapConfig{}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func storeOf(t *testing.T, reg *Registry, group, resource string) *Store {
	t.Helper()
	s, ok := reg.Lookup(schema.GroupResource{Group: group, Resource: resource})
	if !ok {
		t.Fatalf("%s.%s is not served", resource, group)
	}
	return s
}

// storeFor finds the store of obj's Go type (events.k8s.io and core/v1
// Events are different types).
func storeFor(t *testing.T, reg *Registry, obj runtime.Object) *Store {
	t.Helper()
	s, ok := reg.ForKindOf(obj)
	if !ok {
		t.Fatalf("no store for %T", obj)
	}
	return s
}

func create(t *testing.T, reg *Registry, obj runtime.Object) (runtime.Object, error) {
	t.Helper()
	acc, _ := meta.Accessor(obj)
	return storeFor(t, reg, obj).Create(context.Background(), acc.GetNamespace(), obj, CreateOptions{})
}

func mustCreate[T runtime.Object](t *testing.T, reg *Registry, obj T) T {
	t.Helper()
	out, err := create(t, reg, obj)
	if err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
	return out.(T)
}

func update(t *testing.T, reg *Registry, obj runtime.Object) (runtime.Object, error) {
	t.Helper()
	return storeFor(t, reg, obj).Update(context.Background(), obj, UpdateOptions{})
}

func mustUpdate[T runtime.Object](t *testing.T, reg *Registry, obj T) T {
	t.Helper()
	out, err := update(t, reg, obj)
	if err != nil {
		t.Fatalf("update %T: %v", obj, err)
	}
	return out.(T)
}

func get[T runtime.Object](t *testing.T, reg *Registry, sample T, namespace, name string) T {
	t.Helper()
	out, err := storeFor(t, reg, sample).Get(context.Background(), namespace, name)
	if err != nil {
		t.Fatalf("get %s/%s: %v", namespace, name, err)
	}
	return out.(T)
}

func del(t *testing.T, reg *Registry, sample runtime.Object, namespace, name string) error {
	t.Helper()
	_, _, err := storeFor(t, reg, sample).Delete(context.Background(), namespace, name, nil)
	return err
}

// wantStatus checks err is a Status with code and a message containing each
// of want.
func wantStatus(t *testing.T, err error, code int32, want ...string) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("error %v (%T) is not an API status; want %d", err, err, code)
	}
	if got := st.Status().Code; got != code {
		t.Errorf("code %d, want %d: %s", got, code, st.Status().Message)
	}
	for _, w := range want {
		if !strings.Contains(st.Status().Message, w) {
			t.Errorf("message %q does not contain %q", st.Status().Message, w)
		}
	}
}

// --- fixtures ---

func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default"}
}

func podTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "app", Image: "hello:1.0"}}},
	}
}

func service(name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: objMeta(name), Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": name},
		Ports:    []corev1.ServicePort{{Port: 80}},
	}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: objMeta(name), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "hello:1.0"}}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func job(name string, mutate ...func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: objMeta(name), Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func cronJob(name, schedule string, mutate ...func(*batchv1.CronJob)) *batchv1.CronJob {
	c := &batchv1.CronJob{ObjectMeta: objMeta(name), Spec: batchv1.CronJobSpec{Schedule: schedule,
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyOnFailure)}}}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func daemonSet(name string, mutate ...func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	l := map[string]string{"app": name}
	d := &appsv1.DaemonSet{ObjectMeta: objMeta(name), Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l, "")}}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func statefulSet(name string, mutate ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	l := map[string]string{"app": name}
	s := &appsv1.StatefulSet{ObjectMeta: objMeta(name), Spec: appsv1.StatefulSetSpec{ServiceName: name,
		Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l, "")}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func deployment(name string, mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	l := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: objMeta(name), Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l, "")}}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func slice(name string, mutate ...func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: objMeta(name), AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}}},
		Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(80))}}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func eventV1(name string, mutate ...func(*eventsv1.Event)) *eventsv1.Event {
	e := &eventsv1.Event{ObjectMeta: objMeta(name), EventTime: metav1.NewMicroTime(testNow),
		ReportingController: "kubetab.io/test", ReportingInstance: "test-1", Action: "Testing", Reason: "Tested",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"}, Note: "a note", Type: corev1.EventTypeNormal}
	for _, m := range mutate {
		m(e)
	}
	return e
}

// --- defaults ---

func TestDefaults(t *testing.T) {
	reg := newRegistry(t)

	svc := mustCreate(t, reg, service("web", func(s *corev1.Service) { s.Spec.Ports[0].Name = "" }))
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.SessionAffinity != corev1.ServiceAffinityNone ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(80) ||
		svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack ||
		len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol ||
		svc.Spec.InternalTrafficPolicy == nil || *svc.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster ||
		svc.Spec.ExternalTrafficPolicy != "" || svc.Generation != 0 {
		t.Errorf("service defaults: %+v", svc.Spec)
	}

	sec := mustCreate(t, reg, &corev1.Secret{ObjectMeta: objMeta("s"), StringData: map[string]string{"k": "v"}})
	if sec.Type != corev1.SecretTypeOpaque || string(sec.Data["k"]) != "v" || sec.StringData != nil {
		t.Errorf("secret defaults: type %q data %v stringData %v", sec.Type, sec.Data, sec.StringData)
	}

	ds := mustCreate(t, reg, daemonSet("agent"))
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil ||
		*ru.MaxUnavailable != intstr.FromInt32(1) || *ru.MaxSurge != intstr.FromInt32(0) || *ds.Spec.RevisionHistoryLimit != 10 ||
		ds.Annotations[templateGenerationAnnotation] != "1" || ds.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("daemonset defaults: %+v %v", ds.Spec, ds.Annotations)
	}

	ss := mustCreate(t, reg, statefulSet("db"))
	if ss.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement || ss.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType ||
		*ss.Spec.UpdateStrategy.RollingUpdate.Partition != 0 || *ss.Spec.Replicas != 1 || *ss.Spec.RevisionHistoryLimit != 10 ||
		ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("statefulset defaults: %+v", ss.Spec)
	}

	j := mustCreate(t, reg, job("pi"))
	uid := string(j.UID)
	if *j.Spec.Completions != 1 || *j.Spec.Parallelism != 1 || *j.Spec.BackoffLimit != 6 ||
		*j.Spec.CompletionMode != batchv1.NonIndexedCompletion || *j.Spec.Suspend || *j.Spec.ManualSelector ||
		*j.Spec.PodReplacementPolicy != batchv1.TerminatingOrFailed {
		t.Errorf("job defaults: %+v", j.Spec)
	}
	wantLabels := map[string]string{"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
	if !equalJSON(j.Spec.Template.Labels, wantLabels) || !equalJSON(j.Labels, wantLabels) ||
		!equalJSON(j.Spec.Selector.MatchLabels, map[string]string{"batch.kubernetes.io/controller-uid": uid}) {
		t.Errorf("job selector %v, template labels %v, labels %v", j.Spec.Selector, j.Spec.Template.Labels, j.Labels)
	}

	cj := mustCreate(t, reg, cronJob("backup", "0 3 * * *"))
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.Suspend || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || *cj.Spec.FailedJobsHistoryLimit != 1 {
		t.Errorf("cronjob defaults: %+v", cj.Spec)
	}

	pc := mustCreate(t, reg, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000})
	if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("priorityclass preemptionPolicy %v", pc.PreemptionPolicy)
	}

	es := mustCreate(t, reg, slice("web-abc", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name, s.Ports[0].Protocol = nil, nil }))
	if es.Ports[0].Name == nil || *es.Ports[0].Name != "" || *es.Ports[0].Protocol != corev1.ProtocolTCP || es.Generation != 1 {
		t.Errorf("endpointslice defaults: %+v generation %d", es.Ports, es.Generation)
	}

	ep := mustCreate(t, reg, &corev1.Endpoints{ObjectMeta: objMeta("web"), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.244.1.5"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}})
	if ep.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("endpoints port protocol %q", ep.Subsets[0].Ports[0].Protocol)
	}

	cm := mustCreate(t, reg, &corev1.ConfigMap{ObjectMeta: objMeta("cm"), Data: map[string]string{"a": "b"}})
	if cm.Generation != 0 {
		t.Errorf("configmap has generation %d; upstream ConfigMaps have none", cm.Generation)
	}

	p := mustCreate(t, reg, pod("web", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: mustQuantity("500m")}
		p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch"}}
	}))
	c := p.Spec.Containers[0]
	if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != "500m" {
		t.Errorf("pod requests not defaulted from limits: %v", c.Resources.Requests)
	}
	if lp := c.LivenessProbe; lp.TimeoutSeconds != 1 || lp.PeriodSeconds != 10 || lp.FailureThreshold != 3 || lp.HTTPGet.Path != "/" || lp.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("probe defaults: %+v", lp)
	}
	if p.Spec.Volumes[0].EmptyDir == nil {
		t.Errorf("a volume without a source is an emptyDir: %+v", p.Spec.Volumes[0])
	}
	if p.Spec.DeprecatedServiceAccount != "default" || p.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccount %q serviceAccountName %q", p.Spec.DeprecatedServiceAccount, p.Spec.ServiceAccountName)
	}
}

// --- the bad-input matrix: each create gets upstream's code and message and
// stores nothing ---

func TestCreateInvalid(t *testing.T) {
	reg := newRegistry(t)
	mustCreate(t, reg, service("taken", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.50" }))
	mustCreate(t, reg, service("np-taken", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30100
	}))
	mustCreate(t, reg, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default-pc"}, Value: 1, GlobalDefault: true})

	cases := []struct {
		name string
		obj  runtime.Object
		code int32
		want []string
	}{
		// services
		{"service no ports", service("a", func(s *corev1.Service) { s.Spec.Ports = nil }), 422, []string{`Service "a" is invalid`, "spec.ports: Required value"}},
		{"service name not DNS-1035", service("1web"), 422, []string{"metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character"}},
		{"service bad type", service("a", func(s *corev1.Service) { s.Spec.Type = "Magic" }), 422, []string{`spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`}},
		{"service port 0", service("a", func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 }), 422, []string{"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"}},
		{"service two ports unnamed", service("a", func(s *corev1.Service) { s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 81}) }), 422, []string{"spec.ports[0].name: Required value", "spec.ports[1].name: Required value"}},
		{"service duplicate port", service("a", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}
		}), 422, []string{"spec.ports[1]: Duplicate value"}},
		{"service bad protocol", service("a", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }), 422, []string{`spec.ports[0].protocol: Unsupported value: "ICMP"`}},
		{"service nodePort on ClusterIP", service("a", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 }), 422, []string{"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
		{"service bad clusterIP", service("a", func(s *corev1.Service) { s.Spec.ClusterIP = "banana" }), 422, []string{`spec.clusterIPs[0]: Invalid value: "banana": must be a valid IP address`}},
		{"service clusterIP out of range", service("a", func(s *corev1.Service) { s.Spec.ClusterIP = "192.168.1.1" }), 422, []string{`spec.clusterIPs: Invalid value: ["192.168.1.1"]: failed to allocate IP 192.168.1.1: the provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12`}},
		{"service clusterIP taken", service("a", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.50" }), 422, []string{"failed to allocate IP 10.96.0.50: provided IP is already allocated"}},
		{"service kubernetes IP taken", service("a", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.1" }), 422, []string{"provided IP is already allocated"}},
		{"service nodePort out of range", service("a", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 8080
		}), 422, []string{"spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"}},
		{"service nodePort taken", service("a", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30100
		}), 422, []string{"spec.ports[0].nodePort: Invalid value: 30100: provided port is already allocated"}},
		{"service ExternalName without name", service("a", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName }), 422, []string{"spec.externalName: Required value"}},
		{"service bad selector", service("a", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"a b": "c"} }), 422, []string{`spec.selector: Invalid value: "a b"`}},
		{"service bad session affinity", service("a", func(s *corev1.Service) { s.Spec.SessionAffinity = "Sticky" }), 422, []string{`spec.sessionAffinity: Unsupported value: "Sticky"`}},
		{"service dual stack", service("a", func(s *corev1.Service) { s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack) }), 422, []string{"spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"}},
		{"service in missing namespace", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "nowhere"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, 404, []string{`namespaces "nowhere" not found`}},
		// configmaps and secrets
		{"configmap bad key", &corev1.ConfigMap{ObjectMeta: objMeta("a"), Data: map[string]string{"a/b": "x"}}, 422, []string{`data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`}},
		{"configmap key in both", &corev1.ConfigMap{ObjectMeta: objMeta("a"), Data: map[string]string{"k": "x"}, BinaryData: map[string][]byte{"k": nil}}, 422, []string{"data[k]: Invalid value: \"k\": duplicate of key present in binaryData"}},
		{"configmap too big", &corev1.ConfigMap{ObjectMeta: objMeta("a"), Data: map[string]string{"k": strings.Repeat("x", 1<<20+1)}}, 422, []string{"Too long: may not be more than 1048576 bytes"}},
		{"secret bad key", &corev1.Secret{ObjectMeta: objMeta("a"), Data: map[string][]byte{"a b": nil}}, 422, []string{`data[a b]: Invalid value: "a b"`}},
		{"secret tls without keys", &corev1.Secret{ObjectMeta: objMeta("a"), Type: corev1.SecretTypeTLS}, 422, []string{"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
		{"secret dockerconfigjson bad json", &corev1.Secret{ObjectMeta: objMeta("a"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}}, 422, []string{`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>"`}},
		{"secret sa token without account", &corev1.Secret{ObjectMeta: objMeta("a"), Type: corev1.SecretTypeServiceAccountToken}, 422, []string{"metadata.annotations[kubernetes.io/service-account.name]: Required value"}},
		{"serviceaccount bad name", &corev1.ServiceAccount{ObjectMeta: objMeta("Bad_Name")}, 422, []string{`metadata.name: Invalid value: "Bad_Name"`}},
		// endpoints and slices
		{"endpoints loopback", &corev1.Endpoints{ObjectMeta: objMeta("a"), Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}}}}, 422, []string{`subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`}},
		{"endpoints no addresses", &corev1.Endpoints{ObjectMeta: objMeta("a"), Subsets: []corev1.EndpointSubset{{}}}, 422, []string{"subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"}},
		{"slice no addressType", slice("a", func(s *discoveryv1.EndpointSlice) { s.AddressType = "" }), 422, []string{"addressType: Required value"}},
		{"slice bad address", slice("a", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"not-an-ip"} }), 422, []string{`endpoints[0].addresses[0]: Invalid value: "not-an-ip": must be a valid IP address`}},
		{"slice IPv6 in IPv4 slice", slice("a", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"fd00::1"} }), 422, []string{"must be an IPv4 address"}},
		{"slice endpoint without address", slice("a", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil }), 422, []string{"endpoints[0].addresses: Required value: must contain at least 1 address"}},
		// leases
		{"lease zero duration", &coordinationv1.Lease{ObjectMeta: objMeta("a"), Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr(int32(0))}}, 422, []string{"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"}},
		// events
		{"events.k8s.io without eventTime", eventV1("a", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} }), 422, []string{"eventTime: Required value"}},
		{"events.k8s.io without reportingController", eventV1("a", func(e *eventsv1.Event) { e.ReportingController = "" }), 422, []string{"reportingController: Required value"}},
		{"events.k8s.io with deprecated count", eventV1("a", func(e *eventsv1.Event) { e.DeprecatedCount = 3 }), 422, []string{`count: Invalid value: "": needs to be unset`}},
		{"events.k8s.io bad type", eventV1("a", func(e *eventsv1.Event) { e.Type = "Fatal" }), 422, []string{`type: Invalid value: "": has invalid value: Fatal`}},
		{"core event namespace mismatch", &corev1.Event{ObjectMeta: objMeta("a"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "kube-system"}}, 422, []string{`involvedObject.namespace: Invalid value: "kube-system": does not match event.namespace`}},
		// workloads
		{"daemonset restartPolicy", daemonSet("a", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }), 422, []string{`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`}},
		{"daemonset empty selector", daemonSet("a", func(d *appsv1.DaemonSet) { d.Spec.Selector = &metav1.LabelSelector{} }), 422, []string{"spec.selector: Invalid value: {}: empty selector is invalid for daemonset"}},
		{"daemonset selector mismatch", daemonSet("a", func(d *appsv1.DaemonSet) { d.Spec.Template.Labels = map[string]string{"app": "b"} }), 422, []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`"}},
		{"daemonset maxSurge and maxUnavailable", daemonSet("a", func(d *appsv1.DaemonSet) {
			two := intstr.FromInt32(2)
			d.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two, MaxSurge: &two}
		}), 422, []string{"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 2: may not be set when maxUnavailable is non-zero"}},
		{"statefulset bad podManagementPolicy", statefulSet("a", func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" }), 422, []string{`spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`}},
		{"statefulset negative replicas", statefulSet("a", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr(int32(-1)) }), 422, []string{"spec.replicas: Invalid value: -1: must be greater than or equal to 0"}},
		{"statefulset activeDeadlineSeconds", statefulSet("a", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(5)) }), 422, []string{"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"}},
		{"deployment maxSurge and maxUnavailable 0", deployment("a", func(d *appsv1.Deployment) {
			zero := intstr.FromInt32(0)
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &zero}
		}), 422, []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"}},
		{"deployment bad label", deployment("a", func(d *appsv1.Deployment) { d.Labels = map[string]string{"bad key!": "v"} }), 422, []string{`metadata.labels: Invalid value: "bad key!"`}},
		{"job restartPolicy Always", job("a", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }), 422, []string{`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"job negative backoffLimit", job("a", func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr(int32(-1)) }), 422, []string{"spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"}},
		{"job indexed without completions", job("a", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism = ptr(int32(2))
		}), 422, []string{"spec.completions: Required value: when completion mode is Indexed"}},
		{"job selector not generated", job("a", func(j *batchv1.Job) {
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
			j.Spec.Template.Labels = map[string]string{"app": "a"}
		}), 422, []string{"spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"a\",\"batch.kubernetes.io/controller-uid\":", "`selector` not auto-generated"}},
		{"job manual selector mismatch", job("a", func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptr(true)
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
		}), 422, []string{"`selector` does not match template `labels`"}},
		{"cronjob bad schedule", cronJob("a", "every minute"), 422, []string{`spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]`}},
		{"cronjob no schedule", cronJob("a", ""), 422, []string{"spec.schedule: Required value"}},
		{"cronjob TZ in schedule", cronJob("a", "TZ=UTC 0 * * * *"), 422, []string{"cannot use TZ or CRON_TZ in schedule, use timeZone field instead"}},
		{"cronjob bad time zone", cronJob("a", "0 * * * *", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Mars/Olympus") }), 422, []string{`spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`}},
		{"cronjob bad concurrencyPolicy", cronJob("a", "0 * * * *", func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" }), 422, []string{`spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`}},
		{"cronjob long name", cronJob(strings.Repeat("a", 53), "0 * * * *"), 422, []string{"metadata.name: Invalid value: \"" + strings.Repeat("a", 53) + "\": must be no more than 52 characters"}},
		{"cronjob template selector", cronJob("a", "0 * * * *", func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		}), 422, []string{"spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated"}},
		// priority classes
		{"priorityclass system prefix", &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}, Value: 5}, 422, []string{"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"}},
		{"priorityclass too high", &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "huge"}, Value: 1000000001}, 422, []string{"value: Forbidden: maximum allowed value of a user defined priority is 1000000000"}},
		{"priorityclass second global default", &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "another"}, Value: 2, GlobalDefault: true}, 403, []string{`priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass default-pc is already marked as default. Only one default can exist`}},
		{"priorityclass exists", SystemPriorityClasses()[0], 409, []string{`priorityclasses.scheduling.k8s.io "system-node-critical" already exists`}},
		// pods
		{"pod unknown priority class", pod("a", func(p *corev1.Pod) { p.Spec.PriorityClassName = "gold" }), 403, []string{`pods "a" is forbidden: no PriorityClass with name gold was found`}},
		{"pod priority set by hand", pod("a", func(p *corev1.Pod) { p.Spec.Priority = ptr(int32(7)) }), 403, []string{"the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1 from the given PriorityClass name"}},
		{"pod missing service account", pod("a", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }), 403, []string{`pods "a" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found`}},
		{"pod env name", pod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}} }), 422, []string{`spec.containers[0].env[0].name: Invalid value: "A=B"`}},
		{"pod container port", pod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}} }), 422, []string{"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{"pod requests above limits", pod("a", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("64Mi")}, Requests: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("128Mi")}}
		}), 422, []string{`spec.containers[0].resources.requests[memory]: Invalid value: "128Mi": must be less than or equal to memory limit of 64Mi`}},
		{"pod mount of missing volume", pod("a", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}), 422, []string{`spec.containers[0].volumeMounts[0].name: Not found: "data"`}},
		{"pod toleration", pod("a", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}), 422, []string{"value must be empty when `operator` is 'Exists'"}},
		{"pod no containers", pod("a", func(p *corev1.Pod) { p.Spec.Containers = nil }), 422, []string{"spec.containers: Required value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			counts := map[string]int{}
			for _, p := range []string{"/registry/", ipAddressPrefix} {
				counts[p] = reg.KV().Count(p)
			}
			_, err := create(t, reg, tc.obj)
			if err == nil {
				t.Fatalf("created; want %d", tc.code)
			}
			wantStatus(t, err, tc.code, tc.want...)
			for p, n := range counts {
				if got := reg.KV().Count(p); got != n {
					t.Errorf("%s holds %d keys after a failed create, want %d", p, got, n)
				}
			}
		})
	}
}

// TestPodLazyFields: FieldsOf a pod has exactly Fields' fields and values.
func TestPodLazyFields(t *testing.T) {
	pods := []*corev1.Pod{
		{},
		{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
				ServiceAccountName: "default", HostNetwork: true},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.2", NominatedNodeName: "node-2"}},
	}
	var s podStrategy
	for _, p := range pods {
		want, got := s.Fields(p), s.FieldsOf(p)
		for k, v := range want {
			if !got.Has(k) || got.Get(k) != v {
				t.Errorf("%q of %q: Has %v, Get %q; want %q", k, p.Name, got.Has(k), got.Get(k), v)
			}
		}
		for _, k := range []string{"metadata.namespace", "spec.nodename", "status.hostIP", ""} {
			if _, ok := want[k]; !ok && got.Has(k) {
				t.Errorf("%q of %q: Has, but Fields has no such field", k, p.Name)
			}
		}
		// Every field selector matches both the same way.
		for _, sel := range []string{"spec.nodeName=node-1", "spec.nodeName!=node-1", "status.phase=Running,metadata.name=web-1", "metadata.namespace=", "spec.hostNetwork=true"} {
			fs, err := fields.ParseSelector(sel)
			if err != nil {
				t.Fatal(err)
			}
			if fs.Matches(want) != fs.Matches(got) {
				t.Errorf("%s on %q: %v with Fields, %v with FieldsOf", sel, p.Name, fs.Matches(want), fs.Matches(got))
			}
		}
	}
}
