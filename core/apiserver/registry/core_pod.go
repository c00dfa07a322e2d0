package registry

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- pods (pkg/registry/core/pod/strategy.go, pkg/apis/core/v1/defaults.go) ---

type podStrategy struct{}

// DefaultTolerationSeconds is what the DefaultTolerationSeconds admission
// plugin gives every pod for the not-ready and unreachable taints.
const DefaultTolerationSeconds int64 = 300

func (podStrategy) PrepareForCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	defaultPod(pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(&pod.Spec)}
	addDefaultTolerations(&pod.Spec)
}

func (podStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultPod(obj.(*corev1.Pod))
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

// FieldsOf implements LazyFields.
func (podStrategy) FieldsOf(obj runtime.Object) fields.Fields { return podFields{obj.(*corev1.Pod)} }

// podFields are Fields' fields of a pod, read one at a time.
type podFields struct{ pod *corev1.Pod }

func (f podFields) Has(field string) bool {
	_, ok := f.get(field)
	return ok
}

func (f podFields) Get(field string) string {
	v, _ := f.get(field)
	return v
}

func (f podFields) get(field string) (string, bool) {
	p := f.pod
	switch field {
	case "metadata.name":
		return p.Name, true
	case "metadata.namespace":
		return p.Namespace, p.Namespace != ""
	case "spec.nodeName":
		return p.Spec.NodeName, true
	case "spec.restartPolicy":
		return string(p.Spec.RestartPolicy), true
	case "spec.schedulerName":
		return p.Spec.SchedulerName, true
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, true
	case "spec.hostNetwork":
		return fmt.Sprint(p.Spec.HostNetwork), true
	case "status.phase":
		return string(p.Status.Phase), true
	case "status.podIP":
		return p.Status.PodIP, true
	case "status.nominatedNodeName":
		return p.Status.NominatedNodeName, true
	}
	return "", false
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

// defaultPod is SetDefaults_Pod: what only pods (not pod templates) get.
func defaultPod(pod *corev1.Pod) {
	DefaultPodSpec(&pod.Spec)
	// Limits without requests: the requests default to the limits.
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			for name, l := range r.Limits {
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				if _, ok := r.Requests[name]; !ok {
					r.Requests[name] = l.DeepCopy()
				}
			}
		}
	}
	if pod.Spec.HostNetwork {
		for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
}

// DefaultPodSpec fills the defaults kube-apiserver gives a pod spec, in pods
// and in the pod templates of workloads (pkg/apis/core/v1/defaults.go).
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
		t := corev1.DefaultEnableServiceLinks
		s.EnableServiceLinks = &t
	}
	// v1 conversion: serviceAccount is the deprecated name of
	// serviceAccountName, and shows the same value.
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i])
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
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
}

// defaultProbe is SetDefaults_Probe and SetDefaults_HTTPGetAction.
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = "/"
		}
		if h.Scheme == "" {
			h.Scheme = corev1.URISchemeHTTP
		}
	}
}

// defaultVolume is SetDefaults_Volume and the volume sources' defaults: a
// volume with no source is an emptyDir; files are mode 0644.
func defaultVolume(v *corev1.Volume) {
	if volumeSources(&v.VolumeSource) == 0 {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	mode := corev1.ConfigMapVolumeSourceDefaultMode
	switch {
	case v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil:
		v.ConfigMap.DefaultMode = &mode
	case v.Secret != nil && v.Secret.DefaultMode == nil:
		v.Secret.DefaultMode = &mode
	case v.DownwardAPI != nil && v.DownwardAPI.DefaultMode == nil:
		v.DownwardAPI.DefaultMode = &mode
	case v.Projected != nil:
		if v.Projected.DefaultMode == nil {
			v.Projected.DefaultMode = &mode
		}
		for i := range v.Projected.Sources {
			if t := v.Projected.Sources[i].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				secs := int64(3600)
				t.ExpirationSeconds = &secs
			}
		}
	}
	if v.HostPath != nil && v.HostPath.Type == nil {
		t := corev1.HostPathUnset
		v.HostPath.Type = &t
	}
}

// volumeSources counts the sources a volume names.
func volumeSources(vs *corev1.VolumeSource) int {
	n := 0
	v := reflect.ValueOf(vs).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
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

var (
	restartPolicies    = []string{string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}
	dnsPolicies        = []string{string(corev1.DNSClusterFirstWithHostNet), string(corev1.DNSClusterFirst), string(corev1.DNSDefault), string(corev1.DNSNone)}
	pullPolicies       = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}
	tolerationEffects  = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	tolerationOperator = []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}
)

