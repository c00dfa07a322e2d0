package endpointslice_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/endpointslice"
	"github.com/kubetab/kubetab/core/controller/garbagecollector"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

type env struct {
	*controllertest.Env
	t      *testing.T
	slices client.Resource[*discoveryv1.EndpointSlice]
	svcs   client.Resource[*corev1.Service]
}

func newEnv(t *testing.T, maxPer int) *env {
	e := controllertest.NewEnv(t)
	c, err := endpointslice.New(endpointslice.Config{Client: e.ClientFor(endpointslice.Component), Clock: e.Clock, MaxEndpointsPerSlice: maxPer})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := garbagecollector.New(garbagecollector.Config{Client: e.ClientFor(garbagecollector.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("endpointslice", c.Run)
	e.Start("garbagecollector", gc.Run)
	return &env{Env: e, t: t,
		slices: client.For[*discoveryv1.EndpointSlice](e.Client, "discovery.k8s.io", "endpointslices"),
		svcs:   client.For[*corev1.Service](e.Client, "", "services")}
}

func (e *env) pod(name, node string, httpPort int32, ip string, ready bool) *corev1.Pod {
	p := controllertest.MakePod(name).Label("app", "web").Obj()
	p.Spec.NodeName = node
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: httpPort, Protocol: corev1.ProtocolTCP}}
	created, err := e.Client.Pods().Create(e.Ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.setStatus(created, ip, ready)
}

func (e *env) setStatus(p *corev1.Pod, ip string, ready bool) *corev1.Pod {
	p = e.SetPodStatus(p, corev1.PodRunning, ready)
	return controllertest.Update(e.Env, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, p.Namespace, p.Name) },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
		func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}} })
}

func (e *env) list() []*discoveryv1.EndpointSlice {
	l, _, err := e.slices.List(e.Ctx, "default", client.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(l, func(i, j int) bool { return describe(l[i]) < describe(l[j]) })
	return l
}

// describe renders a slice as "IPv4 [http:8080] 10.244.1.2(pod web-1 node-1 ready/serving) ...".
func describe(s *discoveryv1.EndpointSlice) string {
	var ports []string
	for _, p := range s.Ports {
		ports = append(ports, fmt.Sprintf("%s:%d", *p.Name, *p.Port))
	}
	var eps []string
	for _, ep := range s.Endpoints {
		c := ep.Conditions
		cond := fmt.Sprintf("%v/%v/%v", *c.Ready, *c.Serving, *c.Terminating)
		eps = append(eps, fmt.Sprintf("%s(%s %s %s)", strings.Join(ep.Addresses, ","), ep.TargetRef.Name, *ep.NodeName, cond))
	}
	sort.Strings(eps)
	return fmt.Sprintf("%s [%s] %s", s.AddressType, strings.Join(ports, ","), strings.Join(eps, " "))
}

func (e *env) wait(what string, want ...string) []*discoveryv1.EndpointSlice {
	e.t.Helper()
	var l []*discoveryv1.EndpointSlice
	e.Eventually(what, func() (bool, string) {
		l = e.list()
		var got []string
		for _, s := range l {
			got = append(got, describe(s))
		}
		return strings.Join(got, "\n") == strings.Join(want, "\n"), "\n" + strings.Join(got, "\n")
	})
	return l
}

func webService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
}

