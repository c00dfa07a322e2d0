package dns_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/dns"
	"github.com/kubetab/kubetab/core/store"
)

// newServer is a real registry with a few Services, and a running DNS
// server that has synced them.
func newServer(t *testing.T) (*dns.Server, *client.Client, context.Context) {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(reg, "test")
	ctx, cancel := context.WithCancel(context.Background())
	for _, ns := range []string{"default", "other", "kube-system"} {
		if _, err := c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	services := client.For[*corev1.Service](c, "", "services")
	slices := client.For[*discoveryv1.EndpointSlice](c, discoveryv1.GroupName, "endpointslices")
	port := corev1.ServicePort{Port: 80}
	for _, s := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.100.1", Ports: []corev1.ServicePort{port}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "other"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.100.9", Ports: []corev1.ServicePort{port}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{port}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "nobody", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{port}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "alias", Namespace: "default"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "web.other.svc.cluster.local"}},
	} {
		if _, err := services.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	host := "db-0"
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-abc", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.2.5"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.244.1.5"}, Hostname: &host, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.244.3.5"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
		},
	}
	if _, err := slices.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	s, err := dns.New(dns.Config{Client: c})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, s.HasSynced)
	return s, c, ctx
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func answer(r dns.Response) string {
	var parts []string
	for _, rr := range r.Answer {
		parts = append(parts, rr.String())
	}
	return r.Rcode.String() + " " + strings.Join(parts, "; ")
}

