package registry

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// metaFields are the field selectors every resource supports.
func metaFields(obj metav1.Object) fields.Set {
	f := fields.Set{"metadata.name": obj.GetName()}
	if obj.GetNamespace() != "" {
		f["metadata.namespace"] = obj.GetNamespace()
	}
	return f
}

func validateMeta(obj metav1.Object, namespaced bool) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessor(obj, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

func validateMetaUpdate(obj, old metav1.Object, namespaced bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))
	return append(errs, validateMeta(obj, namespaced)...)
}

// --- namespaces (pkg/registry/core/namespace/strategy.go) ---

type namespaceStrategy struct{}

func (namespaceStrategy) PrepareForCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	found := false
	for _, f := range ns.Spec.Finalizers {
		found = found || f == corev1.FinalizerKubernetes
	}
	if !found {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	setLabel(&ns.ObjectMeta, corev1.LabelMetadataName, ns.Name)
}

func (namespaceStrategy) PrepareForUpdate(obj, old runtime.Object) {
	ns, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = o.Spec.Finalizers // changed only through /finalize
	ns.Status = o.Status
	setLabel(&ns.ObjectMeta, corev1.LabelMetadataName, ns.Name)
}

func (namespaceStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func (namespaceStrategy) Validate(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	return apivalidation.ValidateObjectMetaAccessor(ns, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
}

func (s namespaceStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace), field.NewPath("metadata"))
}

func (s namespaceStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return s.ValidateUpdate(obj, old)
}

func (namespaceStrategy) Fields(obj runtime.Object) fields.Set {
	ns := obj.(*corev1.Namespace)
	f := metaFields(ns)
	f["status.phase"] = string(ns.Status.Phase)
	return f
}

// --- nodes (pkg/registry/core/node/strategy.go) ---

type nodeStrategy struct{}

func (nodeStrategy) PrepareForCreate(obj runtime.Object) {
	n := obj.(*corev1.Node)
	setLabel(&n.ObjectMeta, corev1.LabelHostname, n.Name)
}

func (nodeStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
}

func (nodeStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func (nodeStrategy) Validate(obj runtime.Object) field.ErrorList {
	n := obj.(*corev1.Node)
	errs := validateMeta(n, false)
	errs = append(errs, validateTaints(n.Spec.Taints, field.NewPath("spec", "taints"))...)
	return errs
}

func (nodeStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*corev1.Node), old.(*corev1.Node)
	errs := validateMetaUpdate(n, o, false)
	if o.Spec.PodCIDR != "" && n.Spec.PodCIDR != o.Spec.PodCIDR {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDR"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	errs = append(errs, validateTaints(n.Spec.Taints, field.NewPath("spec", "taints"))...)
	return errs
}

func (s nodeStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return validateMetaUpdate(obj.(*corev1.Node), old.(*corev1.Node), false)
}

func (nodeStrategy) Fields(obj runtime.Object) fields.Set {
	n := obj.(*corev1.Node)
	f := metaFields(n)
	f["spec.unschedulable"] = fmt.Sprint(n.Spec.Unschedulable)
	return f
}

func validateTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	effects := sets.New(string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute))
	for i, t := range taints {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Index(i).Child("key"), t.Key, msg))
		}
		if !effects.Has(string(t.Effect)) {
			errs = append(errs, field.NotSupported(p.Index(i).Child("effect"), t.Effect, sets.List(effects)))
		}
	}
	return errs
}

// --- pods (pkg/registry/core/pod/strategy.go, pkg/apis/core/v1/defaults.go) ---

type podStrategy struct{}

// DefaultTolerationSeconds is what the DefaultTolerationSeconds admission
// plugin gives every pod for the not-ready and unreachable taints.
const DefaultTolerationSeconds int64 = 300

func (podStrategy) PrepareForCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(&pod.Spec)}
	DefaultPodSpec(&pod.Spec)
	addDefaultTolerations(&pod.Spec)
	if pod.Spec.Priority == nil {
		zero := int32(0)
		pod.Spec.Priority = &zero
	}
}

func (podStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	DefaultPodSpec(&obj.(*corev1.Pod).Spec)
}