// ValidatePodSpec checks a pod spec with upstream's field paths and messages
// (the part of pkg/apis/core/validation ValidatePodSpec that kubetab
// enforces: containers, ports, env, resources, volumes and their mounts,
// policies, node selection and tolerations).
func ValidatePodSpec(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes, verrs := validateVolumes(s.Volumes, p.Child("volumes"))
	errs = append(errs, verrs...)
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(s.InitContainers, true, volumes, names, p.Child("initContainers"))...)
	errs = append(errs, validateContainers(s.Containers, false, volumes, names, p.Child("containers"))...)
	if !hasString(restartPolicies, string(s.RestartPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), s.RestartPolicy, restartPolicies))
	}
	if !hasString(dnsPolicies, string(s.DNSPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("dnsPolicy"), s.DNSPolicy, dnsPolicies))
	}
	errs = append(errs, metavalidation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
	if s.NodeName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.NodeName) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), s.NodeName, msg))
		}
	}
	if s.ServiceAccountName != "" {
		for _, msg := range apivalidation.ValidateServiceAccountName(s.ServiceAccountName, false) {
			errs = append(errs, field.Invalid(p.Child("serviceAccountName"), s.ServiceAccountName, msg))
		}
	}
	if s.PriorityClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.PriorityClassName) {
			errs = append(errs, field.Invalid(p.Child("priorityClassName"), s.PriorityClassName, msg))
		}
	}
	for _, f := range []struct {
		name, value string
	}{{"hostname", s.Hostname}, {"subdomain", s.Subdomain}} {
		if f.value != "" {
			for _, msg := range validation.IsDNS1123Label(f.value) {
				errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
			}
		}
	}
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *s.TerminationGracePeriodSeconds, "must be greater than or equal to 0"))
	}
	if s.ActiveDeadlineSeconds != nil && (*s.ActiveDeadlineSeconds < 1 || *s.ActiveDeadlineSeconds > math.MaxInt32) {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *s.ActiveDeadlineSeconds, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	errs = append(errs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
	return errs
}

func validateVolumes(vols []corev1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range vols {
		ip := p.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case names.Has(v.Name):
			errs = append(errs, field.Duplicate(ip.Child("name"), v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), v.Name, msg))
			}
		}
		names.Insert(v.Name)
		switch n := volumeSources(&v.VolumeSource); {
		case n == 0:
			errs = append(errs, field.Required(ip, "must specify a volume type"))
		case n > 1:
			errs = append(errs, field.Forbidden(ip, "may not specify more than 1 volume type"))
		}
		if v.ConfigMap != nil && v.ConfigMap.Name == "" {
			errs = append(errs, field.Required(ip.Child("configMap", "name"), ""))
		}
		if v.Secret != nil && v.Secret.SecretName == "" {
			errs = append(errs, field.Required(ip.Child("secret", "secretName"), ""))
		}
	}
	return names, errs
}

func validateContainers(cs []corev1.Container, init bool, volumes, names sets.Set[string], cp *field.Path) field.ErrorList {
	var errs field.ErrorList
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
		if c.Image == "" {
			errs = append(errs, field.Required(ip.Child("image"), ""))
		} else if c.Image != strings.TrimSpace(c.Image) {
			errs = append(errs, field.Invalid(ip.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if !hasString(pullPolicies, string(c.ImagePullPolicy)) {
			errs = append(errs, field.NotSupported(ip.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
		}
		if c.RestartPolicy != nil {
			if !init {
				errs = append(errs, field.Forbidden(ip.Child("restartPolicy"), "may not be set for non-init containers"))
			} else if *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				errs = append(errs, field.NotSupported(ip.Child("restartPolicy"), *c.RestartPolicy, []string{string(corev1.ContainerRestartPolicyAlways)}))
			}
		}
		errs = append(errs, validateContainerPorts(c.Ports, ip.Child("ports"))...)
		errs = append(errs, validateEnv(c.Env, ip.Child("env"))...)
		errs = append(errs, validateResources(&c.Resources, ip.Child("resources"))...)
		mounts := sets.New[string]()
		for j, m := range c.VolumeMounts {
			mp := ip.Child("volumeMounts").Index(j)
			if m.Name == "" {
				errs = append(errs, field.Required(mp.Child("name"), ""))
			} else if !volumes.Has(m.Name) {
				errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
			}
			if m.MountPath == "" {
				errs = append(errs, field.Required(mp.Child("mountPath"), ""))
			} else if mounts.Has(m.MountPath) {
				errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
			}
			mounts.Insert(m.MountPath)
		}
	}
	return errs
}

func validateContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), port.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(port.Protocol, ip.Child("protocol"))...)
	}
	return errs
}

func validateEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		ip := p.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), e.Name, msg))
			}
		}
		if vf := e.ValueFrom; vf != nil {
			n := 0
			for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
				if set {
					n++
				}
			}
			switch {
			case n == 0:
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
			case n > 1:
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "may not have more than one field specified at a time"))
			case e.Value != "":
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
			}
		}
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(name)), q.String(), apivalidation.IsNegativeErrorMsg))
		}
	}
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(), apivalidation.IsNegativeErrorMsg))
		}
		if l, ok := r.Limits[name]; ok && q.Cmp(l) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, l.String())))
		}
	}
	return errs
}

// validateTolerations is upstream's ValidateTolerations.
func validateTolerations(ts []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metavalidation.ValidateLabelName(t.Key, ip.Child("key"))...)
		} else if t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, tolerationOperator))
		}
		if t.Effect != "" && !hasString(tolerationEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, tolerationEffects))
		}
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
	ctx, err := s.hold(ctx, "create", "binding", b.Namespace, b.Name)
	if err != nil {
		return nil, err
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
