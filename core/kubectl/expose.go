package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// `kubectl expose` is upstream's pkg/cmd/expose/expose.go (kubectl v1.32)
// with the introspection of pkg/polymorphichelpers: it reads an existing
// object and writes a Service that sends traffic to the same pods.
//
//	deployment web                       service web
//	  spec.selector.matchLabels ──────▶    spec.selector      (which pods)
//	  template: containerPort 8080 ───▶    port 8080 ─▶ targetPort 8080
//	  metadata.labels ────────────────▶    metadata.labels
//
// The endpoints controllers then list the pods the selector matches, and
// kube-proxy sends the service's virtual IP to them.

// exposeOptions are the flags of `kubectl expose`.
type exposeOptions struct {
	protocol, port, serviceType, loadBalancerIP, selector, labels string
	targetPort, externalIP, name, sessionAffinity, clusterIP      string
	fieldManager                                                  string
	files                                                         []string
	overrides                                                     overrideFlags
	print                                                         printFlags

	// Read from each exposed object; ports and protocols when it has more
	// than one port. What was read for one object stays for the next of
	// the same command line, and so do the selector, port and labels read
	// into the fields above: upstream keeps them in its options the same
	// way, so `kubectl expose deployment a b` gives service b the
	// selector of deployment a.
	defaultName, ports, protocols string
}

