package registry

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- discovery.k8s.io/v1 EndpointSlices (pkg/registry/discovery/endpointslice,
// pkg/apis/discovery/validation) ---

type endpointSliceStrategy struct{}

const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 20000
)

var addressTypes = []string{string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6), string(discoveryv1.AddressTypeFQDN)}

// defaultEndpointSlice is SetDefaults_EndpointPort: ports are named "" and
// TCP unless said otherwise.
func defaultEndpointSlice(s *discoveryv1.EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
	}
}

func (endpointSliceStrategy) PrepareForCreate(obj runtime.Object) {
	defaultEndpointSlice(obj.(*discoveryv1.EndpointSlice))
}

// PrepareForUpdate: an EndpointSlice has no spec; any change but metadata
// bumps its generation.
func (endpointSliceStrategy) PrepareForUpdate(obj, old runtime.Object) {
	s, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	defaultEndpointSlice(s)
	a, b := s.DeepCopy(), o.DeepCopy()
	a.ObjectMeta = b.ObjectMeta
	if !apiequality.Semantic.DeepEqual(a, b) {
		s.Generation = o.Generation + 1
	}
}

func (endpointSliceStrategy) Validate(obj runtime.Object) field.ErrorList {
	s := obj.(*discoveryv1.EndpointSlice)
	errs := validateMeta(s, true)
	if s.AddressType == "" {
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	} else if !hasString(addressTypes, string(s.AddressType)) {
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), s.AddressType, addressTypes))
	}
	ep := field.NewPath("endpoints")
	if len(s.Endpoints) > maxSliceEndpoints {
		errs = append(errs, field.TooMany(ep, len(s.Endpoints), maxSliceEndpoints))
	}
	for i, e := range s.Endpoints {
		ip := ep.Index(i)
		ap := ip.Child("addresses")
		switch {
		case len(e.Addresses) == 0:
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		case len(e.Addresses) > maxSliceAddresses:
			errs = append(errs, field.TooMany(ap, len(e.Addresses), maxSliceAddresses))
		}
		for j, a := range e.Addresses {
			errs = append(errs, validateSliceAddress(s.AddressType, a, ap.Index(j))...)
		}
		if e.NodeName != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*e.NodeName) {
				errs = append(errs, field.Invalid(ip.Child("nodeName"), *e.NodeName, msg))
			}
		}
		if e.Hostname != nil {
			for _, msg := range validation.IsDNS1123Label(*e.Hostname) {
				errs = append(errs, field.Invalid(ip.Child("hostname"), *e.Hostname, msg))
			}
		}
		errs = append(errs, metavalidation.ValidateLabels(e.DeprecatedTopology, ip.Child("deprecatedTopology"))...)
	}
	pp := field.NewPath("ports")
	if len(s.Ports) > maxSlicePorts {
		errs = append(errs, field.TooMany(pp, len(s.Ports), maxSlicePorts))
	}
	names := sets.New[string]()
	for i, p := range s.Ports {
		ip := pp.Index(i)
		if p.Name == nil {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			if *p.Name != "" {
				for _, msg := range validation.IsDNS1123Label(*p.Name) {
					errs = append(errs, field.Invalid(ip.Child("name"), *p.Name, msg))
				}
			}
			if names.Has(*p.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), *p.Name))
			}
			names.Insert(*p.Name)
		}
		if p.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else {
			errs = append(errs, validateProtocol(*p.Protocol, ip.Child("protocol"))...)
		}
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				errs = append(errs, field.Invalid(ip.Child("port"), *p.Port, msg))
			}
		}
	}
	return errs
}

// validateSliceAddress checks one address by the slice's addressType.
func validateSliceAddress(t discoveryv1.AddressType, a string, p *field.Path) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		if errs := validateLegacyIP(p, a); len(errs) > 0 {
			return errs
		}
		if addr, err := netip.ParseAddr(a); err == nil && addr.Is4() != (t == discoveryv1.AddressTypeIPv4) {
			return field.ErrorList{field.Invalid(p, a, "must be an "+string(t)+" address")}
		}
		return validateNonSpecialIP(a, p)
	case discoveryv1.AddressTypeFQDN:
		var errs field.ErrorList
		for _, msg := range validation.IsDNS1123Subdomain(a) {
			errs = append(errs, field.Invalid(p, a, msg))
		}
		return errs
	}
	return nil
}

func (s endpointSliceStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(n, o, field.NewPath("metadata"))
	errs = append(errs, immutable(n.AddressType, o.AddressType, field.NewPath("addressType"))...)
	return append(errs, s.Validate(obj)...)
}

func (endpointSliceStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*discoveryv1.EndpointSlice))
}
