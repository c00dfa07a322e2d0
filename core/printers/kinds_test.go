package printers

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Fixtures of the kinds beyond pods, nodes and the apps workloads; each
// covers the branches of its row function.

type goldenCase struct {
	name string
	list runtime.Object
	objs []runtime.Object
}

func moreGoldenCases() []goldenCase {
	return []goldenCase{
		{"services", &corev1.ServiceList{}, services()},
		{"endpoints", &corev1.EndpointsList{}, endpoints()},
		{"endpointslices", &discoveryv1.EndpointSliceList{}, endpointSlices()},
		{"configmaps", &corev1.ConfigMapList{}, []runtime.Object{
			&corev1.ConfigMap{ObjectMeta: om("settings", time.Hour), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {1}}},
			&corev1.ConfigMap{ObjectMeta: om("kube-root-ca.crt", 48*time.Hour), Data: map[string]string{"ca.crt": "..."}},
			&corev1.ConfigMap{ObjectMeta: om("empty", time.Minute)},
		}},
		{"secrets", &corev1.SecretList{}, []runtime.Object{
			&corev1.Secret{ObjectMeta: om("db", time.Hour), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"user": []byte("a"), "password": []byte("b")}},
			&corev1.Secret{ObjectMeta: om("tls", 2*time.Hour), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}},
			&corev1.Secret{ObjectMeta: om("empty", time.Minute), Type: corev1.SecretTypeOpaque},
		}},
		{"serviceaccounts", &corev1.ServiceAccountList{}, []runtime.Object{
			&corev1.ServiceAccount{ObjectMeta: om("default", 26*time.Hour)},
			&corev1.ServiceAccount{ObjectMeta: om("builder", time.Hour), Secrets: []corev1.ObjectReference{{Name: "builder-token"}}},
		}},
		{"leases", &coordinationv1.LeaseList{}, []runtime.Object{
			&coordinationv1.Lease{ObjectMeta: om("node-1", 3*time.Hour), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("node-1")}},
			&coordinationv1.Lease{ObjectMeta: om("unheld", time.Minute)},
		}},
		{"priorityclasses", &schedulingv1.PriorityClassList{}, priorityClasses()},
		{"daemonsets", &appsv1.DaemonSetList{}, daemonSets()},
		{"statefulsets", &appsv1.StatefulSetList{}, statefulSets()},
		{"jobs", &batchv1.JobList{}, jobs()},
		{"cronjobs", &batchv1.CronJobList{}, cronJobs()},
		{"events-v1", &eventsv1.EventList{}, eventsV1()},
		{"poddisruptionbudgets", &policyv1.PodDisruptionBudgetList{}, podDisruptionBudgets()},
		{"controllerrevisions", &appsv1.ControllerRevisionList{}, controllerRevisions()},
		{"replicationcontrollers", &corev1.ReplicationControllerList{}, replicationControllers()},
	}
}

func controllerRevisions() []runtime.Object {
	owned := om("fluentd-5d9c7b8f6", time.Hour)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "fluentd", Controller: ptr(true)}}
	sts := om("web-6b7c9d4f5", 3*time.Minute)
	sts.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", Controller: ptr(true)}}
	return []runtime.Object{
		&appsv1.ControllerRevision{ObjectMeta: owned, Revision: 1},
		&appsv1.ControllerRevision{ObjectMeta: sts, Revision: 3},
		&appsv1.ControllerRevision{ObjectMeta: om("orphan-1", time.Minute), Revision: 2},
	}
}

func replicationControllers() []runtime.Object {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}, {Name: "log", Image: "busybox"}}}}
	return []runtime.Object{
		&corev1.ReplicationController{ObjectMeta: om("nginx", 10*time.Minute),
			Spec:   corev1.ReplicationControllerSpec{Replicas: ptr(int32(3)), Selector: map[string]string{"app": "nginx"}, Template: tmpl},
			Status: corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2}},
		&corev1.ReplicationController{ObjectMeta: om("no-template", time.Minute), Spec: corev1.ReplicationControllerSpec{Replicas: ptr(int32(0))}},
	}
}

func om(name string, age time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(age)}
}

