package kubelet

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// A container's environment (upstream: pkg/kubelet/kubelet_pods.go
// makeEnvironmentVariables, pkg/kubelet/envvars, pkg/fieldpath and
// pkg/api/v1/resource for the downward API). The kubelet resolves it each time
// it creates a container, in this order:
//
//  1. envFrom: every key of each ConfigMap or Secret, with its prefix; a
//     later source overrides an earlier one;
//  2. env, in order: a literal value, with $(VAR) replaced by a variable
//     defined before it (or a Service variable); or a valueFrom: a key of a
//     ConfigMap or Secret, a pod field (fieldRef: the downward API), or a
//     container's resource (resourceFieldRef);
//  3. the Service variables (KUBERNETES_SERVICE_HOST, WEB_PORT ...) of the
//     "kubernetes" Service and, with enableServiceLinks, of every Service of
//     the pod's namespace, unless the container defines the same name.
//
// A missing ConfigMap, Secret or key that is not optional stops the container
// from being created: it waits in CreateContainerConfigError with the reason
// as its message (`configmap "x" not found`, `couldn't find key color in
// ConfigMap default/x`), and the kubelet tries again at later syncs, so
// creating the ConfigMap is enough to start the pod.
//
// The values are fixed when the container is created: a changed ConfigMap
// reaches a running container only through a volume.

// envList is an ordered set of variables: a redefinition keeps the first
// position and takes the new value.
type envList struct {
	names []string
	vals  map[string]string
}

func (l *envList) set(name, value string) {
	if l.vals == nil {
		l.vals = map[string]string{}
	}
	if _, ok := l.vals[name]; !ok {
		l.names = append(l.names, name)
	}
	l.vals[name] = value
}

func (l *envList) list() []cri.EnvVar {
	out := make([]cri.EnvVar, 0, len(l.names))
	for _, n := range l.names {
		out = append(out, cri.EnvVar{Name: n, Value: l.vals[n]})
	}
	return out
}

