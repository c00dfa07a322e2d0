package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/curl"
	"github.com/kubetab/kubetab/core/dns"
	"github.com/kubetab/kubetab/core/proxy"
	"github.com/kubetab/kubetab/wasm/images"
)

// webDeployment is n replicas of the web image serving on containerPort
// 8080, told their pod IP through the downward API.
func webDeployment(name string, n int32) *appsv1.Deployment {
	lbl := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "web",
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
					Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
						FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				}}},
			},
		},
	}
}

func webService(name string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// readyEndpoints are the ready addresses of a Service's EndpointSlices, as
// the endpointslice controller writes them.
func readyEndpoints(ctx context.Context, c *cluster.Cluster, svc string) []string {
	slices, _, err := client.For[*discoveryv1.EndpointSlice](c.Client("test"), discoveryv1.GroupName, "endpointslices").List(ctx, "default",
		client.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc})})
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				out = append(out, e.Addresses[0])
			}
		}
	}
	sort.Strings(out)
	return out
}

// usable is what node's kube-proxy sends a Service's ClusterIP traffic to.
func usable(c *cluster.Cluster, node, svc string) []string {
	p, _ := c.Proxier(node)
	var out []string
	for _, sp := range p.ServicePorts() {
		if sp.Name.Name == svc && sp.Name.Namespace == "default" {
			for _, e := range sp.Usable {
				out = append(out, e.Addr.Addr().String())
			}
		}
	}
	sort.Strings(out)
	return out
}

var helloLine = regexp.MustCompile(`^web: hello from (\S+) \((\S+)\)\n`)

// fetch GETs url through tr and returns the pod name and IP the web image
// answered with.
func fetch(t *testing.T, ctx context.Context, tr http.RoundTripper, url string) (pod, ip string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := helloLine.FindStringSubmatch(string(body))
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET %s: %s %q", url, resp.Status, body)
	}
	return m[1], m[2]
}