func services() []runtime.Object {
	svc := func(name string, t corev1.ServiceType, ip string, ports ...corev1.ServicePort) *corev1.Service {
		s := &corev1.Service{ObjectMeta: om(name, 5*time.Minute)}
		s.Spec.Type, s.Spec.Ports = t, ports
		if ip != "" {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
		}
		return s
	}
	port := func(p, node int32, proto corev1.Protocol) corev1.ServicePort {
		return corev1.ServicePort{Port: p, NodePort: node, Protocol: proto, TargetPort: intstr.FromInt32(p)}
	}
	kube := svc("kubernetes", corev1.ServiceTypeClusterIP, "10.96.0.1", port(443, 0, corev1.ProtocolTCP))
	kube.CreationTimestamp = ago(26 * time.Hour)
	web := svc("web", corev1.ServiceTypeClusterIP, "10.101.23.4", port(80, 0, corev1.ProtocolTCP))
	web.Spec.Selector = map[string]string{"app": "web", "tier": "front"}
	dns := svc("kube-dns", corev1.ServiceTypeClusterIP, "10.96.0.10", port(53, 0, corev1.ProtocolUDP), port(53, 0, corev1.ProtocolTCP), port(9153, 0, corev1.ProtocolTCP))
	np := svc("web-np", corev1.ServiceTypeNodePort, "10.98.7.6", port(80, 30080, corev1.ProtocolTCP))
	np.Spec.Selector = map[string]string{"app": "web"}
	lbPending := svc("lb-pending", corev1.ServiceTypeLoadBalancer, "10.99.1.2", port(443, 31443, corev1.ProtocolTCP))
	lb := svc("lb", corev1.ServiceTypeLoadBalancer, "10.99.1.3", port(80, 31080, corev1.ProtocolTCP))
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.20"}, {Hostname: "lb.example.com"}}
	lbExt := svc("lb-external-ips", corev1.ServiceTypeLoadBalancer, "10.99.1.4", port(80, 31081, corev1.ProtocolTCP))
	lbExt.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.21"}}
	lbExt.Spec.ExternalIPs = []string{"198.51.100.7"}
	ext := svc("external", corev1.ServiceTypeExternalName, "")
	ext.Spec.ExternalName = "db.example.com"
	headless := svc("headless", corev1.ServiceTypeClusterIP, "None")
	withIPs := svc("external-ips", corev1.ServiceTypeClusterIP, "10.100.0.9", port(8080, 0, corev1.ProtocolTCP))
	withIPs.Spec.ExternalIPs = []string{"198.51.100.1", "198.51.100.2"}
	return []runtime.Object{kube, web, dns, np, lbPending, lb, lbExt, ext, headless, withIPs}
}

func endpoints() []runtime.Object {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	return []runtime.Object{
		&corev1.Endpoints{ObjectMeta: om("kubernetes", 26*time.Hour), Subsets: []corev1.EndpointSubset{
			{Addresses: addrs("172.18.0.1"), Ports: []corev1.EndpointPort{{Name: "https", Port: 6443}}}}},
		&corev1.Endpoints{ObjectMeta: om("web", 5*time.Minute), Subsets: []corev1.EndpointSubset{
			{Addresses: addrs("10.244.1.5", "10.244.2.7", "10.244.3.2", "10.244.1.9", "10.244.2.8"), Ports: []corev1.EndpointPort{{Port: 8080}}}}},
		&corev1.Endpoints{ObjectMeta: om("headless", time.Minute), Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.244.1.10")}}},
		&corev1.Endpoints{ObjectMeta: om("no-pods", time.Minute)},
	}
}

func endpointSlices() []runtime.Object {
	p := func(n int32) *int32 { return &n }
	return []runtime.Object{
		&discoveryv1.EndpointSlice{ObjectMeta: om("kubernetes", 26*time.Hour), AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr("https"), Port: p(6443)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"172.18.0.1"}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: om("web-x7k2p", 5*time.Minute), AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Port: p(80)}, {Port: p(443)}, {Name: ptr("metrics")}, {Port: p(9090)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}}, {Addresses: []string{"10.244.2.7"}},
				{Addresses: []string{"10.244.3.2"}}, {Addresses: []string{"10.244.1.9"}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: om("empty-abcde", time.Minute), AddressType: discoveryv1.AddressTypeIPv4},
	}
}

func priorityClasses() []runtime.Object {
	lower, never := corev1.PreemptLowerPriority, corev1.PreemptNever
	pc := func(name string, v int32, def bool, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(26 * time.Hour)},
			Value: v, GlobalDefault: def, PreemptionPolicy: policy}
	}
	return []runtime.Object{
		pc("system-cluster-critical", 2000000000, false, &lower),
		pc("system-node-critical", 2000001000, false, &lower),
		pc("batch-low", -10, true, &never),
		pc("unset-policy", 5, false, nil),
	}
}

func daemonSets() []runtime.Object {
	ds := func(name string, desired, current, ready, updated, available int32, nodeSelector map[string]string) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: om(name, 10*time.Minute)}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
		d.Spec.Template.Spec.NodeSelector = nodeSelector
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: name, Image: name + ":1.0"}}
		d.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: desired, CurrentNumberScheduled: current,
			NumberReady: ready, UpdatedNumberScheduled: updated, NumberAvailable: available}
		return d
	}
	return []runtime.Object{
		ds("kube-proxy", 3, 3, 3, 3, 3, map[string]string{"kubernetes.io/os": "linux"}),
		ds("log-agent", 3, 2, 1, 1, 0, nil),
	}
}

