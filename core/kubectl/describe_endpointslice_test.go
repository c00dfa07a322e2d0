package kubectl

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestDescribeEndpointSliceGolden(t *testing.T) {
	e := newEnv(t)
	name, port, proto, node, host, zone := "http", int32(8080), corev1.ProtocolTCP, "node-1", "web-0", "zone-a"
	yes, no := true, false
	s := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
	s.Name, s.Namespace = "web-abcde", "default"
	s.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
	s.Ports = []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}}
	s.Endpoints = []discoveryv1.Endpoint{
		{Addresses: []string{"10.244.1.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}, NodeName: &node,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1", Namespace: "default"}},
		{Addresses: []string{"10.244.1.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}, Hostname: &host, Zone: &zone},
	}
	e.create(s)
	empty := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
	empty.Name, empty.Namespace = "api-fghij", "default"
	e.create(empty)
	golden(t, "describe-endpointslice", e.transcript(
		"describe endpointslice web-abcde",
		"describe endpointslices api-fghij",
	))
}