func (podStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func (podStrategy) Validate(obj runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	errs := validateMeta(pod, true)
	return append(errs, ValidatePodSpec(&pod.Spec, field.NewPath("spec"))...)
}

func (podStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	pod, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	errs := validateMetaUpdate(pod, o, true)
	errs = append(errs, ValidatePodSpec(&pod.Spec, field.NewPath("spec"))...)
	// Only a few fields of a pod's spec may change (upstream ValidatePodUpdate).
	mutable := o.Spec.DeepCopy()
	for i := range mutable.Containers {
		if i < len(pod.Spec.Containers) {
			mutable.Containers[i].Image = pod.Spec.Containers[i].Image
		}
	}
	for i := range mutable.InitContainers {
		if i < len(pod.Spec.InitContainers) {
			mutable.InitContainers[i].Image = pod.Spec.InitContainers[i].Image
		}
	}
	mutable.ActiveDeadlineSeconds = pod.Spec.ActiveDeadlineSeconds
	mutable.Tolerations = pod.Spec.Tolerations
	mutable.TerminationGracePeriodSeconds = pod.Spec.TerminationGracePeriodSeconds
	if !equalJSON(mutable, &pod.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"))
	}
	return errs
}

func (podStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	pod, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	errs := validateMetaUpdate(pod, o, true)
	if o.Status.Phase == corev1.PodSucceeded || o.Status.Phase == corev1.PodFailed {
		if pod.Status.Phase != o.Status.Phase {
			errs = append(errs, field.Forbidden(field.NewPath("status", "phase"), fmt.Sprintf("cannot transition from terminal phase %q to %q", o.Status.Phase, pod.Status.Phase)))
		}
	}
	return errs
}

func (podStrategy) Fields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	f := metaFields(pod)
	f["spec.nodeName"] = pod.Spec.NodeName
	f["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	f["spec.schedulerName"] = pod.Spec.SchedulerName
	f["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	f["spec.hostNetwork"] = fmt.Sprint(pod.Spec.HostNetwork)
	f["status.phase"] = string(pod.Status.Phase)
	f["status.podIP"] = pod.Status.PodIP
	f["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return f
}

// GracePeriod implements GracefulDeleter: a pod on a node gets its
// terminationGracePeriodSeconds so the kubelet can stop it; a pod that never
// reached a node, or has finished, goes at once.
func (podStrategy) GracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) (int64, bool) {
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, true
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts != nil && opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	if grace < 0 {
		grace = 1
	}
	return grace, true
}

// DefaultPodSpec fills the defaults kube-apiserver gives a pod spec (also used
// for pod templates in Deployments and ReplicaSets).
func DefaultPodSpec(s *corev1.PodSpec) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	if s.TerminationGracePeriodSeconds == nil {
		g := int64(corev1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &g
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.EnableServiceLinks == nil {
		t := true
		s.EnableServiceLinks = &t
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		// Upstream: Always for ":latest" or no tag, otherwise IfNotPresent.
		if tag := imageTag(c.Image); tag == "" || tag == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

// imageTag returns the tag of an image reference ("" when none).
func imageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		return "digest"
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

func addDefaultTolerations(s *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		found := false
		for _, t := range s.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") && t.Operator == corev1.TolerationOpExists {
				found = true
			}
		}
		if !found {
			secs := DefaultTolerationSeconds
			s.Tolerations = append(s.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs,
			})
		}
	}
}

func qosClass(s *corev1.PodSpec) corev1.PodQOSClass {
	requests, limits := 0, 0
	guaranteed := true
	for _, c := range append(append([]corev1.Container{}, s.InitContainers...), s.Containers...) {
		requests += len(c.Resources.Requests)
		limits += len(c.Resources.Limits)
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			if !ok {
				guaranteed = false
				continue
			}
			if q, ok := c.Resources.Requests[r]; ok && q.Cmp(l) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case requests == 0 && limits == 0:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// ValidatePodSpec checks a pod spec with upstream's field paths and messages
// (the part of pkg/apis/core/validation that kubetab enforces).
func ValidatePodSpec(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := sets.New[string]()
	check := func(cs []corev1.Container, cp *field.Path) {
		for i, c := range cs {
			ip := cp.Index(i)
			if c.Name == "" {
				errs = append(errs, field.Required(ip.Child("name"), ""))
			} else {
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(ip.Child("name"), c.Name, msg))
				}
				if names.Has(c.Name) {
					errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
				}
				names.Insert(c.Name)
			}
			if strings.TrimSpace(c.Image) == "" {
				errs = append(errs, field.Required(ip.Child("image"), ""))
			} else if c.Image != strings.TrimSpace(c.Image) {
				errs = append(errs, field.Invalid(ip.Child("image"), c.Image, "must not have leading or trailing whitespace"))
			}
			for j, port := range c.Ports {
				for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
					errs = append(errs, field.Invalid(ip.Child("ports").Index(j).Child("containerPort"), port.ContainerPort, msg))
				}
			}
			for name, q := range c.Resources.Requests {
				if q.Sign() < 0 {
					errs = append(errs, field.Invalid(ip.Child("resources", "requests").Key(string(name)), q.String(), "must be greater than or equal to 0"))
				}
				if l, ok := c.Resources.Limits[name]; ok && q.Cmp(l) > 0 {
					errs = append(errs, field.Invalid(ip.Child("resources", "requests").Key(string(name)), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, l.String())))
				}
			}
			for j, e := range c.Env {
				if e.Name == "" {
					errs = append(errs, field.Required(ip.Child("env").Index(j).Child("name"), ""))
				}
			}
		}
	}
	check(s.InitContainers, p.Child("initContainers"))
	check(s.Containers, p.Child("containers"))
	policies := []string{string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}
	if !hasString(policies, string(s.RestartPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), s.RestartPolicy, policies))
	}
	if s.NodeName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.NodeName) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), s.NodeName, msg))
		}
	}
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *s.TerminationGracePeriodSeconds, "must be greater than or equal to 0"))
	}
	return errs
}

