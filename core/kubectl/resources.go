package kubectl

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// target is what a command line names: a resource and either some object
// names or, with none, the whole collection.
type target struct {
	res   apiResource
	names []string
}

// parseResourceArgs reads kubectl's "TYPE[,TYPE...] [NAME...]" or
// "TYPE/NAME [TYPE/NAME...]" arguments (upstream: the resource builder's
// ResourceTypeOrNameArgs). A category such as "all" stands for its
// resources.
func (s *session) parseResourceArgs(args []string) ([]target, error) {
	if len(args) == 0 {
		return nil, nil
	}
	slash := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slash++
		}
	}
	if slash > 0 {
		if slash != len(args) {
			return nil, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
		}
		var out []target
		for _, a := range args {
			typ, name, _ := strings.Cut(a, "/")
			if name == "" {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			res, err := s.resolve(typ)
			if err != nil {
				return nil, err
			}
			// consecutive names of one type share a table
			if n := len(out); n > 0 && out[n-1].res.Name == res.Name && out[n-1].res.Group == res.Group {
				out[n-1].names = append(out[n-1].names, name)
				continue
			}
			out = append(out, target{res: res, names: []string{name}})
		}
		return out, nil
	}
	var out []target
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			continue
		}
		res, err := s.resolve(typ)
		if err != nil {
			var nr *noResourceError
			if errors.As(err, &nr) {
				if cat, cerr := s.category(strings.ToLower(typ)); cerr == nil && len(cat) > 0 {
					for _, r := range cat {
						out = append(out, target{res: r, names: args[1:]})
					}
					continue
				}
			}
			return nil, err
		}
		out = append(out, target{res: res, names: args[1:]})
	}
	return out, nil
}

// namespaceFor returns the namespace to use for a resource: "" for
// cluster-scoped ones and for all namespaces.
func (s *session) namespaceFor(res apiResource, allNamespaces bool) string {
	if !res.Namespaced || allNamespaces {
		return ""
	}
	return s.namespace
}

// listQuery builds the query of a list or watch.
func listQuery(labelSelector, fieldSelector string) url.Values {
	q := url.Values{}
	if labelSelector != "" {
		q.Set("labelSelector", labelSelector)
	}
	if fieldSelector != "" {
		q.Set("fieldSelector", fieldSelector)
	}
	return q
}

// getObject fetches one object as a JSON map with apiVersion and kind set.
func (s *session) getObject(res apiResource, namespace, name string) (map[string]any, error) {
	obj := map[string]any{}
	err := s.client.into(s.ctx, request{method: http.MethodGet, path: res.path(namespace, name, "")}, &obj)
	if err != nil {
		return nil, err
	}
	setTypeMeta(obj, res)
	return obj, nil
}

// listObjects fetches a collection; each item gets apiVersion and kind (a
// list's items carry none on the wire). It also returns the list's
// resourceVersion, where a watch may start.
func (s *session) listObjects(res apiResource, namespace string, q url.Values) ([]map[string]any, string, error) {
	list := map[string]any{}
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: res.path(namespace, "", ""), query: q}, &list); err != nil {
		return nil, "", err
	}
	var items []map[string]any
	raw, _ := list["items"].([]any)
	for _, it := range raw {
		if m, ok := it.(map[string]any); ok {
			setTypeMeta(m, res)
			items = append(items, m)
		}
	}
	return items, nestedString(list, "metadata", "resourceVersion"), nil
}

func setTypeMeta(obj map[string]any, res apiResource) {
	obj["apiVersion"] = res.GroupVersion().String()
	obj["kind"] = res.Kind
}

// trackingWriter counts what was written (did `get` print anything?).
type trackingWriter struct {
	w       io.Writer
	written int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.w.Write(p)
}

// separatorWriter writes an empty line before the next output once ready:
// the blank line between the tables of `kubectl get all`.
type separatorWriter struct {
	w     io.Writer
	ready bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && s.ready {
		if _, err := s.w.Write([]byte("\n")); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.w.Write(p)
}
