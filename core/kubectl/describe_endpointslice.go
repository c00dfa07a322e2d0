package kubectl

import (
	"io"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpointSlice describes an EndpointSlice as upstream's
// EndpointSliceDescriber does (pkg/describe/describe.go,
// describeEndpointSliceV1): the address type, the ports, and each endpoint
// with its readiness, hostname, pod, node and zone.
func (d *describer) endpointSlice(eps *discoveryv1.EndpointSlice) (string, error) {
	ev := d.events
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", eps.Name)
		w.Write(level0, "Namespace:\t%s\n", eps.Namespace)
		printLabels(w, "Labels", eps.Labels)
		printAnnotations(w, "Annotations", eps.Annotations)
		w.Write(level0, "AddressType:\t%s\n", string(eps.AddressType))
		if len(eps.Ports) == 0 {
			w.Write(level0, "Ports: <unset>\n")
		} else {
			w.Write(level0, "Ports:\n")
			w.Write(level1, "Name\tPort\tProtocol\n")
			w.Write(level1, "----\t----\t--------\n")
			for _, p := range eps.Ports {
				name, port, proto := "<unset>", "<unset>", "<unset>"
				if p.Name != nil && *p.Name != "" {
					name = *p.Name
				}
				if p.Port != nil {
					port = strconv.Itoa(int(*p.Port))
				}
				if p.Protocol != nil {
					proto = string(*p.Protocol)
				}
				w.Write(level1, "%s\t%s\t%s\n", name, port, proto)
			}
		}
		if len(eps.Endpoints) == 0 {
			w.Write(level0, "Endpoints: <none>\n")
		} else {
			w.Write(level0, "Endpoints:\n")
			for _, ep := range eps.Endpoints {
				addrs := strings.Join(ep.Addresses, ",")
				if addrs == "" {
					addrs = "<none>"
				}
				w.Write(level1, "- Addresses:\t%s\n", addrs)
				w.Write(level2, "Conditions:\n")
				w.Write(level3, "Ready:\t%s\n", boolOrUnset(ep.Conditions.Ready))
				w.Write(level2, "Hostname:\t%s\n", stringOrUnset(ep.Hostname))
				if ep.TargetRef != nil {
					w.Write(level2, "TargetRef:\t%s/%s\n", ep.TargetRef.Kind, ep.TargetRef.Name)
				}
				w.Write(level2, "NodeName:\t%s\n", stringOrUnset(ep.NodeName))
				w.Write(level2, "Zone:\t%s\n", stringOrUnset(ep.Zone))
			}
		}
		if ev {
			d.describeEvents(w, d.searchEvents("EndpointSlice", eps.Namespace, eps.Name, string(eps.UID)))
		}
		return nil
	})
}

func boolOrUnset(b *bool) string {
	if b == nil {
		return "<unset>"
	}
	return strconv.FormatBool(*b)
}

func stringOrUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
