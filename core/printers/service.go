package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Services, Endpoints and EndpointSlices: how traffic finds pods.

var serviceColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
	{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
}

var endpointsColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
	{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
	{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

func init() {
	Register(&corev1.Service{}, serviceColumns, printService)
	Register(&corev1.Endpoints{}, endpointsColumns, printEndpoints)
	Register(&discoveryv1.EndpointSlice{}, endpointSliceColumns, printEndpointSlice)
}

// loadBalancerWidth is how much of a LoadBalancer's addresses fits the
// EXTERNAL-IP column (upstream loadBalancerWidth); tables always carry the
// wide form, as kube-apiserver's do, so it is not applied here.
const loadBalancerWidth = 16

// printService is upstream's printService: CLUSTER-IP is the first of
// clusterIPs, EXTERNAL-IP depends on the type, PORT(S) is port[:nodePort]/proto.
func printService(obj runtime.Object, now time.Time) ([]any, error) {
	s := obj.(*corev1.Service)
	internal := "<none>"
	if len(s.Spec.ClusterIPs) > 0 {
		internal = s.Spec.ClusterIPs[0]
	}
	ports := servicePorts(s.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []any{s.Name, string(s.Spec.Type), internal, serviceExternalIP(s, true), ports,
		Age(s.CreationTimestamp, now), labels.FormatLabels(s.Spec.Selector)}, nil
}

func serviceExternalIP(s *corev1.Service, wide bool) string {
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerIPs(s.Status.LoadBalancer, wide)
		if len(s.Spec.ExternalIPs) > 0 {
			var all []string
			if lb != "" {
				all = append(all, strings.Split(lb, ",")...)
			}
			return strings.Join(append(all, s.Spec.ExternalIPs...), ",")
		}
		if lb != "" {
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

func loadBalancerIPs(st corev1.LoadBalancerStatus, wide bool) string {
	set := map[string]bool{}
	for _, ing := range st.Ingress {
		if ing.IP != "" {
			set[ing.IP] = true
		} else if ing.Hostname != "" {
			set[ing.Hostname] = true
		}
	}
	list := make([]string, 0, len(set))
	for s := range set {
		list = append(list, s)
	}
	sort.Strings(list)
	r := strings.Join(list, ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[:loadBalancerWidth-3] + "..."
	}
	return r
}

func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// printEndpoints is upstream's printEndpoints: the first three ip:port
// pairs, then "+ N more...".
func printEndpoints(obj runtime.Object, now time.Time) ([]any, error) {
	e := obj.(*corev1.Endpoints)
	return []any{e.Name, formatEndpoints(e), Age(e.CreationTimestamp, now)}, nil
}

func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more, count := false, 0
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			// A headless Service may have endpoints without ports.
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

// printEndpointSlice is upstream's printEndpointSlice.
func printEndpointSlice(obj runtime.Object, now time.Time) ([]any, error) {
	s := obj.(*discoveryv1.EndpointSlice)
	return []any{s.Name, string(s.AddressType), slicePorts(s.Ports), sliceEndpoints(s.Endpoints), Age(s.CreationTimestamp, now)}, nil
}

func slicePorts(ports []discoveryv1.EndpointPort) string {
	const max = 3
	var list []string
	more, count := false, 0
	for _, p := range ports {
		if len(list) < max {
			n := "*"
			if p.Port != nil {
				n = strconv.Itoa(int(*p.Port))
			} else if p.Name != nil {
				n = *p.Name
			}
			list = append(list, n)
		} else if len(list) == max {
			more = true
		}
		count++
	}
	return listWithMore(list, more, count, max)
}

func sliceEndpoints(eps []discoveryv1.Endpoint) string {
	const max = 3
	var list []string
	more, count := false, 0
	for _, e := range eps {
		for _, a := range e.Addresses {
			if len(list) < max {
				list = append(list, a)
			} else if len(list) == max {
				more = true
			}
			count++
		}
	}
	return listWithMore(list, more, count, max)
}

func listWithMore(list []string, more bool, count, max int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		return "<unset>"
	}
	return ret
}
