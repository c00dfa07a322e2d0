package apiserver

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Content negotiation
//
// The Accept header picks how an answer is encoded (upstream:
// k8s.io/apiserver/pkg/endpoints/handlers/negotiation). kubetab encodes JSON
// and YAML; a client that accepts only protobuf gets 406 Not Acceptable,
// while one that lists protobuf first and JSON after it (client-go's typed
// clients do) gets JSON, which client-go decodes by the Content-Type.
//
// Parameters on application/json ask for a different shape of the same data:
//
//	as=Table;g=meta.k8s.io;v=v1                  rows and columns (kubectl get)
//	as=PartialObjectMetadata;g=meta.k8s.io;v=v1  only metadata (metadata informers)
//	as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2   aggregated discovery
//
// A media range with a shape kubetab does not serve is skipped, as upstream.

// outputShape is the shape of an object answer.
type outputShape int

const (
	shapeObject    outputShape = iota // the object itself
	shapeTable                        // meta.k8s.io Table
	shapeMetadata                     // meta.k8s.io PartialObjectMetadata(List)
	shapeDiscovery                    // apidiscovery.k8s.io/v2 APIGroupDiscoveryList
)

// output is what negotiation chose.
type output struct {
	mediaType string // "application/json" or "application/yaml"
	shape     outputShape
	// include is the Table's includeObject (None, Metadata, Object); see
	// table.go.
	include metav1.IncludeObjectPolicy
	// table, when set, builds the Table instead of the printers: a custom
	// resource's additionalPrinterColumns (registry.Resource.Table).
	table func(obj runtime.Object, now time.Time) (*metav1.Table, error)
}

// acceptedMediaTypes is what the 406 answer lists.
var acceptedMediaTypes = []string{"application/json", "application/yaml"}

// notAcceptable is upstream's errNotAcceptable: 406 with the accepted types.
type notAcceptable struct{ accepted []string }

func (e notAcceptable) Error() string {
	return fmt.Sprintf("only the following media types are accepted: %v", strings.Join(e.accepted, ", "))
}

func (e notAcceptable) Status() metav1.Status {
	return metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReasonNotAcceptable, Message: e.Error(),
	}
}

// mediaRange is one entry of an Accept header.
type mediaRange struct {
	typ, sub string
	params   map[string]string
	q        float64
}

// parseAccept splits an Accept header, in the client's order of preference
// (by q, then by position).
func parseAccept(header string) []mediaRange {
	var out []mediaRange
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		typ, sub, _ := strings.Cut(mt, "/")
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
			delete(params, "q")
		}
		if q <= 0 {
			continue
		}
		out = append(out, mediaRange{typ: typ, sub: sub, params: params, q: q})
	}
	// A stable sort by q keeps the header's order among equals.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].q > out[j-1].q; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// negotiate picks the encoding and shape of an answer. allowed says which
// shapes the endpoint can produce besides the object itself.
func negotiate(r *http.Request, allowed ...outputShape) (output, error) {
	header := r.Header.Get("Accept")
	if strings.TrimSpace(header) == "" {
		return output{mediaType: "application/json"}, nil
	}
	for _, m := range parseAccept(header) {
		var mediaType string
		switch {
		case m.typ == "*" && m.sub == "*", m.typ == "application" && m.sub == "*", m.typ == "application" && m.sub == "json":
			mediaType = "application/json"
		case m.typ == "application" && (m.sub == "yaml" || m.sub == "x-yaml"), m.typ == "text" && m.sub == "yaml":
			mediaType = "application/yaml"
		default:
			continue // protobuf, CBOR, text/html ...
		}
		shape, ok := shapeOf(m.params)
		if !ok || (shape != shapeObject && !hasShape(allowed, shape)) {
			continue
		}
		return output{mediaType: mediaType, shape: shape}, nil
	}
	return output{}, notAcceptable{acceptedMediaTypes}
}

// shapeOf reads the as/g/v parameters of a media range.
func shapeOf(params map[string]string) (outputShape, bool) {
	as := params["as"]
	if as == "" {
		return shapeObject, true
	}
	g, v := params["g"], params["v"]
	switch {
	case as == "Table" && g == metav1.GroupName && (v == "v1" || v == "v1beta1"):
		return shapeTable, true
	case (as == "PartialObjectMetadata" || as == "PartialObjectMetadataList") && g == metav1.GroupName && (v == "v1" || v == "v1beta1"):
		return shapeMetadata, true
	case as == "APIGroupDiscoveryList" && g == "apidiscovery.k8s.io" && v == "v2":
		return shapeDiscovery, true
	}
	return 0, false
}

func hasShape(list []outputShape, s outputShape) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// asMetadata turns an object or a list into PartialObjectMetadata(List).
func asMetadata(obj runtime.Object) (runtime.Object, error) {
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		lacc, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		out := &metav1.PartialObjectMetadataList{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
			ListMeta: metav1.ListMeta{
				ResourceVersion: lacc.GetResourceVersion(), Continue: lacc.GetContinue(),
				RemainingItemCount: lacc.GetRemainingItemCount(),
			},
			Items: make([]metav1.PartialObjectMetadata, 0, len(items)),
		}
		for _, it := range items {
			m, err := asMetadata(it)
			if err != nil {
				return nil, err
			}
			out.Items = append(out.Items, *m.(*metav1.PartialObjectMetadata))
		}
		return out, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}}
	oma, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	om, ok := oma.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	out.ObjectMeta = *om
	return out, nil
}

// encode serializes v as the negotiated media type.
func (o output) encode(v any) ([]byte, error) {
	data, err := jsonMarshal(v)
	if err != nil || o.mediaType != "application/yaml" {
		return data, err
	}
	return yaml.JSONToYAML(data)
}
