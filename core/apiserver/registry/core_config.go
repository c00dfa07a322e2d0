package registry

import (
	"encoding/json"
	"net/netip"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConfigMaps, Secrets, ServiceAccounts and Endpoints: the simple core/v1
// kinds (pkg/registry/core/{configmap,secret,serviceaccount,endpoint}).

// maxDataSize is core.MaxSecretSize: a ConfigMap's or Secret's data may hold
// 1 MiB.
const maxDataSize = 1 << 20

const immutableWhenSet = "field is immutable when `immutable` is set"

// --- configmaps ---

type configMapStrategy struct{}

func (configMapStrategy) PrepareForCreate(obj runtime.Object)      {}
func (configMapStrategy) PrepareForUpdate(obj, old runtime.Object) {}

func (configMapStrategy) Validate(obj runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	errs := validateMeta(cm, true)
	size := 0
	for key, v := range cm.Data {
		errs = append(errs, validateDataKey(key, field.NewPath("data").Key(key))...)
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		size += len(v)
	}
	for key, v := range cm.BinaryData {
		errs = append(errs, validateDataKey(key, field.NewPath("binaryData").Key(key))...)
		size += len(v)
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

func (s configMapStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	cm, o := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(cm, o, field.NewPath("metadata"))
	if o.Immutable != nil && *o.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSet))
		}
		if !reflect.DeepEqual(cm.Data, o.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSet))
		}
		if !reflect.DeepEqual(cm.BinaryData, o.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableWhenSet))
		}
	}
	return append(errs, s.Validate(obj)...)
}

func (configMapStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.ConfigMap))
}

// --- secrets ---

type secretStrategy struct{}

// prepareSecret is the v1 conversion and SetDefaults_Secret: stringData is
// written into data (it is write-only) and the type defaults to Opaque.
func prepareSecret(s *corev1.Secret) {
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

func (secretStrategy) PrepareForCreate(obj runtime.Object)      { prepareSecret(obj.(*corev1.Secret)) }
func (secretStrategy) PrepareForUpdate(obj, old runtime.Object) { prepareSecret(obj.(*corev1.Secret)) }

func (secretStrategy) Validate(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Secret)
	errs := validateMeta(s, true)
	data := field.NewPath("data")
	size := 0
	for key, v := range s.Data {
		errs = append(errs, validateDataKey(key, data.Key(key))...)
		size += len(v)
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(data, "", maxDataSize))
	}
	jsonKey := func(key string) {
		b, ok := s.Data[key]
		if !ok {
			errs = append(errs, field.Required(data.Key(key), ""))
			return
		}
		if err := json.Unmarshal(b, &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(data.Key(key), "<secret contents redacted>", err.Error()))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		jsonKey(corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		jsonKey(corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""), field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(data.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(data.Key(k), ""))
			}
		}
	}
	return errs
}

func (st secretStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*corev1.Secret), old.(*corev1.Secret)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(s, o, field.NewPath("metadata"))
	errs = append(errs, immutable(s.Type, o.Type, field.NewPath("type"))...)
	if o.Immutable != nil && *o.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSet))
		}
		if !reflect.DeepEqual(s.Data, o.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableWhenSet))
		}
	}
	return append(errs, st.Validate(obj)...)
}

// Fields: Secrets are selectable by type (upstream secret SelectableFields).
func (secretStrategy) Fields(obj runtime.Object) fields.Set {
	s := obj.(*corev1.Secret)
	f := metaFields(s)
	f["type"] = string(s.Type)
	return f
}

// --- serviceaccounts ---

// DefaultServiceAccountName is the ServiceAccount every namespace has and
// pods run as unless they name another.
const DefaultServiceAccountName = "default"

type serviceAccountStrategy struct{}

func (serviceAccountStrategy) PrepareForCreate(obj runtime.Object)      {}
func (serviceAccountStrategy) PrepareForUpdate(obj, old runtime.Object) {}

func (serviceAccountStrategy) Validate(obj runtime.Object) field.ErrorList {
	return validateMetaName(obj.(*corev1.ServiceAccount), true, apivalidation.ValidateServiceAccountName)
}

func (s serviceAccountStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount), field.NewPath("metadata"))
	return append(errs, s.Validate(obj)...)
}

func (serviceAccountStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.ServiceAccount))
}

// --- endpoints (pkg/registry/core/endpoint) ---

type endpointsStrategy struct{}

func defaultEndpoints(e *corev1.Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if e.Subsets[i].Ports[j].Protocol == "" {
				e.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

func (endpointsStrategy) PrepareForCreate(obj runtime.Object) {
	defaultEndpoints(obj.(*corev1.Endpoints))
}
func (endpointsStrategy) PrepareForUpdate(obj, old runtime.Object) {
	defaultEndpoints(obj.(*corev1.Endpoints))
}

func (endpointsStrategy) Validate(obj runtime.Object) field.ErrorList {
	e := obj.(*corev1.Endpoints)
	errs := validateMeta(e, true)
	p := field.NewPath("subsets")
	for i, ss := range e.Subsets {
		ip := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(ip, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], ip.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], ip.Child("notReadyAddresses").Index(j))...)
		}
		for j, port := range ss.Ports {
			pp := ip.Child("ports").Index(j)
			if len(ss.Ports) > 1 && port.Name == "" {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if port.Name != "" {
				for _, msg := range validation.IsDNS1123Label(port.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
				}
			}
			for _, msg := range validation.IsValidPortNum(int(port.Port)) {
				errs = append(errs, field.Invalid(pp.Child("port"), port.Port, msg))
			}
			errs = append(errs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := validateLegacyIP(p.Child("ip"), a.IP)
	if len(errs) == 0 {
		errs = append(errs, validateNonSpecialIP(a.IP, p.Child("ip"))...)
	}
	if a.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(a.Hostname) {
			errs = append(errs, field.Invalid(p.Child("hostname"), a.Hostname, msg))
		}
	}
	if a.NodeName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*a.NodeName) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg))
		}
	}
	return errs
}

// validateNonSpecialIP is upstream's ValidateNonSpecialIP: endpoints may not
// point at addresses that mean "this host".
func validateNonSpecialIP(ip string, p *field.Path) field.ErrorList {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	switch {
	case a.IsUnspecified():
		return field.ErrorList{field.Invalid(p, ip, "may not be unspecified (0.0.0.0, ::)")}
	case a.IsLoopback():
		return field.ErrorList{field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)")}
	case a.IsLinkLocalUnicast():
		return field.ErrorList{field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")}
	case a.IsLinkLocalMulticast():
		return field.ErrorList{field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")}
	}
	return nil
}

func (s endpointsStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*corev1.Endpoints), old.(*corev1.Endpoints), field.NewPath("metadata"))
	return append(errs, s.Validate(obj)...)
}

func (endpointsStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.Endpoints))
}