func TestQuery(t *testing.T) {
	s, _, _ := newServer(t)
	cases := []struct {
		name string
		q    string
		typ  dns.Type
		want string
	}{
		{"a Service", "web.default.svc.cluster.local.", dns.TypeA, "NOERROR web.default.svc.cluster.local.\t30\tIN\tA\t10.96.100.1"},
		{"case and final dot do not matter", "WEB.Default.svc.cluster.local", dns.TypeA, "NOERROR web.default.svc.cluster.local.\t30\tIN\tA\t10.96.100.1"},
		{"same name, other namespace", "web.other.svc.cluster.local", dns.TypeA, "NOERROR web.other.svc.cluster.local.\t30\tIN\tA\t10.96.100.9"},
		{"no such Service", "nope.default.svc.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"no such namespace", "web.nope.svc.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"headless: ready endpoints only", "db.default.svc.cluster.local", dns.TypeA,
			"NOERROR db.default.svc.cluster.local.\t30\tIN\tA\t10.244.1.5; db.default.svc.cluster.local.\t30\tIN\tA\t10.244.2.5"},
		{"headless without endpoints", "nobody.default.svc.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"an endpoint by hostname", "db-0.db.default.svc.cluster.local", dns.TypeA, "NOERROR db-0.db.default.svc.cluster.local.\t30\tIN\tA\t10.244.1.5"},
		{"an endpoint by dashed address", "10-244-2-5.db.default.svc.cluster.local", dns.TypeA, "NOERROR 10-244-2-5.db.default.svc.cluster.local.\t30\tIN\tA\t10.244.2.5"},
		{"a not-ready endpoint", "10-244-3-5.db.default.svc.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"ExternalName", "ext.default.svc.cluster.local", dns.TypeA, "NOERROR ext.default.svc.cluster.local.\t30\tIN\tCNAME\texample.com."},
		{"a pod by address", "10-244-1-2.default.pod.cluster.local", dns.TypeA, "NOERROR 10-244-1-2.default.pod.cluster.local.\t30\tIN\tA\t10.244.1.2"},
		{"a pod in a namespace that does not exist", "10-244-1-2.nope.pod.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"not an address", "web-1.default.pod.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"a namespace exists", "default.svc.cluster.local", dns.TypeA, "NOERROR "},
		{"a namespace does not", "nope.svc.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"the zone apex", "cluster.local", dns.TypeA, "NOERROR "},
		{"something else in the zone", "web.default.cluster.local", dns.TypeA, "NXDOMAIN "},
		{"a CNAME question", "web.default.svc.cluster.local", dns.TypeCNAME, "NOERROR "},
		{"outside the zone: no upstream", "example.com", dns.TypeA, "NXDOMAIN "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := answer(s.Query(tc.q, tc.typ)); got != tc.want {
				t.Errorf("Query(%q, %v) =\n  %q\nwant\n  %q", tc.q, tc.typ, got, tc.want)
			}
		})
	}
}

func TestResolver(t *testing.T) {
	s, c, ctx := newServer(t)
	fromDefault, fromOther := s.ResolverFor("default"), s.ResolverFor("other")
	cases := []struct {
		r    *dns.Resolver
		host string
		want string // addresses, or the error
	}{
		{fromDefault, "web", "[10.96.100.1]"},
		{fromDefault, "web.default", "[10.96.100.1]"},
		{fromDefault, "web.default.svc", "[10.96.100.1]"},
		{fromDefault, "web.default.svc.cluster.local", "[10.96.100.1]"},
		{fromDefault, "web.default.svc.cluster.local.", "[10.96.100.1]"},
		{fromOther, "web", "[10.96.100.9]"},
		{fromOther, "web.default", "[10.96.100.1]"},
		{fromDefault, "web.other", "[10.96.100.9]"},
		{fromDefault, "db", "[10.244.1.5 10.244.2.5]"},
		{fromDefault, "db-0.db", "[10.244.1.5]"},
		{fromDefault, "10-244-1-7.default.pod", "[10.244.1.7]"},
		{fromDefault, "alias", "[10.96.100.9]"}, // CNAME inside the zone, followed
		{fromDefault, "10.1.2.3", "[10.1.2.3]"},
		{fromDefault, "nope", "lookup nope on 10.96.0.10:53: no such host"},
		{fromDefault, "nope.default.svc.cluster.local", "lookup nope.default.svc.cluster.local on 10.96.0.10:53: no such host"},
		{fromDefault, "nobody", "lookup nobody on 10.96.0.10:53: no such host"},
		{fromDefault, "ext", "lookup ext on 10.96.0.10:53: no such host"}, // example.com: no upstream
		{fromDefault, "example.com", "lookup example.com on 10.96.0.10:53: no such host"},
		{fromDefault, "bad..name", "lookup bad..name on 10.96.0.10:53: no such host"},
	}
	for _, tc := range cases {
		got, err := tc.r.LookupHost(ctx, tc.host)
		res := fmt.Sprint(got)
		if err != nil {
			res = err.Error()
			var dnsErr *net.DNSError
			if !errors.As(err, &dnsErr) {
				t.Errorf("%s: error %T, want *net.DNSError", tc.host, err)
			}
		}
		if res != tc.want {
			t.Errorf("from %s: LookupHost(%q) = %s, want %s", tc.r.Search[0], tc.host, res, tc.want)
		}
	}

	// The answer follows the API: a new Service resolves once the server's
	// watch has it.
	if _, err := client.For[*corev1.Service](c, "", "services").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "default"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.100.50", Ports: []corev1.ServicePort{{Port: 80}}}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		a, err := fromDefault.LookupHost(ctx, "late")
		return err == nil && fmt.Sprint(a) == "[10.96.100.50]"
	})
}

func TestSearchPath(t *testing.T) {
	s, _, _ := newServer(t)
	r := s.ResolverFor("default")
	if got, want := r.ResolvConf(), "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"; got != want {
		t.Errorf("resolv.conf =\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ host, want string }{
		{"web", "web.default.svc.cluster.local. web.svc.cluster.local. web.cluster.local. web."},
		{"a.b.c.d.e", "a.b.c.d.e.default.svc.cluster.local. a.b.c.d.e.svc.cluster.local. a.b.c.d.e.cluster.local. a.b.c.d.e."},
		{"a.b.c.d.e.f", "a.b.c.d.e.f. a.b.c.d.e.f.default.svc.cluster.local. a.b.c.d.e.f.svc.cluster.local. a.b.c.d.e.f.cluster.local."},
		{"web.default.svc.cluster.local.", "web.default.svc.cluster.local."},
	} {
		if got := strings.Join(r.Candidates(tc.host), " "); got != tc.want {
			t.Errorf("Candidates(%q) = %s, want %s", tc.host, got, tc.want)
		}
	}
}