// makeEnvironment resolves container c's environment (see above). podIP is
// the pod's address from its sandbox.
func (kl *Kubelet) makeEnvironment(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) ([]cri.EnvVar, error) {
	serviceEnv := kl.serviceEnv(pod)
	var env envList
	configMaps := map[string]*corev1.ConfigMap{}
	secrets := map[string]*corev1.Secret{}
	configMap := func(name string) (*corev1.ConfigMap, error) {
		if cm, ok := configMaps[name]; ok {
			return cm, nil
		}
		cm, err := kl.getConfigMap(ctx, pod.Namespace, name)
		if err == nil {
			configMaps[name] = cm
		}
		return cm, err
	}
	secret := func(name string) (*corev1.Secret, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		s, err := kl.getSecret(ctx, pod.Namespace, name)
		if err == nil {
			secrets[name] = s
		}
		return s, err
	}

	// 1. envFrom: env overrides these.
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := configMap(from.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, err
			}
			for _, k := range sortedKeys(cm.Data) {
				env.set(from.Prefix+k, cm.Data[k])
			}
		case from.SecretRef != nil:
			s, err := secret(from.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.SecretRef.Optional) {
					continue
				}
				return nil, err
			}
			for _, k := range sortedKeys(s.Data) {
				env.set(from.Prefix+k, string(s.Data[k]))
			}
		}
	}

	// 2. env, in order.
	lookup := func(name string) (string, bool) {
		if v, ok := env.vals[name]; ok {
			return v, true
		}
		v, ok := serviceEnv.vals[name]
		return v, ok
	}
	for _, e := range c.Env {
		val := e.Value
		switch from := e.ValueFrom; {
		case val != "":
			val = expandWith(val, lookup)
		case from == nil:
		case from.FieldRef != nil:
			v, err := kl.podFieldValue(pod, from.FieldRef.FieldPath, podIP)
			if err != nil {
				return nil, err
			}
			val = v
		case from.ResourceFieldRef != nil:
			v, err := kl.containerResourceValue(pod, c, from.ResourceFieldRef)
			if err != nil {
				return nil, err
			}
			val = v
		case from.ConfigMapKeyRef != nil:
			ref := from.ConfigMapKeyRef
			cm, err := configMap(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if isTrue(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			val = v
		case from.SecretKeyRef != nil:
			ref := from.SecretKeyRef
			s, err := secret(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if isTrue(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			val = string(v)
		default:
			return nil, fmt.Errorf("env %q: this source is not supported by kubetab", e.Name)
		}
		env.set(e.Name, val)
	}

	// 3. Service variables the container did not define itself.
	for _, n := range serviceEnv.names {
		if _, ok := env.vals[n]; !ok {
			env.set(n, serviceEnv.vals[n])
		}
	}
	return env.list(), nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// podFieldValue is the downward API: the value of the pod field a fieldRef
// names (upstream: podFieldSelectorRuntimeValue and
// fieldpath.ExtractFieldPathAsString).
func (kl *Kubelet) podFieldValue(pod *corev1.Pod, path, podIP string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return kl.nodeIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if rest, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(rest, "']") {
			return m[strings.TrimSuffix(rest, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}

// formatMap is how the downward API writes labels and annotations: one
// key="value" per line, sorted.
func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%v=%q", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// containerResourceValue is the downward API's resourceFieldRef (upstream:
// containerResourceRuntimeValue): a container's request or limit, divided by
// the divisor (default 1) and rounded up. A limit the container does not set
// is the node's allocatable, as upstream's defaultPodLimitsForDownwardAPI.
func (kl *Kubelet) containerResourceValue(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		c = nil
		for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				if list[i].Name == ref.ContainerName {
					c = &list[i]
				}
			}
		}
		if c == nil {
			return "", fmt.Errorf("container %s not found", ref.ContainerName)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	limit := func(name corev1.ResourceName) resource.Quantity {
		if q, ok := c.Resources.Limits[name]; ok {
			return q
		}
		return kl.capacity[name]
	}
	request := func(name corev1.ResourceName) resource.Quantity { return c.Resources.Requests[name] }
	cpu := func(q resource.Quantity) string {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10)
	}
	mem := func(q resource.Quantity) string {
		return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10)
	}
	switch ref.Resource {
	case "limits.cpu":
		return cpu(limit(corev1.ResourceCPU)), nil
	case "limits.memory":
		return mem(limit(corev1.ResourceMemory)), nil
	case "requests.cpu":
		return cpu(request(corev1.ResourceCPU)), nil
	case "requests.memory":
		return mem(request(corev1.ResourceMemory)), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
}

// serviceEnv is the Service environment of a pod (upstream:
// getServiceEnvVarMap and pkg/kubelet/envvars FromServices): for the
// "kubernetes" Service of the default namespace always, and for every other
// Service of the pod's namespace when enableServiceLinks is on (the default),
// the variables Docker links used to set:
//
//	WEB_SERVICE_HOST=10.96.0.12
//	WEB_SERVICE_PORT=80
//	WEB_PORT=tcp://10.96.0.12:80
//	WEB_PORT_80_TCP=tcp://10.96.0.12:80  (and _PROTO, _PORT, _ADDR)
//
// Services without a cluster IP (headless) have none.
func (kl *Kubelet) serviceEnv(pod *corev1.Pod) envList {
	var env envList
	kl.mu.Lock()
	inf := kl.serviceInformer
	kl.mu.Unlock()
	if inf == nil {
		return env
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	byName := map[string]*corev1.Service{}
	for _, s := range inf.List() {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone || len(s.Spec.Ports) == 0 {
			continue
		}
		switch {
		case s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes":
			if _, ok := byName[s.Name]; !ok {
				byName[s.Name] = s
			}
		case s.Namespace == pod.Namespace && links:
			byName[s.Name] = s
		}
	}
	for _, name := range sortedKeys(byName) {
		s := byName[name]
		prefix := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
		ip := s.Spec.ClusterIP
		env.set(prefix+"_SERVICE_HOST", ip)
		env.set(prefix+"_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port)))
		for _, p := range s.Spec.Ports {
			if p.Name != "" {
				env.set(prefix+"_SERVICE_PORT_"+strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), strconv.Itoa(int(p.Port)))
			}
		}
		for i, p := range s.Spec.Ports {
			proto := strings.ToLower(string(corev1.ProtocolTCP))
			if p.Protocol != "" {
				proto = strings.ToLower(string(p.Protocol))
			}
			hostPort := net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))
			if i == 0 {
				env.set(prefix+"_PORT", proto+"://"+hostPort)
			}
			pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
			env.set(pp, proto+"://"+hostPort)
			env.set(pp+"_PROTO", proto)
			env.set(pp+"_PORT", strconv.Itoa(int(p.Port)))
			env.set(pp+"_ADDR", ip)
		}
	}
	return env
}