func TestEndpointSlices(t *testing.T) {
	e := newEnv(t, 0)
	e.pod("web-1", "node-1", 8080, "10.244.1.2", true)
	web2 := e.pod("web-2", "node-2", 8080, "10.244.2.2", false)
	e.pod("web-3", "node-3", 8081, "10.244.3.2", true)
	svc, err := e.svcs.Create(e.Ctx, webService())
	if err != nil {
		t.Fatal(err)
	}
	// One slice per port mapping; not-ready pods are endpoints with
	// ready=false.
	slices := e.wait("slices",
		"IPv4 [http:8080] 10.244.1.2(web-1 node-1 true/true/false) 10.244.2.2(web-2 node-2 false/false/false)",
		"IPv4 [http:8081] 10.244.3.2(web-3 node-3 true/true/false)")
	for _, s := range slices {
		ref := metav1.GetControllerOf(s)
		if s.Labels[discoveryv1.LabelServiceName] != "web" || s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" ||
			s.Labels["team"] != "a" || ref == nil || ref.Kind != "Service" || ref.UID != svc.UID || !strings.HasPrefix(s.Name, "web-") {
			t.Errorf("slice %s: labels %v owner %+v", s.Name, s.Labels, ref)
		}
		if tr := s.Endpoints[0].TargetRef; tr.Kind != "Pod" || tr.Namespace != "default" || tr.UID == "" {
			t.Errorf("targetRef %+v", tr)
		}
	}
	first := slices[0].Name

	// Readiness changes and a terminating pod: updated in place (same slice).
	e.setStatus(web2, "10.244.2.2", true)
	if err := e.Client.Pods().Delete(e.Ctx, "default", "web-1", nil); err != nil {
		t.Fatal(err)
	}
	slices = e.wait("updated",
		"IPv4 [http:8080] 10.244.1.2(web-1 node-1 false/true/true) 10.244.2.2(web-2 node-2 true/true/false)",
		"IPv4 [http:8081] 10.244.3.2(web-3 node-3 true/true/false)")
	if slices[0].Name != first {
		t.Errorf("the slice was replaced (%s, was %s) instead of updated", slices[0].Name, first)
	}

	// The Service goes: the garbage collector deletes its slices.
	if err := e.svcs.Delete(e.Ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	e.wait("slices deleted")
}

func TestPlaceholderAndMaxEndpoints(t *testing.T) {
	e := newEnv(t, 2)
	if _, err := e.svcs.Create(e.Ctx, webService()); err != nil {
		t.Fatal(err)
	}
	e.wait("placeholder", "IPv4 [] ")
	for i := 1; i <= 3; i++ {
		e.pod(fmt.Sprintf("web-%d", i), "node-1", 8080, fmt.Sprintf("10.244.1.%d", i+1), true)
	}
	// At most 2 endpoints a slice; the placeholder goes.
	e.wait("two slices",
		"IPv4 [http:8080] 10.244.1.2(web-1 node-1 true/true/false) 10.244.1.3(web-2 node-1 true/true/false)",
		"IPv4 [http:8080] 10.244.1.4(web-3 node-1 true/true/false)")
	// A pod leaving makes room that the next one fills, with no new slice.
	zero := int64(0)
	if err := e.Client.Pods().Delete(e.Ctx, "default", "web-1", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.wait("web-1 gone",
		"IPv4 [http:8080] 10.244.1.3(web-2 node-1 true/true/false)",
		"IPv4 [http:8080] 10.244.1.4(web-3 node-1 true/true/false)")
	before := e.list()
	e.pod("web-4", "node-1", 8080, "10.244.1.5", true)
	e.Eventually("web-4 added to a slice with room", func() (bool, string) {
		l := e.list()
		var got []string
		n := 0
		for _, s := range l {
			got = append(got, describe(s))
			n += len(s.Endpoints)
		}
		same := len(l) == 2 && l[0].UID != l[1].UID
		for _, s := range l {
			same = same && (s.UID == before[0].UID || s.UID == before[1].UID)
		}
		return same && n == 3, strings.Join(got, "\n")
	})
}

// TestPlaceholderFilledInPlace: the empty slice a Service gets before it
// has endpoints is the one that receives them (upstream's finalize turns
// the create + delete into an update), so `kubectl wait` on it succeeds.
func TestPlaceholderFilledInPlace(t *testing.T) {
	e := newEnv(t, 0)
	if _, err := e.svcs.Create(e.Ctx, webService()); err != nil {
		t.Fatal(err)
	}
	placeholder := e.wait("placeholder", "IPv4 [] ")[0]
	e.pod("web-1", "node-1", 8080, "10.244.1.2", true)
	got := e.wait("filled", "IPv4 [http:8080] 10.244.1.2(web-1 node-1 true/true/false)")[0]
	if got.Name != placeholder.Name || got.UID != placeholder.UID {
		t.Errorf("the placeholder %s (%s) was replaced by %s (%s), want it updated", placeholder.Name, placeholder.UID, got.Name, got.UID)
	}
	// A port change replaces the slice's group: again an update of the
	// same slice, not a create and a delete.
	svc, err := e.svcs.Get(e.Ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].TargetPort = intstr.FromInt32(9090)
	if _, err := e.svcs.Update(e.Ctx, svc); err != nil {
		t.Fatal(err)
	}
	got = e.wait("ports changed", "IPv4 [http:9090] 10.244.1.2(web-1 node-1 true/true/false)")[0]
	if got.UID != placeholder.UID {
		t.Errorf("the slice was replaced (%s) on a port change, want it updated", got.Name)
	}
}
