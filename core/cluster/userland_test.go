package cluster_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
)

// TestDebugPod is the "Debug Services" tutorial: a web Deployment whose
// pods declare no containerPort (the image listens on 8080) behind a
// Service with targetPort 8080, and a busybox pod that wget's and
// nslookup's it through the cluster network and DNS.
func TestDebugPod(t *testing.T) {
	c, ctx := startCluster(t)
	cl := c.Client("test")
	d := webDeployment("web", 2)
	d.Spec.Template.Spec.Containers[0].Ports = nil
	if _, err := cl.Deployments().Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	svc, err := client.For[*corev1.Service](cl, "", "services").Create(ctx, webService("web", corev1.ServiceTypeClusterIP))
	if err != nil {
		t.Fatal(err)
	}
	debug := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "debug", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}}}}
	if _, err := cl.Pods().Create(ctx, debug); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	eventually(t, 60*time.Second, "web endpoints and the debug pod running", func() (bool, string) {
		p, err := cl.Pods().Get(ctx, "default", "debug")
		if err != nil {
			return false, err.Error()
		}
		pod = p
		eps := readyEndpoints(ctx, c, "web")
		return len(eps) == 2 && p.Status.Phase == corev1.PodRunning && len(usable(c, p.Spec.NodeName, "web")) == 2,
			fmt.Sprintf("endpoints %v, debug %s", eps, p.Status.Phase)
	})
	exec := func(cmd ...string) (string, int) {
		kl, _ := c.Kubelet(pod.Spec.NodeName)
		var out bytes.Buffer
		code, err := kl.Exec(ctx, pod, "", cmd, nil, &out, &out)
		if err != nil {
			t.Fatalf("exec %q: %v", cmd, err)
		}
		return out.String(), code
	}
	for _, tt := range []struct {
		cmd  []string
		want string
		code int
	}{
		{[]string{"wget", "-qO-", "http://web"}, `^web: hello from web-\S+ \(10\.244\.\d+\.\d+\)\n`, 0},
		{[]string{"wget", "-O-", "web"}, `^Connecting to web \(` + regexp.QuoteMeta(svc.Spec.ClusterIP) + `:80\)\nwriting to stdout\nweb: hello`, 0},
		{[]string{"wget", "-qO-", "http://nope"}, `^wget: bad address 'nope'\n$`, 1},
		{[]string{"wget", "-qO-", "http://web/nope"}, `^wget: server returned error: HTTP/1.1 404 Not Found\n$`, 1},
		{[]string{"nslookup", "web.default.svc.cluster.local"}, `^Server:\t\t10\.96\.0\.10\nAddress:\t10\.96\.0\.10:53\n\nName:\tweb\.default\.svc\.cluster\.local\nAddress: ` + regexp.QuoteMeta(svc.Spec.ClusterIP) + "\n\n$", 0},
		{[]string{"nslookup", "web"}, `Name:\tweb\.default\.svc\.cluster\.local\nAddress: ` + regexp.QuoteMeta(svc.Spec.ClusterIP), 0},
		{[]string{"nslookup", "nope"}, `\*\* server can't find nope: NXDOMAIN`, 1},
		{[]string{"cat", "/etc/resolv.conf"}, `^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local\nnameserver 10\.96\.0\.10\noptions ndots:5\n$`, 0},
		{[]string{"sh", "-c", "echo $HOSTNAME && env | grep KUBERNETES_SERVICE_HOST"}, "^debug\nKUBERNETES_SERVICE_HOST=10.96.0.1\n$", 0},
		{[]string{"ls", "/var/run/secrets/kubernetes.io/serviceaccount"}, "^ca.crt\nnamespace\ntoken\n$", 0},
		{[]string{"nope"}, `^OCI runtime exec failed: exec failed: unable to start container process: exec: "nope": executable file not found in \$PATH: unknown\n$`, 127},
	} {
		out, code := exec(tt.cmd...)
		if code != tt.code || !regexp.MustCompile(tt.want).MatchString(out) {
			t.Errorf("exec %s = %d %q, want %d and %s", strings.Join(tt.cmd, " "), code, out, tt.code, tt.want)
		}
	}
}
