package registry

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- services (pkg/registry/core/service/strategy.go, storage/alloc.go,
// pkg/apis/core/v1/defaults.go SetDefaults_Service) ---
//
// A Service's create, step by step:
//
//	defaults      type ClusterIP, sessionAffinity None, port protocol TCP,
//	              targetPort = port, internalTrafficPolicy Cluster,
//	              externalTrafficPolicy Cluster (NodePort, LoadBalancer)
//	validation    names, ports, selector, clusterIP syntax ...
//	BeginCreate   ipFamilies [IPv4], ipFamilyPolicy SingleStack; a clusterIP
//	              from the service CIDR (or the asked-for one, if free and in
//	              range); a nodePort per port for NodePort and LoadBalancer
//	              Services (allocator.go)
//	write         on failure, the IP and ports go back
//
// Deleting the Service gives them back (AfterDelete).

type serviceStrategy struct{}

// maxClientIPAffinitySeconds is core.MaxClientIPServiceAffinitySeconds (a day).
const maxClientIPAffinitySeconds = 86400

var (
	serviceTypes            = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName), string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort)}
	sessionAffinities       = []string{string(corev1.ServiceAffinityClientIP), string(corev1.ServiceAffinityNone)}
	ipFamilies              = []string{string(corev1.IPv4Protocol), string(corev1.IPv6Protocol)}
	ipFamilyPolicies        = []string{string(corev1.IPFamilyPolicyPreferDualStack), string(corev1.IPFamilyPolicyRequireDualStack), string(corev1.IPFamilyPolicySingleStack)}
	trafficPolicies         = []string{string(corev1.ServiceExternalTrafficPolicyCluster), string(corev1.ServiceExternalTrafficPolicyLocal)}
	internalTrafficPolicies = []string{string(corev1.ServiceInternalTrafficPolicyCluster), string(corev1.ServiceInternalTrafficPolicyLocal)}
)

