package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// TestProxy: pods/proxy and services/proxy find the address upstream's
// ResourceLocation finds and hand the request to what listens there.
func TestProxy(t *testing.T) {
	// The pod network: 10.244.1.2 serves 8080 and 9090 and echoes what it
	// got; 10.244.1.3:8080 too; anything else is refused or unrouted.
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.PodNetwork = PodNetworkFunc(func(addr netip.AddrPort) (http.Handler, error) {
			switch addr.String() {
			case "10.244.1.2:8080", "10.244.1.2:9090", "10.244.1.3:8080":
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					fmt.Fprintf(w, "%s %s %s host=%s auth=%q body=%q", addr, r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("Authorization"), body)
				}), nil
			case "10.244.9.9:80":
				return nil, fmt.Errorf("no pod: %w", syscall.EHOSTUNREACH)
			}
			return nil, fmt.Errorf("nothing listens: %w", syscall.ECONNREFUSED)
		})
	})
	ctx := context.Background()
	create := func(resource string, obj runtime.Object, status func(runtime.Object)) {
		t.Helper()
		st := reg.MustLookup("", resource)
		got, err := st.Create(ctx, "default", obj, registry.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if status != nil {
			status(got)
			if _, err := st.Update(ctx, got, registry.UpdateOptions{Subresource: "status"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	pod := func(name, ip string, ports ...int32) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: "node-1",
			Containers: []corev1.Container{{Name: "side", Image: "hello"}, {Name: "web", Image: "web"}}}}
		for _, port := range ports {
			p.Spec.Containers[1].Ports = append(p.Spec.Containers[1].Ports, corev1.ContainerPort{ContainerPort: port})
		}
		create("pods", p, func(o runtime.Object) { o.(*corev1.Pod).Status.PodIP = ip })
	}
	pod("web", "10.244.1.2", 8080, 9090)
	pod("noport", "10.244.1.2")
	pod("new", "")
	pod("gone", "10.244.9.9")
	svc := func(name string, typ corev1.ServiceType, ports ...corev1.ServicePort) {
		create("services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Type: typ, ExternalName: map[bool]string{true: "example.com"}[typ == corev1.ServiceTypeExternalName], Ports: ports}}, nil)
	}
	svc("web", "", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		corev1.ServicePort{Name: "admin", Port: 90, TargetPort: intstr.FromInt32(9090)})
	svc("empty", "", corev1.ServicePort{Port: 80})
	svc("ext", corev1.ServiceTypeExternalName)
	create("endpoints", &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.244.1.2"}, {IP: "10.244.1.3"}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080}},
	}, {
		Addresses: []corev1.EndpointAddress{{IP: "10.244.1.2"}},
		Ports:     []corev1.EndpointPort{{Name: "admin", Port: 9090}},
	}}}, nil)

	base := srv.URL + "/api/v1/namespaces/default/"
	for _, tt := range []struct {
		method, path, body string
		code               int
		want               string // a regular expression would hide too much: a substring
	}{
		{"GET", "pods/web/proxy", "", 200, `10.244.1.2:8080 GET / host=10.244.1.2:8080`},
		{"GET", "pods/web:9090/proxy/a/b?x=1&y=2", "", 200, `10.244.1.2:9090 GET /a/b?x=1&y=2 host=10.244.1.2:9090`},
		{"GET", "pods/http:web:9090/proxy/", "", 200, `10.244.1.2:9090 GET / `},
		{"POST", "pods/web/proxy/form", "a=b", 200, `POST /form host=10.244.1.2:8080 auth="" body="a=b"`},
		{"DELETE", "pods/web/proxy/x", "", 200, `DELETE /x`},
		{"GET", "pods/noport/proxy/", "", 503, `"message":"error trying to reach service: dial tcp 10.244.1.2:80: connect: connection refused"`},
		{"GET", "pods/web:81/proxy/", "", 503, `"message":"error trying to reach service: dial tcp 10.244.1.2:81: connect: connection refused"`},
		{"GET", "pods/gone/proxy/", "", 503, `"message":"error trying to reach service: dial tcp 10.244.9.9:80: connect: no route to host"`},
		{"GET", "pods/new/proxy/", "", 400, `"message":"address not allowed"`},
		{"GET", "pods/nope/proxy/", "", 404, `"message":"pods \"nope\" not found"`},
		{"GET", "pods/a:b:c:d/proxy/", "", 400, `"message":"invalid pod request \"a:b:c:d\""`},
		{"GET", "pods/ftp:web:80/proxy/", "", 400, `"message":"invalid pod request \"ftp:web:80\""`},
		{"GET", "pods/https:web:8080/proxy/", "", 503, `error trying to reach service: tls: 10.244.1.2:8080 serves plain HTTP`},
		{"GET", "pods/web:http/proxy/", "", 503, `error trying to reach service: dial tcp: lookup port http: unknown port`},

		{"GET", "services/web:90/proxy/status", "", 200, `10.244.1.2:9090 GET /status`},
		{"GET", "services/web:admin/proxy/", "", 200, `10.244.1.2:9090 GET /`},
		{"GET", "services/web:81/proxy/", "", 503, `"message":"no service port 81 found for service \"web\""`},
		{"GET", "services/web/proxy/", "", 503, `"message":"no endpoints available for service \"web\""`}, // no port named ""
		{"GET", "services/empty/proxy/", "", 503, `"message":"no endpoints available for service \"empty\""`},
		{"GET", "services/ext/proxy/", "", 400, `"message":"unsupported service type \"ExternalName\""`},
		{"GET", "services/nope/proxy/", "", 404, `"message":"services \"nope\" not found"`},
	} {
		req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
		req.Header.Set("Authorization", "Bearer secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %s = %d %s\nwant %d with %s", tt.method, tt.path, resp.StatusCode, b, tt.code, tt.want)
		}
	}

	// services/proxy picks among the ready endpoints of the port: both
	// addresses of "http" answer within a few tries.
	seen := map[string]bool{}
	for range 64 {
		resp, err := http.Get(base + "services/web:80/proxy/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen[strings.Fields(string(b))[0]] = true
	}
	if !seen["10.244.1.2:8080"] || !seen["10.244.1.3:8080"] || len(seen) != 2 {
		t.Errorf("services/web:80/proxy reached %v, want both endpoints of port http", seen)
	}
}
