package kubectl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubetab/kubetab/core/printers"
)

// describeOptions are the flags of `kubectl describe` (upstream
// pkg/cmd/describe and pkg/describe/describe.go).
type describeOptions struct {
	labelSelector string
	allNamespaces bool
	showEvents    bool
}

func (s *session) newDescribeCommand() *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use:                   "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Show details of a specific resource or group of resources",
		Long: `Show details of a specific resource or group of resources.

 Print a detailed description of the selected resources, including related resources such as events or controllers. You may select a single object by name, all objects of that type, provide a name prefix, or label selector. For example:

        $ kubectl describe TYPE NAME_PREFIX

 will first check for an exact match on TYPE and NAME_PREFIX. If no such resource exists, it will output details for every resource that has a name prefixed with NAME_PREFIX.

 Unlike get, describe is computed by kubectl: it GETs the object, then lists what relates to it (the events whose involvedObject is the object, a deployment's replica sets, a node's pods) and lays it all out.`,
		Example: `  # Describe a node
  kubectl describe nodes node-1

  # Describe a pod
  kubectl describe pods/web

  # Describe all pods managed by the 'web' deployment (name prefix)
  kubectl describe pods web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd, "You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.\n")
			}
			return s.runDescribe(o, args)
		},
	}
	cmd.Flags().StringVarP(&o.labelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	cmd.Flags().BoolVar(&o.showEvents, "show-events", true, "If true, display events related to the described object.")
	return cmd
}

func (s *session) runDescribe(o *describeOptions, args []string) error {
	targets, err := s.parseResourceArgs(args)
	if err != nil {
		return err
	}
	type found struct {
		res apiResource
		obj map[string]any
	}
	var objs []found
	var errs multiError
	for _, t := range targets {
		ns := s.namespaceFor(t.res, o.allNamespaces)
		if len(t.names) == 0 {
			items, _, err := s.listObjects(t.res, ns, listQuery(o.labelSelector, ""))
			if err != nil {
				return err
			}
			for _, it := range items {
				objs = append(objs, found{t.res, it})
			}
			continue
		}
		for _, name := range t.names {
			obj, err := s.getObject(t.res, ns, name)
			if apierrors.IsNotFound(err) {
				// describe TYPE NAME_PREFIX: every object whose name starts so
				items, _, lerr := s.listObjects(t.res, ns, listQuery(o.labelSelector, ""))
				var matched bool
				if lerr == nil {
					for _, it := range items {
						if strings.HasPrefix(nestedString(it, "metadata", "name"), name) {
							objs = append(objs, found{t.res, it})
							matched = true
						}
					}
				}
				if !matched {
					errs = append(errs, err)
				}
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, found{t.res, obj})
		}
	}
	if len(objs) == 0 && len(errs) == 0 {
		if targets[0].res.Namespaced && !o.allNamespaces {
			fmt.Fprintf(s.errOut(), "No resources found in %s namespace.\n", s.namespace)
		} else {
			fmt.Fprintln(s.errOut(), "No resources found")
		}
	}
	for i, f := range objs {
		text, err := s.describe(f.res, f.obj, o.showEvents)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if i > 0 {
			text = "\n\n" + text
		}
		io.WriteString(s.out(), text)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// describe picks the describer for a kind, like upstream's DescriberFor.
func (s *session) describe(res apiResource, obj map[string]any, events bool) (string, error) {
	d := &describer{s: s, now: s.cli.cfg.Clock.Now(), events: events}
	switch res.Group + "/" + res.Kind {
	case "/Pod":
		var pod corev1.Pod
		if err := fromMap(obj, &pod); err != nil {
			return "", err
		}
		return d.pod(&pod)
	case "/Node":
		var node corev1.Node
		if err := fromMap(obj, &node); err != nil {
			return "", err
		}
		return d.node(&node)
	case "/Namespace":
		var ns corev1.Namespace
		if err := fromMap(obj, &ns); err != nil {
			return "", err
		}
		return d.namespace(&ns)
	case "apps/Deployment":
		var dep appsv1.Deployment
		if err := fromMap(obj, &dep); err != nil {
			return "", err
		}
		return d.deployment(&dep)
	case "apps/ReplicaSet":
		var rs appsv1.ReplicaSet
		if err := fromMap(obj, &rs); err != nil {
			return "", err
		}
		return d.replicaSet(&rs)
	case "autoscaling/HorizontalPodAutoscaler":
		var h autoscalingv2.HorizontalPodAutoscaler
		if res.Version != "v2" {
			break // the v1 view: the generic description
		}
		if err := fromMap(obj, &h); err != nil {
			return "", err
		}
		return d.hpa(&h)
	case "/ResourceQuota":
		var q corev1.ResourceQuota
		if err := fromMap(obj, &q); err != nil {
			return "", err
		}
		return d.resourceQuota(&q)
	case "discovery.k8s.io/EndpointSlice":
		var eps discoveryv1.EndpointSlice
		if err := fromMap(obj, &eps); err != nil {
			return "", err
		}
		return d.endpointSlice(&eps)
	}
	if res.Group == "rbac.authorization.k8s.io" {
		if text, ok, err := describeRBAC(res.Kind, obj); ok {
			return text, err // describe_rbac.go
		}
	}
	return d.generic(res, obj)
}

// describer holds what every description needs: the session (to look up
// related objects) and the time ages are computed from.
type describer struct {
	s      *session
	now    time.Time
	events bool
}

func (d *describer) age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(d.now.Sub(t.Time))
}

func (d *describer) microAge(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(d.now.Sub(t.Time))
}

// searchEvents lists the events about an object (upstream searchEvents: a
// field selector on involvedObject, in the object's namespace).
func (d *describer) searchEvents(kind, namespace, name, uid string) *corev1.EventList {
	if !d.events {
		return nil
	}
	set := fields.Set{"involvedObject.name": name, "involvedObject.namespace": namespace}
	if kind != "" {
		set["involvedObject.kind"] = kind
	}
	if uid != "" {
		set["involvedObject.uid"] = uid
	}
	res, err := d.s.resolve("events")
	if err != nil {
		return &corev1.EventList{}
	}
	list := &corev1.EventList{}
	q := url.Values{"fieldSelector": {set.AsSelector().String()}}
	if err := d.s.client.into(d.s.ctx, request{method: http.MethodGet, path: res.path(namespace, "", ""), query: q}, list); err != nil {
		return &corev1.EventList{}
	}
	return list
}

func fromMap(m map[string]any, out any) error {
	_, data, err := toMap(m)
	if err != nil {
		return err
	}
	return decodeJSON(data, out)
}

// --- the text layout: a tabwriter with two-space indentation levels ---

// tabbedString runs f on a tabwriter (minwidth 0, tabwidth 8, padding 2)
// and returns the aligned text (upstream tabbedString).
func tabbedString(f func(io.Writer) error) (string, error) {
	buf := &bytes.Buffer{}
	out := tabwriter.NewWriter(buf, 0, 8, 2, ' ', 0)
	if err := f(out); err != nil {
		return "", err
	}
	out.Flush()
	return buf.String(), nil
}

// Indentation levels of prefixWriter: two spaces each.
const (
	level0 = iota
	level1
	level2
	level3
)

// prefixWriter writes text at an indentation level (upstream PrefixWriter).
type prefixWriter struct{ out io.Writer }

func (pw *prefixWriter) Write(level int, format string, a ...any) {
	io.WriteString(pw.out, escapeTerminal(strings.Repeat("  ", level)+fmt.Sprintf(format, a...)))
}

func (pw *prefixWriter) WriteLine(a ...any) {
	io.WriteString(pw.out, escapeTerminal(fmt.Sprintln(a...)))
}

// Flush ends a block of aligned columns.
func (pw *prefixWriter) Flush() {
	if f, ok := pw.out.(interface{ Flush() error }); ok {
		f.Flush()
	}
}

// --- describers ---

func (d *describer) pod(pod *corev1.Pod) (string, error) {
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents("", pod.Namespace, pod.Name, string(pod.UID))
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", pod.Name)
		w.Write(level0, "Namespace:\t%s\n", pod.Namespace)
		if pod.Spec.Priority != nil {
			w.Write(level0, "Priority:\t%d\n", *pod.Spec.Priority)
		}
		if pod.Spec.PriorityClassName != "" {
			w.Write(level0, "Priority Class Name:\t%s\n", pod.Spec.PriorityClassName)
		}
		if pod.Spec.ServiceAccountName != "" {
			w.Write(level0, "Service Account:\t%s\n", pod.Spec.ServiceAccountName)
		}
		if pod.Spec.NodeName == "" {
			w.Write(level0, "Node:\t<none>\n")
		} else {
			w.Write(level0, "Node:\t%s\n", pod.Spec.NodeName+"/"+pod.Status.HostIP)
		}
		if pod.Status.StartTime != nil {
			w.Write(level0, "Start Time:\t%s\n", pod.Status.StartTime.Time.Format(time.RFC1123Z))
		}
		printLabels(w, "Labels", pod.Labels)
		printAnnotations(w, "Annotations", pod.Annotations)
		if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
			w.Write(level0, "Status:\tTerminating (lasts %s)\n", d.age(*pod.DeletionTimestamp))
			if pod.DeletionGracePeriodSeconds != nil {
				w.Write(level0, "Termination Grace Period:\t%ds\n", *pod.DeletionGracePeriodSeconds)
			}
		} else {
			w.Write(level0, "Status:\t%s\n", string(pod.Status.Phase))
		}
		if pod.Status.Reason != "" {
			w.Write(level0, "Reason:\t%s\n", pod.Status.Reason)
		}
		if pod.Status.Message != "" {
			w.Write(level0, "Message:\t%s\n", pod.Status.Message)
		}
		w.Write(level0, "IP:\t%s\n", pod.Status.PodIP)
		if len(pod.Status.PodIPs) == 0 {
			w.Write(level0, "IPs:\t<none>\n")
		} else {
			w.Write(level0, "IPs:\n")
			for _, ip := range pod.Status.PodIPs {
				w.Write(level1, "IP:\t%s\n", ip.IP)
			}
		}
		if c := controlledBy(pod.OwnerReferences); c != "" {
			w.Write(level0, "Controlled By:\t%s\n", c)
		}
		if pod.Status.NominatedNodeName != "" {
			w.Write(level0, "NominatedNodeName:\t%s\n", pod.Status.NominatedNodeName)
		}
		if len(pod.Spec.InitContainers) > 0 {
			describeContainers(w, "Init Containers", pod.Spec.InitContainers, pod.Status.InitContainerStatuses, "")
		}
		describeContainers(w, "Containers", pod.Spec.Containers, pod.Status.ContainerStatuses, "")
		if len(pod.Spec.ReadinessGates) > 0 {
			w.Write(level0, "Readiness Gates:\n  Type\tStatus\n")
			for _, g := range pod.Spec.ReadinessGates {
				status := "<none>"
				for _, c := range pod.Status.Conditions {
					if c.Type == g.ConditionType {
						status = string(c.Status)
						break
					}
				}
				w.Write(level1, "%v \t%v \n", g.ConditionType, status)
			}
		}
		if len(pod.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\n")
			for _, c := range pod.Status.Conditions {
				w.Write(level1, "%v \t%v \n", c.Type, c.Status)
			}
		}
		describeVolumes(w, pod.Spec.Volumes, "")
		qos := pod.Status.QOSClass
		if qos == "" {
			qos = podQOS(pod)
		}
		w.Write(level0, "QoS Class:\t%s\n", qos)
		printLabels(w, "Node-Selectors", pod.Spec.NodeSelector)
		printTolerations(w, "Tolerations", pod.Spec.Tolerations)
		d.schedulingSummary(w, pod) // kubetab only: scheduling.go
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

func controlledBy(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return r.Kind + "/" + r.Name
		}
	}
	return ""
}

func describeContainers(w *prefixWriter, label string, containers []corev1.Container, statuses []corev1.ContainerStatus, space string) {
	byName := map[string]corev1.ContainerStatus{}
	for _, st := range statuses {
		byName[st.Name] = st
	}
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.Write(level0, "%s%s:%s\n", space, label, none)
	for _, c := range containers {
		st, ok := byName[c.Name]
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.Write(level1, "%s%v:\n", nameIndent, c.Name)
		if ok {
			w.Write(level2, "Container ID:\t%s\n", st.ContainerID)
		}
		w.Write(level2, "Image:\t%s\n", c.Image)
		if ok {
			w.Write(level2, "Image ID:\t%s\n", st.ImageID)
		}
		ports := containerPorts(c.Ports, func(p corev1.ContainerPort) int32 { return p.ContainerPort })
		if strings.Contains(ports, ",") {
			w.Write(level2, "Ports:\t%s\n", ports)
		} else {
			w.Write(level2, "Port:\t%s\n", noneIfEmpty(ports))
		}
		hostPorts := containerPorts(c.Ports, func(p corev1.ContainerPort) int32 { return p.HostPort })
		if strings.Contains(hostPorts, ",") {
			w.Write(level2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.Write(level2, "Host Port:\t%s\n", noneIfEmpty(hostPorts))
		}
		if len(c.Command) > 0 {
			w.Write(level2, "Command:\n")
			for _, cmd := range c.Command {
				for _, l := range strings.Split(cmd, "\n") {
					w.Write(level3, "%s\n", l)
				}
			}
		}
		if len(c.Args) > 0 {
			w.Write(level2, "Args:\n")
			for _, arg := range c.Args {
				for _, l := range strings.Split(arg, "\n") {
					w.Write(level3, "%s\n", l)
				}
			}
		}
		if ok {
			describeState(w, "State", st.State)
			if st.LastTerminationState.Terminated != nil {
				describeState(w, "Last State", st.LastTerminationState)
			}
			w.Write(level2, "Ready:\t%v\n", printBool(st.Ready))
			w.Write(level2, "Restart Count:\t%d\n", st.RestartCount)
		}
		describeResources(w, c.Resources, level2)
		for _, p := range []struct {
			name  string
			probe *corev1.Probe
		}{{"Liveness", c.LivenessProbe}, {"Readiness", c.ReadinessProbe}, {"Startup", c.StartupProbe}} {
			if p.probe != nil {
				w.Write(level2, "%s:\t%s\n", p.name, describeProbe(p.probe))
			}
		}
		if len(c.Env) == 0 {
			w.Write(level2, "Environment:\t<none>\n")
		} else {
			w.Write(level2, "Environment:\n")
			for _, e := range c.Env {
				switch {
				case e.ValueFrom == nil:
					for i, l := range strings.Split(e.Value, "\n") {
						if i == 0 {
							w.Write(level3, "%s:\t%s\n", e.Name, l)
						} else {
							w.Write(level3, "\t%s\n", l)
						}
					}
				case e.ValueFrom.FieldRef != nil:
					w.Write(level3, "%s:\t (%s:%s)\n", e.Name, e.ValueFrom.FieldRef.APIVersion, e.ValueFrom.FieldRef.FieldPath)
				case e.ValueFrom.SecretKeyRef != nil:
					opt := e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional
					w.Write(level3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", e.Name, e.ValueFrom.SecretKeyRef.Key, e.ValueFrom.SecretKeyRef.Name, opt)
				case e.ValueFrom.ConfigMapKeyRef != nil:
					opt := e.ValueFrom.ConfigMapKeyRef.Optional != nil && *e.ValueFrom.ConfigMapKeyRef.Optional
					w.Write(level3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", e.Name, e.ValueFrom.ConfigMapKeyRef.Key, e.ValueFrom.ConfigMapKeyRef.Name, opt)
				default:
					w.Write(level3, "%s:\t\n", e.Name)
				}
			}
		}
		if len(c.VolumeMounts) == 0 {
			w.Write(level2, "Mounts:\t<none>\n")
		} else {
			w.Write(level2, "Mounts:\n")
			mounts := append([]corev1.VolumeMount(nil), c.VolumeMounts...)
			sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].MountPath < mounts[j].MountPath })
			for _, m := range mounts {
				flags := []string{"rw"}
				if m.ReadOnly {
					flags = []string{"ro"}
				}
				if m.SubPath != "" {
					flags = append(flags, fmt.Sprintf("path=%q", m.SubPath))
				}
				w.Write(level3, "%s from %s (%s)\n", m.MountPath, m.Name, strings.Join(flags, ","))
			}
		}
	}
}

func containerPorts(ports []corev1.ContainerPort, num func(corev1.ContainerPort) int32) string {
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		s := fmt.Sprintf("%d/%s", num(p), p.Protocol)
		if p.Name != "" {
			s = fmt.Sprintf("%s (%s)", s, p.Name)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func describeState(w *prefixWriter, name string, st corev1.ContainerState) {
	switch {
	case st.Running != nil:
		w.Write(level2, "%s:\tRunning\n", name)
		w.Write(level3, "Started:\t%v\n", st.Running.StartedAt.Time.Format(time.RFC1123Z))
	case st.Waiting != nil:
		w.Write(level2, "%s:\tWaiting\n", name)
		if st.Waiting.Reason != "" {
			w.Write(level3, "Reason:\t%s\n", st.Waiting.Reason)
		}
	case st.Terminated != nil:
		t := st.Terminated
		w.Write(level2, "%s:\tTerminated\n", name)
		if t.Reason != "" {
			w.Write(level3, "Reason:\t%s\n", t.Reason)
		}
		if t.Message != "" {
			w.Write(level3, "Message:\t%s\n", t.Message)
		}
		w.Write(level3, "Exit Code:\t%d\n", t.ExitCode)
		if t.Signal > 0 {
			w.Write(level3, "Signal:\t%d\n", t.Signal)
		}
		w.Write(level3, "Started:\t%s\n", t.StartedAt.Time.Format(time.RFC1123Z))
		w.Write(level3, "Finished:\t%s\n", t.FinishedAt.Time.Format(time.RFC1123Z))
	default:
		w.Write(level2, "%s:\tWaiting\n", name)
	}
}

func describeResources(w *prefixWriter, r corev1.ResourceRequirements, level int) {
	for _, part := range []struct {
		title string
		list  corev1.ResourceList
	}{{"Limits", r.Limits}, {"Requests", r.Requests}} {
		if len(part.list) == 0 {
			continue
		}
		w.Write(level, "%s:\n", part.title)
		for _, name := range sortedResourceNames(part.list) {
			q := part.list[name]
			w.Write(level+1, "%s:\t%s\n", name, q.String())
		}
	}
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func describeProbe(p *corev1.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds successThreshold=%d failureThreshold=%d", p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %v %s", p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		u := &url.URL{Scheme: strings.ToLower(string(p.HTTPGet.Scheme)), Path: p.HTTPGet.Path}
		if port := p.HTTPGet.Port.String(); port != "" {
			u.Host = net.JoinHostPort(p.HTTPGet.Host, port)
		} else {
			u.Host = p.HTTPGet.Host
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		svc := ""
		if p.GRPC.Service != nil {
			svc = *p.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.GRPC.Port, svc, attrs)
	}
	return fmt.Sprintf("unknown %s", attrs)
}

func describeVolumes(w *prefixWriter, volumes []corev1.Volume, space string) {
	if len(volumes) == 0 {
		w.Write(level0, "%sVolumes:\t<none>\n", space)
		return
	}
	w.Write(level0, "%sVolumes:\n", space)
	for _, v := range volumes {
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.Write(level1, "%s%v:\n", nameIndent, v.Name)
		switch src := v.VolumeSource; {
		case src.HostPath != nil:
			typ := "<none>"
			if src.HostPath.Type != nil {
				typ = string(*src.HostPath.Type)
			}
			w.Write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", src.HostPath.Path, typ)
		case src.EmptyDir != nil:
			limit := "<unset>"
			if l := src.EmptyDir.SizeLimit; l != nil && l.Cmp(resource.Quantity{}) > 0 {
				limit = l.String()
			}
			w.Write(level2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", src.EmptyDir.Medium, limit)
		case src.Secret != nil:
			w.Write(level2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", src.Secret.SecretName, src.Secret.Optional != nil && *src.Secret.Optional)
		case src.ConfigMap != nil:
			w.Write(level2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", src.ConfigMap.Name, src.ConfigMap.Optional != nil && *src.ConfigMap.Optional)
		case src.PersistentVolumeClaim != nil:
			w.Write(level2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", src.PersistentVolumeClaim.ClaimName, src.PersistentVolumeClaim.ReadOnly)
		case src.Projected != nil:
			w.Write(level2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, p := range src.Projected.Sources {
				switch {
				case p.Secret != nil:
					w.Write(level2, "SecretName:\t%v\n    Optional:\t%v\n", p.Secret.Name, p.Secret.Optional != nil && *p.Secret.Optional)
				case p.DownwardAPI != nil:
					w.Write(level2, "DownwardAPI:\ttrue\n")
				case p.ConfigMap != nil:
					w.Write(level2, "ConfigMapName:\t%v\n    Optional:\t%v\n", p.ConfigMap.Name, p.ConfigMap.Optional != nil && *p.ConfigMap.Optional)
				case p.ServiceAccountToken != nil && p.ServiceAccountToken.ExpirationSeconds != nil:
					w.Write(level2, "TokenExpirationSeconds:\t%d\n", *p.ServiceAccountToken.ExpirationSeconds)
				}
			}
		default:
			w.Write(level1, "<unknown>\n")
		}
	}
}

// podQOS is the pod's quality of service class when the server did not set
// it (upstream qos.GetPodQOS, simplified to cpu and memory):
// Guaranteed when every container's requests equal its limits, BestEffort
// when no container asks for anything, Burstable otherwise.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	any, guaranteed := false, true
	all := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if hasReq || hasLim {
				any = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func (d *describer) describeEvents(w *prefixWriter, el *corev1.EventList) {
	if len(el.Items) == 0 {
		w.Write(level0, "Events:\t<none>\n")
		return
	}
	w.Flush()
	items := append([]corev1.Event(nil), el.Items...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].LastTimestamp.Time.Before(items[j].LastTimestamp.Time) })
	w.Write(level0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.Write(level1, "----\t------\t----\t----\t-------\n")
	for _, e := range items {
		first := d.microAge(e.EventTime)
		if e.EventTime.IsZero() {
			first = d.age(e.FirstTimestamp)
		}
		interval := first
		if e.Series != nil {
			interval = fmt.Sprintf("%s (x%d over %s)", d.microAge(e.Series.LastObservedTime), e.Series.Count, first)
		} else if e.Count > 1 {
			interval = fmt.Sprintf("%s (x%d over %s)", d.age(e.LastTimestamp), e.Count, first)
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		msg := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			msg = fmt.Sprintf("%s: %s", e.InvolvedObject.FieldPath, msg)
		}
		w.Write(level1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, interval, source, msg)
	}
}

func (d *describer) deployment(dep *appsv1.Deployment) (string, error) {
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return "", err
	}
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents("Deployment", dep.Namespace, dep.Name, string(dep.UID))
	}
	// The replica sets the deployment owns; the new one runs its current
	// template (upstream deploymentutil.FindNewReplicaSet).
	var oldRSs, newRSs []appsv1.ReplicaSet
	if rsRes, err := d.s.resolve("replicasets.apps"); err == nil {
		var list appsv1.ReplicaSetList
		q := listQuery(sel.String(), "")
		if d.s.client.into(d.s.ctx, request{method: http.MethodGet, path: rsRes.path(dep.Namespace, "", ""), query: q}, &list) == nil {
			sort.SliceStable(list.Items, func(i, j int) bool {
				return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp)
			})
			for _, rs := range list.Items {
				if ref := metav1.GetControllerOf(&rs); ref == nil || ref.UID != dep.UID {
					continue
				}
				if len(newRSs) == 0 && equalIgnoreHash(&rs.Spec.Template, &dep.Spec.Template) {
					newRSs = append(newRSs, rs)
				} else {
					oldRSs = append(oldRSs, rs)
				}
			}
		}
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", dep.Name)
		w.Write(level0, "Namespace:\t%s\n", dep.Namespace)
		w.Write(level0, "CreationTimestamp:\t%s\n", dep.CreationTimestamp.Time.Format(time.RFC1123Z))
		printLabels(w, "Labels", dep.Labels)
		printAnnotations(w, "Annotations", dep.Annotations)
		w.Write(level0, "Selector:\t%s\n", sel)
		w.Write(level0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n",
			replicasOf(dep.Spec.Replicas), dep.Status.UpdatedReplicas, dep.Status.Replicas, dep.Status.AvailableReplicas, dep.Status.UnavailableReplicas)
		w.Write(level0, "StrategyType:\t%s\n", dep.Spec.Strategy.Type)
		w.Write(level0, "MinReadySeconds:\t%d\n", dep.Spec.MinReadySeconds)
		if ru := dep.Spec.Strategy.RollingUpdate; ru != nil {
			w.Write(level0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", ru.MaxUnavailable.String(), ru.MaxSurge.String())
		}
		describePodTemplate(w, &dep.Spec.Template)
		if len(dep.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.Write(level1, "----\t------\t------\n")
			for _, c := range dep.Status.Conditions {
				w.Write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		if len(oldRSs) > 0 || len(newRSs) > 0 {
			w.Write(level0, "OldReplicaSets:\t%s\n", replicaSetsString(oldRSs))
			w.Write(level0, "NewReplicaSet:\t%s\n", replicaSetsString(newRSs))
		}
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

// equalIgnoreHash compares two pod templates without the pod-template-hash
// label the deployment controller adds to its replica sets.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

func replicaSetsString(rss []appsv1.ReplicaSet) string {
	if len(rss) == 0 {
		return "<none>"
	}
	out := make([]string, len(rss))
	for i, rs := range rss {
		out[i] = fmt.Sprintf("%s (%d/%d replicas created)", rs.Name, rs.Status.Replicas, replicasOf(rs.Spec.Replicas))
	}
	return strings.Join(out, ", ")
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func describePodTemplate(w *prefixWriter, t *corev1.PodTemplateSpec) {
	w.Write(level0, "Pod Template:\n")
	printLabels(w, "  Labels", t.Labels)
	if len(t.Annotations) > 0 {
		printAnnotations(w, "  Annotations", t.Annotations)
	}
	if t.Spec.ServiceAccountName != "" {
		w.Write(level1, "Service Account:\t%s\n", t.Spec.ServiceAccountName)
	}
	if len(t.Spec.InitContainers) > 0 {
		describeContainers(w, "Init Containers", t.Spec.InitContainers, nil, "  ")
	}
	describeContainers(w, "Containers", t.Spec.Containers, nil, "  ")
	describeVolumes(w, t.Spec.Volumes, "  ")
	if t.Spec.PriorityClassName != "" {
		w.Write(level1, "Priority Class Name:\t%s\n", t.Spec.PriorityClassName)
	}
	printLabels(w, "  Node-Selectors", t.Spec.NodeSelector)
	printTolerations(w, "  Tolerations", t.Spec.Tolerations)
}

func (d *describer) replicaSet(rs *appsv1.ReplicaSet) (string, error) {
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return "", err
	}
	var running, waiting, succeeded, failed int
	var podErr error
	if pods, err := d.s.resolve("pods"); err == nil {
		var list corev1.PodList
		podErr = d.s.client.into(d.s.ctx, request{method: http.MethodGet, path: pods.path(rs.Namespace, "", ""), query: listQuery(sel.String(), "")}, &list)
		for _, p := range list.Items {
			if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != rs.UID {
				continue
			}
			switch p.Status.Phase {
			case corev1.PodRunning:
				running++
			case corev1.PodPending:
				waiting++
			case corev1.PodSucceeded:
				succeeded++
			case corev1.PodFailed:
				failed++
			}
		}
	}
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents("ReplicaSet", rs.Namespace, rs.Name, string(rs.UID))
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", rs.Name)
		w.Write(level0, "Namespace:\t%s\n", rs.Namespace)
		w.Write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(rs.Spec.Selector))
		printLabels(w, "Labels", rs.Labels)
		printAnnotations(w, "Annotations", rs.Annotations)
		if c := controlledBy(rs.OwnerReferences); c != "" {
			w.Write(level0, "Controlled By:\t%s\n", c)
		}
		w.Write(level0, "Replicas:\t%d current / %d desired\n", rs.Status.Replicas, replicasOf(rs.Spec.Replicas))
		w.Write(level0, "Pods Status:\t")
		if podErr != nil {
			w.Write(level0, "error in fetching pods: %s\n", podErr)
		} else {
			w.Write(level0, "%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		}
		describePodTemplate(w, &rs.Spec.Template)
		if len(rs.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.Write(level1, "----\t------\t------\n")
			for _, c := range rs.Status.Conditions {
				w.Write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

func (d *describer) node(node *corev1.Node) (string, error) {
	// The pods on the node that still run (upstream: a field selector on
	// spec.nodeName and status.phase, across namespaces).
	var pods corev1.PodList
	podsErr := errors.New("no pods resource")
	if podRes, err := d.s.resolve("pods"); err == nil {
		sel := fmt.Sprintf("spec.nodeName=%s,status.phase!=%s,status.phase!=%s", node.Name, corev1.PodSucceeded, corev1.PodFailed)
		podsErr = d.s.client.into(d.s.ctx, request{method: http.MethodGet, path: podRes.path("", "", ""), query: listQuery("", sel)}, &pods)
	}
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents("Node", "", node.Name, "")
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", node.Name)
		if roles := printers.NodeRoles(node); len(roles) > 0 {
			w.Write(level0, "Roles:\t%s\n", strings.Join(roles, ","))
		} else {
			w.Write(level0, "Roles:\t%s\n", "<none>")
		}
		printLabels(w, "Labels", node.Labels)
		printAnnotations(w, "Annotations", node.Annotations)
		w.Write(level0, "CreationTimestamp:\t%s\n", node.CreationTimestamp.Time.Format(time.RFC1123Z))
		printTaints(w, "Taints", node.Spec.Taints)
		w.Write(level0, "Unschedulable:\t%v\n", node.Spec.Unschedulable)
		if len(node.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
			w.Write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
			for _, c := range node.Status.Conditions {
				w.Write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
					c.LastHeartbeatTime.Time.Format(time.RFC1123Z), c.LastTransitionTime.Time.Format(time.RFC1123Z), c.Reason, c.Message)
			}
		}
		w.Write(level0, "Addresses:\n")
		for _, a := range node.Status.Addresses {
			w.Write(level1, "%s:\t%s\n", a.Type, a.Address)
		}
		printResources := func(title string, list corev1.ResourceList) {
			if len(list) == 0 {
				return
			}
			w.Write(level0, "%s:\n", title)
			for _, name := range sortedResourceNames(list) {
				q := list[name]
				w.Write(level0, "  %s:\t%s\n", name, q.String())
			}
		}
		printResources("Capacity", node.Status.Capacity)
		printResources("Allocatable", node.Status.Allocatable)
		info := node.Status.NodeInfo
		w.Write(level0, "System Info:\n")
		w.Write(level0, "  Machine ID:\t%s\n", info.MachineID)
		w.Write(level0, "  System UUID:\t%s\n", info.SystemUUID)
		w.Write(level0, "  Boot ID:\t%s\n", info.BootID)
		w.Write(level0, "  Kernel Version:\t%s\n", info.KernelVersion)
		w.Write(level0, "  OS Image:\t%s\n", info.OSImage)
		w.Write(level0, "  Operating System:\t%s\n", info.OperatingSystem)
		w.Write(level0, "  Architecture:\t%s\n", info.Architecture)
		w.Write(level0, "  Container Runtime Version:\t%s\n", info.ContainerRuntimeVersion)
		w.Write(level0, "  Kubelet Version:\t%s\n", info.KubeletVersion)
		if node.Spec.PodCIDR != "" {
			w.Write(level0, "PodCIDR:\t%s\n", node.Spec.PodCIDR)
		}
		if len(node.Spec.PodCIDRs) > 0 {
			w.Write(level0, "PodCIDRs:\t%s\n", strings.Join(node.Spec.PodCIDRs, ","))
		}
		if node.Spec.ProviderID != "" {
			w.Write(level0, "ProviderID:\t%s\n", node.Spec.ProviderID)
		}
		if podsErr == nil {
			d.nodeResources(w, node, &pods)
		} else {
			w.Write(level0, "Pods:\tnot authorized\n")
		}
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

// nodeResources is the "Non-terminated Pods" and "Allocated resources" part
// of a node's description: what the scheduler has placed there, against
// what the node can hold.
func (d *describer) nodeResources(w *prefixWriter, node *corev1.Node, pods *corev1.PodList) {
	w.Write(level0, "Non-terminated Pods:\t(%d in total)\n", len(pods.Items))
	w.Write(level1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.Write(level1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	alloc := node.Status.Capacity
	if len(node.Status.Allocatable) > 0 {
		alloc = node.Status.Allocatable
	}
	frac := func(q resource.Quantity, total *resource.Quantity, milli bool) int64 {
		if milli {
			if total.MilliValue() == 0 {
				return 0
			}
			return int64(float64(q.MilliValue()) / float64(total.MilliValue()) * 100)
		}
		if total.Value() == 0 {
			return 0
		}
		return int64(float64(q.Value()) / float64(total.Value()) * 100)
	}
	totalReq, totalLim := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pods.Items {
		p := &pods.Items[i]
		req, lim := podRequestsAndLimits(p)
		addResources(totalReq, req)
		addResources(totalLim, lim)
		cpuReq, cpuLim, memReq, memLim := req[corev1.ResourceCPU], lim[corev1.ResourceCPU], req[corev1.ResourceMemory], lim[corev1.ResourceMemory]
		w.Write(level1, "%s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n", p.Namespace, p.Name,
			cpuReq.String(), frac(cpuReq, alloc.Cpu(), true), cpuLim.String(), frac(cpuLim, alloc.Cpu(), true),
			memReq.String(), frac(memReq, alloc.Memory(), false), memLim.String(), frac(memLim, alloc.Memory(), false), d.age(p.CreationTimestamp))
	}
	w.Write(level0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.Write(level1, "Resource\tRequests\tLimits\n")
	w.Write(level1, "--------\t--------\t------\n")
	for _, r := range []struct {
		name  corev1.ResourceName
		total *resource.Quantity
		milli bool
	}{{corev1.ResourceCPU, alloc.Cpu(), true}, {corev1.ResourceMemory, alloc.Memory(), false}, {corev1.ResourceEphemeralStorage, alloc.StorageEphemeral(), false}} {
		req, lim := totalReq[r.name], totalLim[r.name]
		w.Write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", r.name, req.String(), frac(req, r.total, r.milli), lim.String(), frac(lim, r.total, r.milli))
	}
}

// podRequestsAndLimits sums what a pod's containers ask for; an init
// container counts when it asks for more than the app containers together
// (upstream resourcehelper.PodRequests, without pod overhead and resizes).
func podRequestsAndLimits(p *corev1.Pod) (reqs, limits corev1.ResourceList) {
	reqs, limits = corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		addResources(reqs, c.Resources.Requests)
		addResources(limits, c.Resources.Limits)
	}
	for _, c := range p.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := reqs[name]; !ok || q.Cmp(cur) > 0 {
				reqs[name] = q.DeepCopy()
			}
		}
		for name, q := range c.Resources.Limits {
			if cur, ok := limits[name]; !ok || q.Cmp(cur) > 0 {
				limits[name] = q.DeepCopy()
			}
		}
	}
	return reqs, limits
}

func addResources(total, add corev1.ResourceList) {
	for name, q := range add {
		cur := total[name]
		cur.Add(q)
		total[name] = cur
	}
}

func (d *describer) namespace(ns *corev1.Namespace) (string, error) {
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", ns.Name)
		printLabels(w, "Labels", ns.Labels)
		printAnnotations(w, "Annotations", ns.Annotations)
		w.Write(level0, "Status:\t%s\n", string(ns.Status.Phase))
		if len(ns.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n")
			w.Write(level1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
			w.Write(level1, "----\t------\t------------------\t------\t-------\n")
			for _, c := range ns.Status.Conditions {
				w.Write(level1, "%v\t%v\t%s\t%v\t%v\n", c.Type, c.Status, c.LastTransitionTime.Time.Format(time.RFC1123Z), c.Reason, c.Message)
			}
		}
		return nil
	})
}

// generic describes a kind without its own describer: its identity and
// the events about it.
func (d *describer) generic(res apiResource, obj map[string]any) (string, error) {
	var meta metav1.ObjectMeta
	if md := nestedMap(obj, "metadata"); md != nil {
		if err := fromMap(md, &meta); err != nil {
			return "", err
		}
	}
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents(res.Kind, meta.Namespace, meta.Name, string(meta.UID))
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", meta.Name)
		w.Write(level0, "Namespace:\t%s\n", meta.Namespace)
		printLabels(w, "Labels", meta.Labels)
		printAnnotations(w, "Annotations", meta.Annotations)
		w.Write(level0, "API Version:\t%s\n", res.GroupVersion().String())
		w.Write(level0, "Kind:\t%s\n", res.Kind)
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

// --- multi-line fields ---

func printLabels(w *prefixWriter, title string, labels map[string]string) {
	w.Write(level0, "%s:\t", title)
	if len(labels) == 0 {
		w.WriteLine("<none>")
		return
	}
	for i, k := range sortedKeys(labels) {
		if i > 0 {
			w.Write(level0, "\t")
		}
		w.Write(level0, "%s=%s\n", k, labels[k])
	}
}

// maxAnnotationLen is where long annotation values are cut.
const maxAnnotationLen = 140

func printAnnotations(w *prefixWriter, title string, annotations map[string]string) {
	w.Write(level0, "%s:\t", title)
	var keys []string
	for _, k := range sortedKeys(annotations) {
		if k != lastAppliedAnnotation {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.WriteLine("<none>")
		return
	}
	for i, k := range keys {
		if i > 0 {
			w.Write(level0, "\t")
		}
		v := strings.TrimSuffix(annotations[k], "\n")
		if len(v)+len(k)+2 > maxAnnotationLen || strings.Contains(v, "\n") {
			w.Write(level0, "%s:\n", k)
			for _, l := range strings.Split(v, "\n") {
				if len(l) > maxAnnotationLen-2 {
					l = l[:maxAnnotationLen-2] + "..."
				}
				w.Write(level0, "\t  %s\n", l)
			}
		} else {
			w.Write(level0, "%s: %s\n", k, v)
		}
	}
}

func printTaints(w *prefixWriter, title string, taints []corev1.Taint) {
	w.Write(level0, "%s:\t", title)
	if len(taints) == 0 {
		w.WriteLine("<none>")
		return
	}
	taints = append([]corev1.Taint(nil), taints...)
	sort.Slice(taints, func(i, j int) bool {
		return string(taints[i].Effect)+","+taints[i].Key < string(taints[j].Effect)+","+taints[j].Key
	})
	for i, t := range taints {
		if i > 0 {
			w.Write(level0, "\t")
		}
		w.Write(level0, "%s\n", t.ToString())
	}
}

func printTolerations(w *prefixWriter, title string, tolerations []corev1.Toleration) {
	w.Write(level0, "%s:\t", title)
	if len(tolerations) == 0 {
		w.WriteLine("<none>")
		return
	}
	tolerations = append([]corev1.Toleration(nil), tolerations...)
	sort.Slice(tolerations, func(i, j int) bool { return tolerations[i].Key < tolerations[j].Key })
	for i, t := range tolerations {
		if i > 0 {
			w.Write(level0, "\t")
		}
		w.Write(level0, "%s", t.Key)
		if t.Value != "" {
			w.Write(level0, "=%s", t.Value)
		}
		if t.Effect != "" {
			w.Write(level0, ":%s", t.Effect)
		}
		if t.Operator == corev1.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				w.Write(level0, " op=Exists")
			} else {
				w.Write(level0, "op=Exists")
			}
		}
		if t.TolerationSeconds != nil {
			w.Write(level0, " for %ds", *t.TolerationSeconds)
		}
		w.Write(level0, "\n")
	}
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