func statefulSets() []runtime.Object {
	ss := func(name string, replicas, ready int32) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: om(name, 20*time.Minute)}
		s.Spec.Replicas = &replicas
		s.Spec.Template.Spec.Containers = []corev1.Container{{Name: "db", Image: "db:15"}, {Name: "exporter", Image: "exporter:2"}}
		s.Status.ReadyReplicas = ready
		return s
	}
	return []runtime.Object{ss("db", 3, 3), ss("cache", 2, 0)}
}

func jobs() []runtime.Object {
	job := func(name string, completions, parallelism *int32, succeeded int32, started, finished time.Duration, conds ...batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: om(name, 30*time.Minute)}
		j.Spec.Completions, j.Spec.Parallelism = completions, parallelism
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "0b1c"}}
		j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "pi", Image: "perl:5"}}
		j.Status.Succeeded = succeeded
		if started > 0 {
			t := ago(started)
			j.Status.StartTime = &t
		}
		if finished > 0 {
			t := ago(finished)
			j.Status.CompletionTime = &t
		}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return j
	}
	one, three, five := ptr(int32(1)), ptr(int32(3)), ptr(int32(5))
	terminating := job("terminating", one, one, 0, 2*time.Minute, 0)
	terminating.DeletionTimestamp = ptr(ago(time.Second))
	return []runtime.Object{
		job("pi", one, one, 1, 10*time.Minute, 9*time.Minute, batchv1.JobComplete),
		job("running", five, three, 2, 90*time.Second, 0),
		job("failed", one, one, 0, 20*time.Minute, 0, batchv1.JobFailed),
		job("suspended", one, one, 0, 0, 0, batchv1.JobSuspended),
		job("failure-target", one, one, 0, time.Minute, 0, batchv1.JobFailureTarget),
		job("work-queue", nil, three, 0, time.Minute, 0),
		job("single-queue", nil, one, 0, time.Minute, 0),
		terminating,
		job("not-started", one, one, 0, 0, 0),
	}
}

func cronJobs() []runtime.Object {
	cj := func(name, schedule string, tz *string, suspend *bool, active int, last time.Duration) *batchv1.CronJob {
		c := &batchv1.CronJob{ObjectMeta: om(name, 2*time.Hour)}
		c.Spec.Schedule, c.Spec.TimeZone, c.Spec.Suspend = schedule, tz, suspend
		c.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "backup", Image: "backup:1"}}
		for i := 0; i < active; i++ {
			c.Status.Active = append(c.Status.Active, corev1.ObjectReference{Name: name + "-1"})
		}
		if last > 0 {
			t := ago(last)
			c.Status.LastScheduleTime = &t
		}
		return c
	}
	return []runtime.Object{
		cj("backup", "0 3 * * *", nil, ptr(false), 0, 9*time.Hour),
		cj("every-minute", "*/1 * * * *", ptr("Asia/Tokyo"), ptr(false), 1, 30*time.Second),
		cj("paused", "@hourly", nil, ptr(true), 0, 0),
		cj("unset", "@daily", nil, nil, 0, 0),
	}
}

func eventsV1() []runtime.Object {
	created := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.17", Namespace: "default"},
		EventTime:  metav1.NewMicroTime(now.Add(-time.Minute)), ReportingController: "deployment-controller",
		ReportingInstance: "kube-controller-manager", Action: "Scale", Reason: "ScalingReplicaSet",
		Regarding: corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: "default"},
		Note:      "Scaled up replica set web-7d4b9 from 0 to 3", Type: "Normal",
	}
	series := created.DeepCopy()
	series.Name, series.Reason, series.Note = "web.18", "Pulled", "Container image already present"
	series.Series = &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-10 * time.Second))}
	legacy := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1.1", Namespace: "default"},
		Reason:     "Scheduled", Note: "Successfully assigned default/web-1 to node-1", Type: "Normal",
		Regarding:        corev1.ObjectReference{Kind: "Pod", Name: "web-1", Namespace: "default"},
		DeprecatedSource: corev1.EventSource{Component: "default-scheduler"}, DeprecatedCount: 1,
		DeprecatedFirstTimestamp: ago(2 * time.Minute), DeprecatedLastTimestamp: ago(2 * time.Minute),
	}
	return []runtime.Object{created, series, legacy}
}

func podDisruptionBudgets() []runtime.Object {
	budget := func(name string, age time.Duration, minAvailable, maxUnavailable *intstr.IntOrString, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: om(name, age),
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	}
	two, half, zero := intstr.FromInt32(2), intstr.FromString("50%"), intstr.FromInt32(0)
	return []runtime.Object{
		budget("web", 5*time.Minute, &two, nil, 1),
		budget("db", 2*time.Hour, nil, &zero, 0),
		budget("cache", 30*time.Second, &half, nil, 3),
		budget("anything-goes", 26*time.Hour, nil, nil, 0),
	}
}