// startWeb runs the web Deployment and Service and waits until every
// kube-proxy has its n ready endpoints.
func startWeb(t *testing.T, c *cluster.Cluster, ctx context.Context, typ corev1.ServiceType, n int32) (*corev1.Service, map[string]string) {
	t.Helper()
	cl := c.Client("test")
	if _, err := cl.Deployments().Create(ctx, webDeployment("web", n)); err != nil {
		t.Fatal(err)
	}
	svc, err := client.For[*corev1.Service](cl, "", "services").Create(ctx, webService("web", typ))
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{} // name → IP
	eventually(t, 60*time.Second, fmt.Sprintf("%d ready endpoints in every kube-proxy", n), func() (bool, string) {
		ps, _, err := cl.Pods().List(ctx, "default", client.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
		if err != nil {
			return false, err.Error()
		}
		clear(pods)
		for _, p := range ps {
			pods[p.Name] = p.Status.PodIP
		}
		eps := readyEndpoints(ctx, c, "web")
		state := fmt.Sprintf("pods %v, slices %v", pods, eps)
		if len(eps) != int(n) {
			return false, state
		}
		for _, node := range []string{"node-1", "node-2", "node-3"} {
			if u := usable(c, node, "web"); len(u) != int(n) {
				return false, state + fmt.Sprintf(", %s kube-proxy %v", node, u)
			}
		}
		return true, state
	})
	return svc, pods
}

// TestServiceLoadBalancing is the acceptance test of kube-proxy and the
// cluster DNS: 300 requests to a Service over 3 web pods reach all 3, the
// name resolves to the ClusterIP, and a deleted pod leaves the rotation.
func TestServiceLoadBalancing(t *testing.T) {
	c, ctx := startCluster(t)
	svc, pods := startWeb(t, c, ctx, corev1.ServiceTypeClusterIP, 3)
	tr, err := c.ConsoleTransport()
	if err != nil {
		t.Fatal(err)
	}

	// The DNS name resolves to the ClusterIP, by every name a pod in
	// default may use.
	d, err := c.DNS()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "web.default", "web.default.svc", "web.default.svc.cluster.local"} {
		addrs, err := d.ResolverFor("default").LookupHost(ctx, name)
		if err != nil || len(addrs) != 1 || addrs[0] != svc.Spec.ClusterIP {
			t.Errorf("%s resolves to %v (%v), want the ClusterIP %s", name, addrs, err, svc.Spec.ClusterIP)
		}
	}

	// 300 requests through node-1's kube-proxy reach all 3 pods, and each
	// answers with its own name and IP.
	counts := map[string]int{}
	for range 300 {
		pod, ip := fetch(t, ctx, tr, "http://web.default.svc.cluster.local/")
		if pods[pod] != ip {
			t.Fatalf("answer from %s (%s); the pods are %v", pod, ip, pods)
		}
		counts[pod]++
	}
	if len(counts) != 3 {
		t.Fatalf("300 requests reached %d pods: %v", len(counts), counts)
	}
	t.Logf("300 requests: %v", counts)

	// A pod address works directly.
	for name, ip := range pods {
		if got, _ := fetch(t, ctx, tr, "http://"+ip+":8080/"); got != name {
			t.Errorf("http://%s:8080/ answered as %s, want %s", ip, got, name)
		}
		break
	}

	// A deleted pod leaves the rotation of every node's kube-proxy, and the
	// ReplicaSet's replacement joins it.
	var victim string
	for name := range pods {
		victim = name
		break
	}
	if err := c.Client("test").Pods().Delete(ctx, "default", victim, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "3 ready endpoints without "+victim, func() (bool, string) {
		ps, _, _ := c.Client("test").Pods().List(ctx, "default", client.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
		ready := 0
		for _, p := range ps {
			if p.Name == victim {
				return false, "the deleted pod is still there"
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 3 && len(usable(c, "node-1", "web")) == 3, fmt.Sprintf("%d ready, node-1 %v", ready, usable(c, "node-1", "web"))
	})
	counts = map[string]int{}
	for range 150 {
		pod, _ := fetch(t, ctx, tr, "http://web/")
		counts[pod]++
	}
	if counts[victim] > 0 || len(counts) != 3 {
		t.Errorf("after deleting %s, 150 requests reached %v", victim, counts)
	}

	// The kube-dns Service is there, at the address pods' resolv.conf names.
	dnsSvc, err := client.For[*corev1.Service](c.Client("test"), "", "services").Get(ctx, dns.ServiceNamespace, dns.ServiceName)
	if err != nil || dnsSvc.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("kube-dns: %v %v", dnsSvc, err)
	}
}

// TestNodePort: a NodePort Service answers on every node's address, from a
// client on node-1, whichever node the pod runs on.
func TestNodePort(t *testing.T) {
	c, ctx := startCluster(t)
	svc, pods := startWeb(t, c, ctx, corev1.ServiceTypeNodePort, 3)
	nodePort := svc.Spec.Ports[0].NodePort
	if nodePort < 30000 || nodePort > 32767 {
		t.Fatalf("nodePort %d", nodePort)
	}
	tr, err := c.ConsoleTransport()
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, err := c.Client("test").Nodes().List(ctx, "", client.ListOptions{})
	if err != nil || len(nodes) != 3 {
		t.Fatalf("nodes: %d %v", len(nodes), err)
	}
	for _, n := range nodes {
		var ip string
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		var hops []proxy.Hop
		hctx := proxy.WithHops(ctx, func(h proxy.Hop) { hops = append(hops, h) })
		seen := map[string]bool{}
		for range 60 {
			hops = hops[:0]
			pod, _ := fetch(t, hctx, tr, fmt.Sprintf("http://%s:%d/", ip, nodePort))
			if _, ok := pods[pod]; !ok {
				t.Fatalf("node %s: answer from %s", n.Name, pod)
			}
			seen[pod] = true
			// The node named in the URL did the DNAT.
			var dnat *proxy.Hop
			for i := range hops {
				if hops[i].Decision.Verdict == proxy.DNAT {
					dnat = &hops[i]
				}
			}
			if dnat == nil || dnat.Node != n.Name || !dnat.Decision.Masquerade {
				t.Fatalf("node %s: hops %+v", n.Name, hops)
			}
		}
		if len(seen) != 3 {
			t.Errorf("NodePort on %s reached %v", n.Name, seen)
		}
	}
}

// TestConsoleCurl runs the console's curl against the cluster: the
// Service's pods answer, and the failures read as curl's.
func TestConsoleCurl(t *testing.T) {
	c, ctx := startCluster(t)
	_, pods := startWeb(t, c, ctx, corev1.ServiceTypeClusterIP, 3)
	// A Service whose selector matches no pod: its slice has no endpoints.
	cl := c.Client("test")
	if _, err := client.For[*corev1.Service](cl, "", "services").Create(ctx, webService("idle", corev1.ServiceTypeClusterIP)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "idle's rules", func() (bool, string) {
		p, _ := c.Proxier("node-1")
		for _, sp := range p.ServicePorts() {
			if sp.Name.Name == "idle" {
				return true, ""
			}
		}
		return false, "no rules"
	})
	tr, err := c.ConsoleTransport()
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := curl.Run(ctx, curl.Config{Transport: tr}, args, curl.IOStreams{Out: &out, ErrOut: &errOut})
		return code, out.String(), errOut.String()
	}

	code, out, errOut := run("-i", "web")
	m := regexp.MustCompile(`^HTTP/1.1 200 OK\r\nContent-Length: \d+\r\nContent-Type: text/plain; charset=utf-8\r\nDate: .* GMT\r\n\r\nweb: hello from (\S+) \((\S+)\)\n`).FindStringSubmatch(out)
	if code != 0 || errOut != "" || m == nil || pods[m[1]] != m[2] {
		t.Errorf("curl -i web: %d %q %q", code, out, errOut)
	}

	ms := `after \d+ ms: Couldn't connect to server\n$`
	for _, tc := range []struct {
		args   []string
		code   int
		errOut string
	}{
		{[]string{"http://nope.default.svc.cluster.local/"}, 6, `^curl: \(6\) Could not resolve host: nope.default.svc.cluster.local\n$`},
		{[]string{"idle"}, 7, `^curl: \(7\) Failed to connect to idle port 80 ` + ms},
		{[]string{"10.96.0.10"}, 7, `^curl: \(7\) Failed to connect to 10.96.0.10 port 80 ` + ms},
		{[]string{"10.244.1.250:8080"}, 7, `^curl: \(7\) Failed to connect to 10.244.1.250 port 8080 ` + ms},
		{[]string{"-f", "web/nothing-here"}, 22, `^curl: \(22\) The requested URL returned error: 404\n$`},
	} {
		code, _, errOut := run(tc.args...)
		if code != tc.code || !regexp.MustCompile(tc.errOut).MatchString(errOut) {
			t.Errorf("curl %s: exit %d, stderr %q; want %d, %s", strings.Join(tc.args, " "), code, errOut, tc.code, tc.errOut)
		}
	}

	// A ClusterIP nobody holds: the rules drop it, and curl gives up at
	// its connect timeout.
	code, _, errOut = run("--connect-timeout", "0.05", "10.96.255.254")
	if code != 28 || !strings.Contains(errOut, "Failed to connect to 10.96.255.254 port 80 after") || !strings.HasSuffix(errOut, "Timeout was reached\n") {
		t.Errorf("dropped: exit %d, %q", code, errOut)
	}
}

// BenchmarkServiceRequest measures requests per second through node-1's
// kube-proxy to one web pod (on whichever node it runs): DNS lookup, rules,
// delivery, and one CGI instance of the web image per request.
func BenchmarkServiceRequest(b *testing.B) {
	for _, target := range []string{"name", "clusterip", "podip"} {
		b.Run(target, func(b *testing.B) {
			c, err := cluster.New(cluster.Config{Images: images.New()})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := c.Start(ctx); err != nil {
				b.Fatal(err)
			}
			cl := c.Client("bench")
			if _, err := cl.Deployments().Create(ctx, webDeployment("web", 1)); err != nil {
				b.Fatal(err)
			}
			svc, err := client.For[*corev1.Service](cl, "", "services").Create(ctx, webService("web", corev1.ServiceTypeClusterIP))
			if err != nil {
				b.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for len(usable(c, "node-1", "web")) != 1 {
				if time.Now().After(deadline) {
					b.Fatal("no ready endpoint")
				}
				time.Sleep(10 * time.Millisecond)
			}
			url := map[string]string{
				"name":      "http://web/",
				"clusterip": "http://" + svc.Spec.ClusterIP + "/",
				"podip":     "http://" + usable(c, "node-1", "web")[0] + ":8080/",
			}[target]
			tr, err := c.ConsoleTransport()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
					b.Fatalf("%s %v", resp.Status, err)
				}
				resp.Body.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// TestReadinessLeavesRotation: a pod whose readiness probe fails leaves
// every kube-proxy's rotation (its EndpointSlice entry turns not ready),
// while its own address still answers; healed, it comes back.
func TestReadinessLeavesRotation(t *testing.T) {
	c, ctx := startCluster(t)
	d := webDeployment("web", 3)
	spec := &d.Spec.Template.Spec
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1,
	}
	cl := c.Client("test")
	if _, err := cl.Deployments().Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.Service](cl, "", "services").Create(ctx, webService("web", corev1.ServiceTypeClusterIP)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "3 ready endpoints on node-1", func() (bool, string) {
		u := usable(c, "node-1", "web")
		return len(u) == 3, fmt.Sprint(u)
	})
	tr, err := c.ConsoleTransport()
	if err != nil {
		t.Fatal(err)
	}
	victimIP := usable(c, "node-1", "web")[0]
	victim, _ := fetch(t, ctx, tr, "http://"+victimIP+":8080/")

	// Tell the victim to fail /healthz, through its pod address.
	post := func(path string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+victimIP+":8080"+path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	post("/fail")
	eventually(t, 30*time.Second, victim+" out of rotation", func() (bool, string) {
		u := usable(c, "node-1", "web")
		return len(u) == 2 && !contains(u, victimIP), fmt.Sprint(u)
	})
	counts := map[string]int{}
	for range 150 {
		pod, _ := fetch(t, ctx, tr, "http://web/")
		counts[pod]++
	}
	if counts[victim] > 0 || len(counts) != 2 {
		t.Errorf("while %s is not ready, 150 requests reached %v", victim, counts)
	}
	if pod, _ := fetch(t, ctx, tr, "http://"+victimIP+":8080/"); pod != victim {
		t.Errorf("the not-ready pod's own address answered as %s", pod)
	}

	post("/heal")
	eventually(t, 30*time.Second, victim+" back in rotation", func() (bool, string) {
		u := usable(c, "node-1", "web")
		return len(u) == 3, fmt.Sprint(u)
	})
	counts = map[string]int{}
	for range 150 {
		pod, _ := fetch(t, ctx, tr, "http://web/")
		counts[pod]++
	}
	if counts[victim] == 0 || len(counts) != 3 {
		t.Errorf("after healing %s, 150 requests reached %v", victim, counts)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
