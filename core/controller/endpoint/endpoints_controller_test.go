package endpoint_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/endpoint"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// pod creates a pod app=web bound to node, offering http on httpPort,
// with status phase, ip and readiness as a kubelet would write them.
func pod(t *testing.T, e *controllertest.Env, name, node string, httpPort int32, phase corev1.PodPhase, ip string, ready bool) *corev1.Pod {
	t.Helper()
	p := controllertest.MakePod(name).Label("app", "web").Obj()
	p.Spec.NodeName = node
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: httpPort, Protocol: corev1.ProtocolTCP}}
	created, err := e.Client.Pods().Create(e.Ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return setStatus(t, e, created, phase, ip, ready)
}

func setStatus(t *testing.T, e *controllertest.Env, p *corev1.Pod, phase corev1.PodPhase, ip string, ready bool) *corev1.Pod {
	t.Helper()
	p = e.SetPodStatus(p, phase, ready)
	return controllertest.Update(e, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, p.Namespace, p.Name) },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
		func(p *corev1.Pod) {
			p.Status.PodIP = ip
			p.Status.PodIPs = nil
			if ip != "" {
				p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
			}
		})
}

func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9091)},
			},
		},
	}
}

// summary renders subsets as "ready[ips] notReady[ips] ports[name:port]".
type addr struct {
	IP   string `json:"ip"`
	Node string `json:"node"`
	Pod  string `json:"pod"`
}
type sub struct {
	Ready    []addr   `json:"ready,omitempty"`
	NotReady []addr   `json:"notReady,omitempty"`
	Ports    []string `json:"ports,omitempty"`
}