func (s *session) newExposeCommand() *cobra.Command {
	o := &exposeOptions{}
	cmd := &cobra.Command{
		Use:                   "expose (-f FILENAME | TYPE NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--external-ip=external-ip-of-service] [--type=type]",
		DisableFlagsInUseLine: true,
		Short:                 "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service",
		Long: `Expose a resource as a new Kubernetes service.

 Looks up a deployment, service, replica set, replication controller or pod by name and uses the selector for that resource as the selector for a new service on the specified port. A deployment or replica set will be exposed as a service only if its selector is convertible to a selector that service supports, i.e. when the selector contains only the matchLabels component. Note that if no port is specified via --port and the exposed resource has multiple ports, all will be re-used by the new service. Also if no labels are specified, the new service will re-use the labels from the resource it exposes.

 kubectl only writes the Service: the endpoints controllers then list the pods its selector matches, and kube-proxy sends the service's virtual IP to them.

 Possible resources include (case insensitive):

 pod (po), service (svc), replicationcontroller (rc), deployment (deploy), replicaset (rs)`,
		Example: `  # Create a service for the deployment web, which serves on port 80 and connects to the containers on port 8080
  kubectl expose deployment web --port=80 --target-port=8080

  # Create a service for a deployment identified by type and name specified in "web.yaml", which serves on port 80 and connects to the containers on port 8080
  kubectl expose -f web.yaml --port=80 --target-port=8080

  # Create a service for a pod valid-pod, which serves on port 444 with the name "frontend"
  kubectl expose pod valid-pod --port=444 --name=frontend

  # Create a second service based on the above service, exposing the container port 8443 as port 443 with the name "web-https"
  kubectl expose service web --port=443 --target-port=8443 --name=web-https

  # Create a service for a replica set, which serves on port 80 and connects to the containers on port 8000
  kubectl expose rs web-7d4b9 --port=80 --target-port=8000

  # Create a NodePort service for the deployment site: reachable on a port of every node
  kubectl expose deployment site --port=80 --target-port=8080 --type=NodePort`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.runExpose(o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.protocol, "protocol", "", "The network protocol for the service to be created. Default is 'TCP'.")
	f.StringVar(&o.port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified")
	f.StringVar(&o.serviceType, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	f.StringVar(&o.loadBalancerIP, "load-balancer-ip", "", "IP to assign to the LoadBalancer. If empty, an ephemeral IP will be created and used (cloud-provider specific).")
	f.StringVar(&o.selector, "selector", "", "A label selector to use for this service. Only equality-based selector requirements are supported. If empty (the default) infer the selector from the replication controller or replica set.)")
	f.StringVarP(&o.labels, "labels", "l", "", "Labels to apply to the service created by this call.")
	f.StringVar(&o.targetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to. Optional.")
	f.StringVar(&o.externalIP, "external-ip", "", "Additional external IP address (not managed by Kubernetes) to accept for the service. If this IP is routed to a node, the service can be accessed by this IP in addition to its generated service IP.")
	f.StringVar(&o.name, "name", "", "The name for the newly created object.")
	f.StringVar(&o.sessionAffinity, "session-affinity", "", "If non-empty, set the session affinity for the service to this; legal values: 'None', 'ClientIP'")
	f.StringVar(&o.clusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-expose", "Name of the manager used to track field ownership.")
	f.StringSliceVarP(&o.files, "filename", "f", nil, "Filename, directory, or URL to files identifying the resource to expose a service")
	s.addRecursiveFlag(cmd)
	o.overrides.add(cmd)
	o.print.add(cmd)
	return cmd
}

// exposeTarget is one object to expose: from a -f file as written there,
// or TYPE NAME fetched from the server.
type exposeTarget struct {
	res       apiResource
	namespace string
	name      string
	obj       map[string]any // nil until fetched
}

// runExpose exposes each named object in turn. As upstream, a failure
// with one object does not stop the next; the errors are printed at the
// end.
func (s *session) runExpose(o *exposeOptions, args []string) error {
	dr, err := parseDryRun(o.print.dryRun)
	if err != nil {
		return err
	}
	if err := checkOutputFormat(o.print.output, objectOutputFormats...); err != nil {
		return err
	}
	var todo []exposeTarget
	switch {
	case len(o.files) > 0 && len(args) > 0:
		return errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
	case len(o.files) > 0:
		objs, err := s.readManifests("expose", o.files)
		if err != nil {
			return err
		}
		for _, m := range objs {
			todo = append(todo, exposeTarget{res: m.res, name: m.name, obj: m.obj})
		}
	case len(args) == 0:
		return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
	default:
		targets, err := s.parseResourceArgs(args)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if len(t.names) == 0 {
				return errors.New("resource(s) were provided, but no name was specified")
			}
			for _, name := range t.names {
				todo = append(todo, exposeTarget{res: t.res, namespace: s.namespaceFor(t.res, false), name: name})
			}
		}
	}

	var errs multiError
	printed := 0
	for _, t := range todo {
		obj := t.obj
		if obj == nil {
			if obj, err = s.getObject(t.res, t.namespace, t.name); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		out, err := s.exposeOne(o, t.res, obj, dr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if o.print.output == "yaml" && printed > 0 {
			fmt.Fprintln(s.out(), "---")
		}
		printed++
		if err := s.printCreated(servicesResource, out, o.print.output, "exposed"+dr.suffix()); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// exposeOne reads what the flags leave open from obj, builds the service
// and creates it (or, with --dry-run=client, only returns it).
func (s *session) exposeOne(o *exposeOptions, res apiResource, obj map[string]any, dr dryRun) (map[string]any, error) {
	exposable, err := decodeExposable(res, obj)
	if err != nil {
		return nil, err
	}
	name := nestedString(obj, "metadata", "name")
	if len(name) > validation.DNS1035LabelMaxLength {
		name = name[:validation.DNS1035LabelMaxLength]
	}
	o.defaultName = name

	if o.selector == "" {
		sel, err := selectorForObject(exposable)
		if err != nil {
			return nil, fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection: %v", err)
		}
		o.selector = sel
	}
	if o.port == "" {
		switch ports := portsForObject(exposable); len(ports) {
		case 0:
			if o.clusterIP != corev1.ClusterIPNone { // a headless service needs no port
				return nil, errors.New("couldn't find port via --port flag or introspection")
			}
		case 1:
			o.port = ports[0]
		default:
			o.ports = strings.Join(ports, ",")
		}
	}
	if p := joinProtocols(protocolsForObject(exposable)); p != "" {
		o.protocols = p
	}
	if o.labels == "" {
		o.labels = joinLabels(exposable.GetLabels())
	}

	svc, err := o.newService()
	if err != nil {
		return nil, err
	}
	if svc, err = applyOverrides(&o.overrides, svc); err != nil {
		return nil, err
	}
	return s.sendGenerated(o.fieldManager, servicesResource, svc, dr)
}

// decodeExposable decodes obj as the typed object of the kinds a service
// can front (upstream polymorphichelpers.CanBeExposedFn); any other kind is
// refused with upstream's "cannot expose a ConfigMap" (or "a Job.batch").
// kubetab serves apps/v1 and not the old extensions/v1beta1 workloads.
func decodeExposable(res apiResource, obj map[string]any) (metav1.Object, error) {
	var typed metav1.Object
	switch {
	case res.Group == "" && res.Kind == "Pod":
		typed = &corev1.Pod{}
	case res.Group == "" && res.Kind == "Service":
		typed = &corev1.Service{}
	case res.Group == "" && res.Kind == "ReplicationController":
		typed = &corev1.ReplicationController{}
	case res.Group == "apps" && res.Kind == "Deployment":
		typed = &appsv1.Deployment{}
	case res.Group == "apps" && res.Kind == "ReplicaSet":
		typed = &appsv1.ReplicaSet{}
	default:
		return nil, fmt.Errorf("cannot expose a %s", res.GroupVersion().WithKind(res.Kind).GroupKind())
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return typed, json.Unmarshal(data, typed)
}

// selectorForObject is the pod selector of an exposable object as
// "key=value,..." (upstream's MapBasedSelectorForObjectFn). A service
// selects with labels only, so a workload selector with matchExpressions
// cannot be exposed.
func selectorForObject(obj metav1.Object) (string, error) {
	switch t := obj.(type) {
	case *corev1.ReplicationController:
		return joinLabels(t.Spec.Selector), nil
	case *corev1.Pod:
		if len(t.Labels) == 0 {
			return "", errors.New("the pod has no labels and cannot be exposed")
		}
		return joinLabels(t.Labels), nil
	case *corev1.Service:
		if t.Spec.Selector == nil {
			return "", errors.New("the service has no pod selector set")
		}
		return joinLabels(t.Spec.Selector), nil
	case *appsv1.Deployment:
		return workloadLabelSelector("deployment", t.Spec.Selector)
	case *appsv1.ReplicaSet:
		return workloadLabelSelector("replicaset", t.Spec.Selector)
	}
	return "", fmt.Errorf("cannot extract pod selector from %T", obj)
}

func workloadLabelSelector(kind string, sel *metav1.LabelSelector) (string, error) {
	if sel == nil || len(sel.MatchLabels) == 0 {
		return "", fmt.Errorf("invalid %s: no selectors, therefore cannot be exposed", kind)
	}
	if len(sel.MatchExpressions) > 0 {
		return "", fmt.Errorf("couldn't convert expressions - \"%+v\" to map-based selector format", sel.MatchExpressions)
	}
	return joinLabels(sel.MatchLabels), nil
}

// portsForObject lists the ports to forward (upstream PortsForObjectFn):
// the pods' container ports, or a service's own ports; each number once.
func portsForObject(obj metav1.Object) []string {
	var ports []string
	seen := map[string]bool{}
	add := func(port int32) {
		if p := strconv.Itoa(int(port)); !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	if svc, ok := obj.(*corev1.Service); ok {
		for _, p := range svc.Spec.Ports {
			add(p.Port)
		}
		return ports
	}
	for _, c := range podSpecOf(obj).Containers {
		for _, p := range c.Ports {
			add(p.ContainerPort)
		}
	}
	return ports
}

// protocolsForObject maps each port to its protocols, TCP when unset
// (upstream MultiProtocolsForObjectFn): one port may serve TCP and UDP.
func protocolsForObject(obj metav1.Object) map[string][]string {
	protocols := map[string][]string{}
	add := func(port int32, protocol corev1.Protocol) {
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		p := strconv.Itoa(int(port))
		protocols[p] = append(protocols[p], string(protocol))
	}
	if svc, ok := obj.(*corev1.Service); ok {
		for _, p := range svc.Spec.Ports {
			add(p.Port, p.Protocol)
		}
		return protocols
	}
	for _, c := range podSpecOf(obj).Containers {
		for _, p := range c.Ports {
			add(p.ContainerPort, p.Protocol)
		}
	}
	return protocols
}

// podSpecOf is the pod spec an exposable workload runs (empty for a service).
func podSpecOf(obj metav1.Object) *corev1.PodSpec {
	switch t := obj.(type) {
	case *corev1.Pod:
		return &t.Spec
	case *corev1.ReplicationController:
		if t.Spec.Template != nil {
			return &t.Spec.Template.Spec
		}
	case *appsv1.Deployment:
		return &t.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		return &t.Spec.Template.Spec
	}
	return &corev1.PodSpec{}
}

// joinLabels writes labels as "key=value,..." (upstream MakeLabels); the
// order does not matter, it is read back into a map.
func joinLabels(labels map[string]string) string {
	var out []string
	for k, v := range labels {
		out = append(out, k+"="+v)
	}
	return strings.Join(out, ",")
}

// joinProtocols writes "8080/TCP,53/UDP,53/TCP".
func joinProtocols(protocols map[string][]string) string {
	var out []string
	for port, list := range protocols {
		for _, p := range list {
			out = append(out, port+"/"+p)
		}
	}
	return strings.Join(out, ",")
}

// parseProtocols reads joinProtocols's form back.
func parseProtocols(spec string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, pp := range strings.Split(spec, ",") {
		parts := strings.Split(pp, "/")
		switch {
		case len(parts) != 2:
			return nil, fmt.Errorf("unexpected port protocol mapping: %s", pp)
		case parts[0] == "":
			return nil, errors.New("unexpected empty port")
		case parts[1] == "":
			return nil, errors.New("unexpected empty protocol")
		}
		out[parts[0]] = append(out[parts[0]], parts[1])
	}
	return out, nil
}

// newService builds the Service (upstream's createService). Several ports
// are named port-1, port-2 ...; a port served over two protocols becomes
// two service ports, port-1-tcp and port-1-udp. Without --target-port each
// port forwards to the same number on the pods.
func (o *exposeOptions) newService() (*corev1.Service, error) {
	if o.selector == "" {
		return nil, errors.New("selector must be specified")
	}
	selector, err := parseLabelSpec(o.selector)
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if o.labels != "" {
		if labels, err = parseLabelSpec(o.labels); err != nil {
			return nil, err
		}
	}
	name := o.name
	if name == "" {
		if name = o.defaultName; name == "" {
			return nil, errors.New("name must be specified")
		}
	}
	var protocols map[string][]string
	if o.protocols != "" {
		if protocols, err = parseProtocols(o.protocols); err != nil {
			return nil, err
		}
	}
	portList := o.ports // several ports read from the object win over one
	if portList == "" {
		portList = o.port
	}
	ports := []corev1.ServicePort{}
	if portList != "" {
		specs := strings.Split(portList, ",")
		for i, spec := range specs {
			port, err := strconv.Atoi(spec)
			if err != nil {
				return nil, err
			}
			portName := ""
			if len(specs) > 1 {
				portName = fmt.Sprintf("port-%d", i+1)
			}
			protocol := o.protocol
			if protocol == "" {
				protocol = string(corev1.ProtocolTCP)
				if list := protocols[spec]; len(list) == 1 {
					protocol = list[0]
				} else if len(list) > 1 {
					for _, p := range list {
						ports = append(ports, corev1.ServicePort{Name: fmt.Sprintf("port-%d-%s", i+1, strings.ToLower(p)), Port: int32(port), Protocol: corev1.Protocol(p)})
					}
					continue
				}
			}
			ports = append(ports, corev1.ServicePort{Name: portName, Port: int32(port), Protocol: corev1.Protocol(protocol)})
		}
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports},
	}
	for i := range svc.Spec.Ports {
		if o.targetPort != "" {
			svc.Spec.Ports[i].TargetPort = intstr.Parse(o.targetPort)
		} else {
			svc.Spec.Ports[i].TargetPort = intstr.FromInt32(svc.Spec.Ports[i].Port)
		}
	}
	if o.externalIP != "" {
		svc.Spec.ExternalIPs = []string{o.externalIP}
	}
	svc.Spec.Type = corev1.ServiceType(o.serviceType)
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = o.loadBalancerIP
	}
	switch corev1.ServiceAffinity(o.sessionAffinity) {
	case "":
	case corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
		svc.Spec.SessionAffinity = corev1.ServiceAffinity(o.sessionAffinity)
	default:
		return nil, fmt.Errorf("unknown session affinity: %s", o.sessionAffinity)
	}
	svc.Spec.ClusterIP = o.clusterIP
	return svc, nil
}
