package kubectl

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// deployment is a fixture Deployment whose pods run containers.
func deployment(name string, selector *metav1.LabelSelector, containers ...corev1.Container) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Selector: selector,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name, "tier": "x"}},
				Spec:       corev1.PodSpec{Containers: containers},
			},
		},
	}
}

// TestExpose: kubectl expose reads the selector, ports and labels of a
// deployment, replica set, pod or service and creates a Service from them,
// with upstream's refusals for what cannot be exposed.
func TestExpose(t *testing.T) {
	e := newEnv(t)
	e.mustRun("create deployment site --image=web --port=8080")
	e.mustRun("create deployment noport --image=hello")
	e.mustRun("create service clusterip front --tcp=80:8080")
	e.mustRun("create configmap cm --from-literal=a=b")
	e.mustRun("create job once --image=hello")
	e.node("node-1", true)
	e.pod("solo", map[string]string{"run": "solo"}, "hello")
	e.pod("bare", nil, "hello")
	e.create(deployment("multi", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "multi"}},
		corev1.Container{Name: "web", Image: "web", Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 8080}}},
		corev1.Container{Name: "dns", Image: "hello", Ports: []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 53}, {ContainerPort: 80}}}))
	e.create(deployment("expr", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "expr"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}}}},
		corev1.Container{Name: "hello", Image: "hello"}))
	e.files["file.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: fromfile\nspec:\n  selector:\n    matchLabels:\n      app: file\n  template:\n    metadata:\n      labels:\n        app: file\n    spec:\n      containers:\n      - name: web\n        image: web\n        ports:\n        - containerPort: 9090\n"

	out := e.transcript(
		"expose deployment site",
		"expose deployment site",
		"expose deploy/site --name=site4 --port=80 --target-port=http -l tier=web",
		"expose pod solo --port=80 --protocol=UDP --type=NodePort -o name",
		"expose svc front --name=front2",
		"expose deployment site --port=80 --name=site80 --dry-run=client -o yaml",
		"expose deployment site --name=preview --dry-run=server",
		"expose deployment site --name=lb --type=LoadBalancer --load-balancer-ip=10.0.0.9 --external-ip=192.168.0.9 --session-affinity=ClientIP --dry-run=client -o yaml",
		"expose deployment noport --cluster-ip=None --dry-run=client -o yaml",
		"expose deployment multi --dry-run=client -o yaml",
		"expose -f file.yaml --dry-run=client -o yaml",
		"expose deployment site noport --dry-run=client -o yaml",
		`expose deployment site --name=ov --overrides='{"spec":{"type":"NodePort"}}' --dry-run=client -o jsonpath={.spec.type}`,
	)
	e.takeWrites()
	out += e.transcript(
		"expose",
		"expose deployment",
		"expose rs",
		"expose deployment noport",
		"expose deployment noport --port=80 --selector=app=x,tier",
		"expose deployment missing --port=80",
		"expose deployment expr --port=80",
		"expose pod bare --port=80",
		"expose pod solo --port=http",
		"expose configmap cm --port=80",
		"expose job once --port=80",
		"expose node node-1 --port=80",
		"expose foos x",
		"expose deployment site --name=site3 --session-affinity=x",
		"expose -f file.yaml deployment site",
		"expose -f missing.yaml",
		"expose deployment site --dry-run=maybe",
		"expose deployment site -o bogus",
		"expose deployment noport site missing --dry-run=client",
	)
	if w := e.takeWrites(); len(w) != 0 {
		t.Errorf("bad input sent %v", w)
	}
	out += e.transcript(
		"expose deployment site --name=Bad_Name --port=80",
		"expose deployment site --name=bad-type --type=Bogus",
	)
	golden(t, "expose", out)

	site := e.get(&corev1.Service{}, "default", "site").(*corev1.Service)
	if site.Spec.Selector["app"] != "site" || len(site.Spec.Selector) != 1 || site.Labels["app"] != "site" ||
		len(site.Spec.Ports) != 1 || site.Spec.Ports[0].Port != 8080 || site.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) ||
		site.Spec.Ports[0].Protocol != corev1.ProtocolTCP || site.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("expose deployment site made %+v", site.Spec)
	}
	site4 := e.get(&corev1.Service{}, "default", "site4").(*corev1.Service)
	if site4.Spec.Ports[0].Port != 80 || site4.Spec.Ports[0].TargetPort != intstr.FromString("http") || site4.Labels["tier"] != "web" || site4.Labels["app"] != "" {
		t.Errorf("expose --target-port=http made %+v %+v", site4.Labels, site4.Spec)
	}
	solo := e.get(&corev1.Service{}, "default", "solo").(*corev1.Service)
	if solo.Spec.Selector["run"] != "solo" || solo.Spec.Type != corev1.ServiceTypeNodePort || solo.Spec.Ports[0].Protocol != corev1.ProtocolUDP || solo.Spec.Ports[0].NodePort == 0 {
		t.Errorf("expose pod made %+v", solo.Spec)
	}
	if front2 := e.get(&corev1.Service{}, "default", "front2").(*corev1.Service); front2.Spec.Selector["app"] != "front" || front2.Spec.Ports[0].Port != 80 || front2.Spec.Ports[0].TargetPort != intstr.FromInt32(80) {
		t.Errorf("expose service made %+v", front2.Spec)
	}
	for _, name := range []string{"site80", "preview", "lb", "noport", "multi", "fromfile", "ov", "expr", "bare", "Bad_Name", "bad-type"} {
		if _, err := e.store(&corev1.Service{}).Get(context.Background(), "default", name); !apierrors.IsNotFound(err) {
			t.Errorf("service %s: %v, want NotFound", name, err)
		}
	}
}