func summary(ep *corev1.Endpoints) string {
	var out []sub
	conv := func(as []corev1.EndpointAddress) []addr {
		var r []addr
		for _, a := range as {
			r = append(r, addr{a.IP, *a.NodeName, a.TargetRef.Name})
		}
		return r
	}
	for _, s := range ep.Subsets {
		x := sub{Ready: conv(s.Addresses), NotReady: conv(s.NotReadyAddresses)}
		for _, p := range s.Ports {
			x.Ports = append(x.Ports, p.Name+":"+string(p.Protocol)+"/"+itoa(p.Port))
		}
		out = append(out, x)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

func TestEndpoints(t *testing.T) {
	e := controllertest.NewEnv(t)
	ec, err := endpoint.New(endpoint.Config{Client: e.ClientFor(endpoint.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("endpoint", ec.Run)
	eps := client.For[*corev1.Endpoints](e.Client, "", "endpoints")
	svcs := client.For[*corev1.Service](e.Client, "", "services")

	pod(t, e, "web-1", "node-1", 8080, corev1.PodRunning, "10.244.1.2", true)
	web2 := pod(t, e, "web-2", "node-2", 8080, corev1.PodRunning, "10.244.2.2", false)
	pod(t, e, "web-3", "node-3", 8081, corev1.PodRunning, "10.244.3.2", true) // http on another number
	pod(t, e, "web-4", "node-1", 8080, corev1.PodPending, "", false)          // no IP yet
	pod(t, e, "web-5", "node-1", 8080, corev1.PodSucceeded, "10.244.1.9", false)
	other := controllertest.MakePod("other").Label("app", "db").Obj()
	if _, err := e.Client.Pods().Create(e.Ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(e.Ctx, webService()); err != nil {
		t.Fatal(err)
	}
	get := func() (*corev1.Endpoints, error) { return eps.Get(e.Ctx, "default", "web") }
	wait := func(what, want string) {
		t.Helper()
		e.Eventually(what, func() (bool, string) {
			ep, err := get()
			if err != nil {
				return false, err.Error()
			}
			got := summary(ep)
			return got == want, got
		})
	}
	wait("endpoints", `[{"ready":[{"ip":"10.244.1.2","node":"node-1","pod":"web-1"}],"notReady":[{"ip":"10.244.2.2","node":"node-2","pod":"web-2"}],"ports":["http:TCP/8080","metrics:TCP/9091"]},`+
		`{"ready":[{"ip":"10.244.3.2","node":"node-3","pod":"web-3"}],"ports":["http:TCP/8081","metrics:TCP/9091"]}]`)
	ep, _ := get()
	if ep.Labels["team"] != "a" {
		t.Errorf("labels %v, want the Service's", ep.Labels)
	}

	// web-2 turns Ready; web-1 is being deleted (its kubelet is stopping it).
	setStatus(t, e, web2, corev1.PodRunning, "10.244.2.2", true)
	if err := e.Client.Pods().Delete(e.Ctx, "default", "web-1", nil); err != nil {
		t.Fatal(err)
	}
	wait("readiness change and deletion", `[{"ready":[{"ip":"10.244.2.2","node":"node-2","pod":"web-2"}],"ports":["http:TCP/8080","metrics:TCP/9091"]},`+
		`{"ready":[{"ip":"10.244.3.2","node":"node-3","pod":"web-3"}],"ports":["http:TCP/8081","metrics:TCP/9091"]}]`)

	// Deleted by hand: created again.
	if err := eps.Delete(e.Ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("recreated", func() (bool, string) { _, err := get(); return err == nil, "" })

	// The Service goes: so do its Endpoints.
	if err := svcs.Delete(e.Ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("endpoints deleted", func() (bool, string) {
		_, err := get()
		return apierrors.IsNotFound(err), ""
	})
}

func TestSelectorlessAndHeadless(t *testing.T) {
	e := controllertest.NewEnv(t)
	ec, err := endpoint.New(endpoint.Config{Client: e.ClientFor(endpoint.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("endpoint", ec.Run)
	eps := client.For[*corev1.Endpoints](e.Client, "", "endpoints")
	svcs := client.For[*corev1.Service](e.Client, "", "services")
	// Selectorless: the user's own Endpoints are left alone.
	manual := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1"}}, Ports: []corev1.EndpointPort{{Port: 5432}}}}}
	if _, err := eps.Create(e.Ctx, manual); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(e.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}); err != nil {
		t.Fatal(err)
	}
	// Headless without ports: addresses only, and the headless label.
	pod(t, e, "db-0", "node-1", 5432, corev1.PodRunning, "10.244.1.5", true)
	if _, err := svcs.Create(e.Ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hl", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"}}}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("headless endpoints", func() (bool, string) {
		ep, err := eps.Get(e.Ctx, "default", "hl")
		if err != nil {
			return false, err.Error()
		}
		_, headless := ep.Labels[corev1.IsHeadlessService]
		got := summary(ep)
		return headless && got == `[{"ready":[{"ip":"10.244.1.5","node":"node-1","pod":"db-0"}]}]`, got
	})
	ep, err := eps.Get(e.Ctx, "default", "ext")
	if err != nil || len(ep.Subsets) != 1 || ep.Subsets[0].Addresses[0].IP != "192.0.2.1" {
		t.Errorf("selectorless Service's Endpoints changed: %+v %v", ep, err)
	}
}

func TestRepackSubsets(t *testing.T) {
	a := func(ip string) corev1.EndpointAddress { return corev1.EndpointAddress{IP: ip} }
	p := func(n int32) []corev1.EndpointPort {
		return []corev1.EndpointPort{{Name: "p", Port: n, Protocol: corev1.ProtocolTCP}}
	}
	in := []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{a("10.0.0.2")}, Ports: p(80)},
		{NotReadyAddresses: []corev1.EndpointAddress{a("10.0.0.1")}, Ports: p(80)},
		{Addresses: []corev1.EndpointAddress{a("10.0.0.3")}, Ports: p(81)},
		{Addresses: []corev1.EndpointAddress{a("10.0.0.1")}, Ports: p(80)}, // ready wins
	}
	got := endpoint.RepackSubsets(in)
	if len(got) != 2 || len(got[0].Addresses) != 2 || got[0].Addresses[0].IP != "10.0.0.1" || got[0].Ports[0].Port != 80 ||
		len(got[0].NotReadyAddresses) != 0 || got[1].Addresses[0].IP != "10.0.0.3" {
		b, _ := json.Marshal(got)
		t.Errorf("RepackSubsets = %s", b)
	}
}