// Bind assigns a pod to a node: the pods/binding subresource the scheduler
// calls (upstream: pkg/registry/core/pod/storage/storage.go, BindingREST).
func (s *Store) Bind(ctx context.Context, b *corev1.Binding) (*corev1.Pod, error) {
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name,
			field.ErrorList{field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"})})
	}
	if b.Target.Name == "" {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), b.Name,
			field.ErrorList{field.Required(field.NewPath("target", "name"), "")})
	}
	for {
		obj, err := s.Get(ctx, b.Namespace, b.Name)
		if err != nil {
			return nil, err
		}
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(s.Resource.GroupResource(), pod.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(s.Resource.GroupResource(), pod.Name, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(s.Resource.GroupResource(), pod.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", b.UID, pod.UID))
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		pod.Status.Conditions = setPodCondition(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(s.reg.clock.Now().Truncate(1e9)),
		})
		// Binding writes spec.nodeName and the PodScheduled condition in one
		// compare-and-swap, bypassing the "spec is immutable" rule of updates.
		data, err := s.encode(pod)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		rv, _ := parseRV(pod.ResourceVersion)
		kv, err := s.reg.kv.Update(s.Key(pod.Namespace, pod.Name), data, rv)
		if err != nil {
			if isConflict(err) {
				continue
			}
			return nil, s.storeErr(err, pod.Name)
		}
		pod.ResourceVersion = fmt.Sprint(kv.ModRevision)
		return pod, nil
	}
}

func setPodCondition(conds []corev1.PodCondition, c corev1.PodCondition) []corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == c.Type {
			if conds[i].Status == c.Status {
				c.LastTransitionTime = conds[i].LastTransitionTime
			}
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}

// --- events (pkg/registry/core/event/strategy.go) ---

type eventStrategy struct{}

func (eventStrategy) PrepareForCreate(obj runtime.Object)      {}
func (eventStrategy) PrepareForUpdate(obj, old runtime.Object) {}

func (eventStrategy) Validate(obj runtime.Object) field.ErrorList {
	ev := obj.(*corev1.Event)
	errs := validateMeta(ev, true)
	if ev.InvolvedObject.Namespace != "" && ev.InvolvedObject.Namespace != ev.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if ev.Type != "" && ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.NotSupported(field.NewPath("type"), ev.Type, []string{corev1.EventTypeNormal, corev1.EventTypeWarning}))
	}
	return errs
}

func (s eventStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return append(validateMetaUpdate(obj.(*corev1.Event), old.(*corev1.Event), true), s.Validate(obj)...)
}

func (eventStrategy) Fields(obj runtime.Object) fields.Set {
	ev := obj.(*corev1.Event)
	f := metaFields(ev)
	f["involvedObject.kind"] = ev.InvolvedObject.Kind
	f["involvedObject.namespace"] = ev.InvolvedObject.Namespace
	f["involvedObject.name"] = ev.InvolvedObject.Name
	f["involvedObject.uid"] = string(ev.InvolvedObject.UID)
	f["involvedObject.apiVersion"] = ev.InvolvedObject.APIVersion
	f["involvedObject.resourceVersion"] = ev.InvolvedObject.ResourceVersion
	f["involvedObject.fieldPath"] = ev.InvolvedObject.FieldPath
	f["reason"] = ev.Reason
	f["reportingComponent"] = ev.ReportingController
	f["source"] = ev.Source.Component
	f["type"] = ev.Type
	return f
}