func needsClusterIP(s *corev1.Service) bool { return s.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// externallyAccessible is upstream's service.ExternallyAccessible.
func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

func isHeadless(s *corev1.Service) bool { return s.Spec.ClusterIP == corev1.ClusterIPNone }

// shouldAllocateNodePorts: NodePort Services always, LoadBalancers unless
// allocateLoadBalancerNodePorts is false.
func shouldAllocateNodePorts(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// defaultService is SetDefaults_Service.
func defaultService(s *corev1.Service) {
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityNone {
		s.Spec.SessionAffinityConfig = nil
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		c := s.Spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := corev1.DefaultClientIPServiceAffinitySeconds
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
		}
	}
	if s.Spec.Type == "" {
		s.Spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && s.Spec.ExternalTrafficPolicy == "" {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if s.Spec.InternalTrafficPolicy == nil && s.Spec.Type != corev1.ServiceTypeExternalName {
		p := corev1.ServiceInternalTrafficPolicyCluster
		s.Spec.InternalTrafficPolicy = &p
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts == nil {
		t := true
		s.Spec.AllocateLoadBalancerNodePorts = &t
	}
}

func (serviceStrategy) PrepareForCreate(obj runtime.Object) {
	s := obj.(*corev1.Service)
	s.Status = corev1.ServiceStatus{}
	defaultService(s)
	normalizeClusterIPs(s, nil)
}

func (serviceStrategy) PrepareForUpdate(obj, old runtime.Object) {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	s.Status = o.Status
	defaultService(s)
	patchAllocatedValues(s, o)
	normalizeClusterIPs(s, o)
	dropTypeDependentFields(s, o)
}

func (serviceStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

// normalizeClusterIPs keeps clusterIP and clusterIPs[0] in step for clients
// that set only the old singular field (upstream strategy.go).
func normalizeClusterIPs(s, old *corev1.Service) {
	if old == nil {
		if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
			s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
		}
		return
	}
	// An old client that patched the Service without clusterIPs.
	if len(old.Spec.ClusterIPs) > 0 && len(s.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == s.Spec.ClusterIP {
		s.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP != s.Spec.ClusterIP {
		if old.Spec.ClusterIP != "" && s.Spec.ClusterIP == "" && equalJSON(old.Spec.ClusterIPs, s.Spec.ClusterIPs) {
			s.Spec.ClusterIPs = nil
		}
		if s.Spec.ClusterIP != "" && equalJSON(old.Spec.ClusterIPs, s.Spec.ClusterIPs) {
			s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
		}
	}
}

// patchAllocatedValues fills the allocated values an update left out, so a
// `kubectl replace` of a manifest without clusterIP or nodePort keeps them
// (upstream storage.go).
func patchAllocatedValues(s, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(s) {
		used := func(svc *corev1.Service) sets.Set[int32] {
			set := sets.New[int32]()
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					set.Insert(p.NodePort)
				}
			}
			return set
		}
		inUse := used(old).Intersection(used(s))
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			if p := &s.Spec.Ports[i]; p.NodePort == 0 && !inUse.Has(byName[p.Name]) {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// dropTypeDependentFields clears what a type change made meaningless, when
// the client did not also change it (upstream strategy.go).
func dropTypeDependentFields(s, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(s) {
		if equalJSON(old.Spec.ClusterIPs, s.Spec.ClusterIPs) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		if equalJSON(old.Spec.IPFamilies, s.Spec.IPFamilies) {
			s.Spec.IPFamilies = nil
		}
		if equalJSON(old.Spec.IPFamilyPolicy, s.Spec.IPFamilyPolicy) {
			s.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(s) && equalJSON(nodePortsOf(old), nodePortsOf(s)) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(s) && old.Spec.HealthCheckNodePort == s.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		equalJSON(old.Spec.AllocateLoadBalancerNodePorts, s.Spec.AllocateLoadBalancerNodePorts) {
		s.Spec.AllocateLoadBalancerNodePorts = nil
	}
	if externallyAccessible(old) && !externallyAccessible(s) && old.Spec.ExternalTrafficPolicy == s.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

func nodePortsOf(s *corev1.Service) []int32 {
	var ports []int32
	for _, p := range s.Spec.Ports {
		ports = append(ports, p.NodePort)
	}
	return ports
}

func (serviceStrategy) Validate(obj runtime.Object) field.ErrorList {
	return validateService(obj.(*corev1.Service))
}

func (serviceStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(s, o, field.NewPath("metadata"))
	errs = append(errs, validateClusterIPsUpdate(s, o)...)
	return append(errs, validateService(s)...)
}

func (serviceStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	s := obj.(*corev1.Service)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(s, old.(*corev1.Service), field.NewPath("metadata"))
	for i, ing := range s.Status.LoadBalancer.Ingress {
		p := field.NewPath("status", "loadBalancer", "ingress").Index(i)
		if ing.IP != "" {
			errs = append(errs, validateLegacyIP(p.Child("ip"), ing.IP)...)
		}
		if ing.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(ing.Hostname) {
				errs = append(errs, field.Invalid(p.Child("hostname"), ing.Hostname, msg))
			}
		}
	}
	return errs
}

// Fields: a Service is selectable by spec.clusterIP and spec.type
// (upstream service SelectableFields).
func (serviceStrategy) Fields(obj runtime.Object) fields.Set {
	s := obj.(*corev1.Service)
	f := metaFields(s)
	f["spec.clusterIP"] = s.Spec.ClusterIP
	f["spec.type"] = string(s.Spec.Type)
	return f
}

// validateService is upstream's ValidateService, for single-stack IPv4.
func validateService(s *corev1.Service) field.ErrorList {
	errs := validateMetaName(s, true, apivalidation.NameIsDNS1035Label)
	spec := field.NewPath("spec")
	portsPath := spec.Child("ports")
	if len(s.Spec.Ports) == 0 && !isHeadless(s) && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(portsPath, ""))
	}
	switch s.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if len(s.Spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if s.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if len(s.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(s.Spec.ExternalName, "."); cname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(cname) {
				errs = append(errs, field.Invalid(spec.Child("externalName"), cname, msg))
			}
		} else {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
	case corev1.ServiceTypeLoadBalancer:
		if s.Spec.AllocateLoadBalancerNodePorts == nil {
			errs = append(errs, field.Required(spec.Child("allocateLoadBalancerNodePorts"), ""))
		}
	}
	portNames := sets.New[string]()
	for i := range s.Spec.Ports {
		errs = append(errs, validateServicePort(&s.Spec.Ports[i], len(s.Spec.Ports) > 1, portNames, portsPath.Index(i))...)
	}
	if s.Spec.Type == corev1.ServiceTypeClusterIP {
		for i, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				errs = append(errs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	type protoPort struct {
		proto corev1.Protocol
		port  int32
	}
	nodePorts, ports := map[protoPort]bool{}, map[protoPort]bool{}
	for i, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			k := protoPort{p.Protocol, p.NodePort}
			if nodePorts[k] {
				errs = append(errs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
			}
			nodePorts[k] = true
		}
		k := protoPort{p.Protocol, p.Port}
		if ports[k] {
			errs = append(errs, field.Duplicate(portsPath.Index(i), corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}))
		}
		ports[k] = true
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName || len(s.Spec.Selector) > 0 {
		errs = append(errs, metavalidation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	}
	if s.Spec.SessionAffinity == "" {
		errs = append(errs, field.Required(spec.Child("sessionAffinity"), ""))
	} else if !hasString(sessionAffinities, string(s.Spec.SessionAffinity)) {
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), s.Spec.SessionAffinity, sessionAffinities))
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		cp := spec.Child("sessionAffinityConfig").Child("clientIP").Child("timeoutSeconds")
		c := s.Spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			errs = append(errs, field.Required(cp, fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)))
		} else if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPAffinitySeconds {
			errs = append(errs, field.Invalid(cp, t, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds)))
		}
	} else if s.Spec.SessionAffinityConfig != nil {
		errs = append(errs, field.Invalid(spec.Child("sessionAffinityConfig"), s.Spec.SessionAffinityConfig, fmt.Sprintf("must not be set when session affinity is %s", s.Spec.SessionAffinity)))
	}
	if s.Spec.Type == "" {
		errs = append(errs, field.Required(spec.Child("type"), ""))
	} else if !hasString(serviceTypes, string(s.Spec.Type)) {
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Spec.Type, serviceTypes))
	}
	for i, ip := range s.Spec.ExternalIPs {
		errs = append(errs, validateLegacyIP(spec.Child("externalIPs").Index(i), ip)...)
	}
	errs = append(errs, validateTrafficPolicies(s, spec)...)
	errs = append(errs, validateClusterIPsRelated(s, spec)...)
	return errs
}

func validateServicePort(p *corev1.ServicePort, requireName bool, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && p.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if p.Name != "" {
		for _, msg := range validation.IsDNS1123Label(p.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
		}
		if names.Has(p.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		}
		names.Insert(p.Name)
	}
	for _, msg := range validation.IsValidPortNum(int(p.Port)) {
		errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
	}
	errs = append(errs, validateProtocol(p.Protocol, path.Child("protocol"))...)
	errs = append(errs, validatePortNumOrName(p.TargetPort, path.Child("targetPort"))...)
	return errs
}

func validateTrafficPolicies(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	etp := spec.Child("externalTrafficPolicy")
	if externallyAccessible(s) {
		if s.Spec.ExternalTrafficPolicy == "" {
			errs = append(errs, field.Required(etp, ""))
		} else if !hasString(trafficPolicies, string(s.Spec.ExternalTrafficPolicy)) {
			errs = append(errs, field.NotSupported(etp, s.Spec.ExternalTrafficPolicy, trafficPolicies))
		}
	} else if s.Spec.ExternalTrafficPolicy != "" {
		errs = append(errs, field.Invalid(etp, s.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
	}
	if s.Spec.HealthCheckNodePort != 0 && !needsHealthCheckNodePort(s) {
		errs = append(errs, field.Invalid(spec.Child("healthCheckNodePort"), s.Spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	}
	itp := spec.Child("internalTrafficPolicy")
	if s.Spec.Type != corev1.ServiceTypeExternalName {
		if s.Spec.InternalTrafficPolicy == nil {
			errs = append(errs, field.Required(itp, ""))
		} else if !hasString(internalTrafficPolicies, string(*s.Spec.InternalTrafficPolicy)) {
			errs = append(errs, field.NotSupported(itp, *s.Spec.InternalTrafficPolicy, internalTrafficPolicies))
		}
	}
	return errs
}

// validateClusterIPsRelated is ValidateServiceClusterIPsRelatedFields.
func validateClusterIPsRelated(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	ipsPath := spec.Child("clusterIPs")
	if s.Spec.ClusterIP != "" {
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(s.Spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[string]()
	for i, fam := range s.Spec.IPFamilies {
		if !hasString(ipFamilies, string(fam)) {
			errs = append(errs, field.NotSupported(spec.Child("ipFamilies").Index(i), fam, ipFamilies))
		}
		if seen.Has(string(fam)) {
			errs = append(errs, field.Duplicate(spec.Child("ipFamilies").Index(i), fam))
		}
		seen.Insert(string(fam))
	}
	if p := s.Spec.IPFamilyPolicy; p != nil && !hasString(ipFamilyPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(spec.Child("ipFamilyPolicy"), *p, ipFamilyPolicies))
	}
	for i, ip := range s.Spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(s.Spec.ClusterIPs) > 1 {
				errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs = append(errs, validateLegacyIP(ipsPath.Index(i), ip)...)
	}
	if len(s.Spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may only hold up to 2 values"))
	}
	return errs
}

// validateClusterIPsUpdate is validateUpgradeDowngradeClusterIPs: a
// clusterIP may not change once set (except by way of ExternalName).
func validateClusterIPsUpdate(s, old *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(s) && isHeadless(old) {
		return nil
	}
	var errs field.ErrorList
	ipsPath := field.NewPath("spec", "clusterIPs")
	switch {
	case len(old.Spec.ClusterIPs) == len(s.Spec.ClusterIPs):
		for i, ip := range old.Spec.ClusterIPs {
			if ip != s.Spec.ClusterIPs[i] {
				errs = append(errs, field.Invalid(ipsPath.Index(i), s.Spec.ClusterIPs, "may not change once set"))
			}
		}
	case len(old.Spec.ClusterIPs) > len(s.Spec.ClusterIPs):
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(ipsPath.Index(0), s.Spec.ClusterIPs, "primary clusterIP can not be unset"))
		} else if s.Spec.ClusterIPs[0] != old.Spec.ClusterIPs[0] {
			errs = append(errs, field.Invalid(ipsPath.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
	default:
		if len(old.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] != old.Spec.ClusterIPs[0] {
			errs = append(errs, field.Invalid(ipsPath.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

// initIPFamilies is the single-stack part of upstream's initIPFamilyFields:
// a policy and the families a Service gets on this IPv4 cluster.
func initIPFamilies(s, old *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	spec := field.NewPath("spec")
	if s.Spec.IPFamilyPolicy == nil {
		var p corev1.IPFamilyPolicy
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			p = *old.Spec.IPFamilyPolicy
		case isHeadless(s) && len(s.Spec.Selector) == 0:
			p = corev1.IPFamilyPolicyRequireDualStack // headless without selector: any family
		default:
			p = corev1.IPFamilyPolicySingleStack
		}
		s.Spec.IPFamilyPolicy = &p
	}
	var errs field.ErrorList
	if isHeadless(s) && len(s.Spec.Selector) == 0 {
		if len(s.Spec.IPFamilies) == 0 {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if len(s.Spec.IPFamilies) < 2 && *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			if s.Spec.IPFamilies[0] == corev1.IPv4Protocol {
				s.Spec.IPFamilies = append(s.Spec.IPFamilies, corev1.IPv6Protocol)
			} else {
				s.Spec.IPFamilies = append(s.Spec.IPFamilies, corev1.IPv4Protocol)
			}
		}
		return nil
	}
	if *s.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(spec.Child("ipFamilyPolicy"), s.Spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, ip := range s.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(i), s.Spec.ClusterIPs, "IPv6 is not configured on this cluster"))
		}
	}
	for i, fam := range s.Spec.IPFamilies {
		if fam != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(spec.Child("ipFamilies").Index(i), fam, "not configured on this cluster"))
		}
	}
	if len(s.Spec.IPFamilies) == 0 {
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	return errs
}

// serviceTxn records what one create or update allocated and what it will
// release once the write succeeds.
type serviceTxn struct {
	reg                    *Registry
	dryRun                 bool
	ips, releaseIPs        []string
	ports, releaseNodePort []int
}

func (t *serviceTxn) finish(ctx context.Context, ok bool) {
	if t.dryRun {
		return
	}
	if ok {
		for _, ip := range t.releaseIPs {
			t.reg.releaseIP(ip)
		}
		t.reg.releasePorts(t.releaseNodePort)
		return
	}
	for _, ip := range t.ips {
		t.reg.releaseIP(ip)
	}
	t.reg.releasePorts(t.ports)
}

func invalidService(name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), name, errs)
}

// allocClusterIP gives s its clusterIP (the asked-for one or any free one).
func (t *serviceTxn) allocClusterIP(ctx context.Context, s *corev1.Service) error {
	if !needsClusterIP(s) || isHeadless(s) {
		return nil
	}
	want := ""
	if len(s.Spec.ClusterIPs) > 0 {
		want = s.Spec.ClusterIPs[0]
	}
	ip, err := t.reg.allocateIP(ctx, s, want, t.dryRun)
	if err != nil {
		if want == "" {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %v", err))
		}
		return invalidService(s.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), s.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", want, err))})
	}
	if !t.dryRun {
		t.ips = append(t.ips, ip)
	}
	s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
	return nil
}

// allocNodePorts gives each port of s its nodePort; ports of old (on update)
// that s keeps are not allocated again, and those it drops are released.
func (t *serviceTxn) allocNodePorts(s, old *corev1.Service) error {
	held := sets.New[int32]()
	if old != nil && needsNodePort(old) {
		for _, p := range old.Spec.Ports {
			if p.NodePort != 0 {
				held.Insert(p.NodePort)
			}
		}
	}
	kept := sets.New[int32]()
	if needsNodePort(s) {
		byPort := map[int32]int32{} // a port number listed twice (TCP and UDP) shares its nodePort
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if p.NodePort == 0 && !shouldAllocateNodePorts(s) {
				continue
			}
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			switch {
			case p.NodePort != 0 && (held.Has(p.NodePort) || kept.Has(p.NodePort)):
			case p.NodePort != 0:
				if _, err := t.reg.allocatePort(int(p.NodePort), t.dryRun); err != nil {
					return invalidService(s.Name, field.ErrorList{field.Invalid(path, p.NodePort, err.Error())})
				}
				t.addPort(int(p.NodePort))
			case byPort[p.Port] != 0:
				p.NodePort = byPort[p.Port]
			default:
				np, err := t.reg.allocatePort(0, t.dryRun)
				if err != nil {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %v", err))
				}
				p.NodePort = int32(np)
				t.addPort(np)
			}
			byPort[p.Port] = p.NodePort
			kept.Insert(p.NodePort)
		}
	}
	if needsHealthCheckNodePort(s) {
		hc := s.Spec.HealthCheckNodePort
		switch {
		case hc != 0 && old != nil && old.Spec.HealthCheckNodePort == hc:
		case hc != 0:
			if _, err := t.reg.allocatePort(int(hc), t.dryRun); err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", hc, err))
			}
			t.addPort(int(hc))
		default:
			np, err := t.reg.allocatePort(0, t.dryRun)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", np, err))
			}
			s.Spec.HealthCheckNodePort = int32(np)
			t.addPort(np)
		}
		kept.Insert(s.Spec.HealthCheckNodePort)
	}
	if old != nil && old.Spec.HealthCheckNodePort != 0 {
		held.Insert(old.Spec.HealthCheckNodePort)
	}
	for _, p := range sets.List(held.Difference(kept)) {
		t.releaseNodePort = append(t.releaseNodePort, int(p))
	}
	return nil
}

func (t *serviceTxn) addPort(p int) {
	if !t.dryRun {
		t.ports = append(t.ports, p)
	}
}

// BeginCreate implements CreateHook: it allocates the Service's clusterIP
// and nodePorts (upstream beginCreate and allocateCreate).
func (serviceStrategy) BeginCreate(ctx context.Context, reg *Registry, obj runtime.Object, dryRun bool) (FinishFunc, error) {
	s := obj.(*corev1.Service)
	if errs := initIPFamilies(s, nil); len(errs) > 0 {
		return nil, invalidService(s.Name, errs)
	}
	t := &serviceTxn{reg: reg, dryRun: dryRun}
	if err := t.allocClusterIP(ctx, s); err != nil {
		return nil, err
	}
	if err := t.allocNodePorts(s, nil); err != nil {
		t.finish(ctx, false)
		return nil, err
	}
	return t.finish, nil
}

// BeginUpdate implements UpdateHook: type changes allocate or release
// (ExternalName to ClusterIP gets an IP, NodePort to ClusterIP gives its
// nodePorts back once the update is written).
func (serviceStrategy) BeginUpdate(ctx context.Context, reg *Registry, obj, old runtime.Object, dryRun bool) (FinishFunc, error) {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	if errs := initIPFamilies(s, o); len(errs) > 0 {
		return nil, invalidService(s.Name, errs)
	}
	t := &serviceTxn{reg: reg, dryRun: dryRun}
	switch {
	case !needsClusterIP(o) && needsClusterIP(s):
		if err := t.allocClusterIP(ctx, s); err != nil {
			return nil, err
		}
	case needsClusterIP(o) && !needsClusterIP(s) && !isHeadless(o):
		t.releaseIPs = append(t.releaseIPs, o.Spec.ClusterIPs...)
	}
	if err := t.allocNodePorts(s, o); err != nil {
		t.finish(ctx, false)
		return nil, err
	}
	return t.finish, nil
}

// AfterDelete implements DeleteHook: a deleted Service's IP and ports go
// back to their ranges.
func (serviceStrategy) AfterDelete(ctx context.Context, reg *Registry, obj runtime.Object) {
	s := obj.(*corev1.Service)
	if needsClusterIP(s) && !isHeadless(s) {
		for _, ip := range s.Spec.ClusterIPs {
			reg.releaseIP(ip)
		}
	}
	var ports []int
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			ports = append(ports, int(p.NodePort))
		}
	}
	if s.Spec.HealthCheckNodePort != 0 {
		ports = append(ports, int(s.Spec.HealthCheckNodePort))
	}
	reg.releasePorts(ports)
}
