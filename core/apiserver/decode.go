package apiserver

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decode reads the request body into obj, which must be of kind want.
//
// Like kube-apiserver it accepts JSON and YAML, refuses a body of another
// kind or apiVersion, and handles unknown fields by the request's
// fieldValidation: Strict (400), Warn (the default: a Warning header) or
// Ignore.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, want schema.GroupVersionKind, obj runtime.Object) error {
	data, err := s.readBody(r)
	if err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	var yamlStrict []string // duplicate keys in a YAML body
	mediaType := "application/json"
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return unsupportedMedia(ct)
		}
		mediaType = mt
	}
	switch mediaType {
	case protobufMediaType:
		return decodeProtobuf(data, want, obj)
	case "application/json", "*/*":
	case "application/yaml", "application/x-yaml", "text/yaml":
		original := data
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return unrecognized(want, err, original)
		}
		// Converting YAML to JSON keeps the last of duplicate keys; the
		// strict conversion finds them, as upstream's strict serializer
		// does ("yaml: unmarshal errors:\n  line 3: key \"name\" already
		// set in map").
		if v := r.URL.Query().Get("fieldValidation"); v != "Ignore" {
			if _, err := yaml.YAMLToJSONStrict(original); err != nil {
				yamlStrict = append(yamlStrict, err.Error())
			}
		}
	default:
		return unsupportedMedia(ct)
	}
	err = decodeJSON(w, r.URL.Query().Get("fieldValidation"), data, want, obj, yamlStrict...)
	var strict strictDecodingError
	if errors.As(err, &strict) {
		// Upstream's transformDecodeError wording.
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, strict))
	}
	return err
}

// strictDecodingError lists unknown or duplicate fields under
// fieldValidation=Strict; the caller words the 4xx (runtime's
// StrictDecodingError).
type strictDecodingError []string

func (e strictDecodingError) Error() string {
	return "strict decoding error: " + strings.Join(e, ", ")
}

// protobufMediaType is what client-go's typed clients send for built-in
// types; the real kubectl's `create deployment` does.
const protobufMediaType = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every Kubernetes protobuf body; a runtime.Unknown
// envelope (apiVersion, kind, raw bytes) follows
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var protobufMagic = []byte("k8s\x00")

// decodeProtobuf decodes a Kubernetes protobuf body into obj.
func decodeProtobuf(data []byte, want schema.GroupVersionKind, obj runtime.Object) error {
	if !bytes.HasPrefix(data, protobufMagic) {
		return apierrors.NewBadRequest("provided input did not contain the Kubernetes protobuf prefix")
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(data[len(protobufMagic):]); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, err))
	}
	gv := want.GroupVersion().String()
	if unk.APIVersion != "" && unk.APIVersion != gv {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", unk.APIVersion, gv))
	}
	if unk.Kind != "" && unk.Kind != want.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q", unk.Kind, want.Version, want.Kind, unk.Kind, gv))
	}
	u, ok := obj.(interface{ Unmarshal([]byte) error })
	if !ok {
		return unsupportedMedia(protobufMediaType)
	}
	if err := u.Unmarshal(unk.Raw); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, err))
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	return nil
}

// decodeProtobufDeleteOptions decodes a protobuf DeleteOptions body.
// DeleteOptions is registered in every group version, so clients tag it with
// the version of the resource being deleted (apps/v1, v1, ...).
func decodeProtobufDeleteOptions(data []byte, opts *metav1.DeleteOptions) error {
	bad := func(err error) error {
		return apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: %v", err))
	}
	if !bytes.HasPrefix(data, protobufMagic) {
		return apierrors.NewBadRequest("provided input did not contain the Kubernetes protobuf prefix")
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(data[len(protobufMagic):]); err != nil {
		return bad(err)
	}
	if unk.Kind != "" && unk.Kind != "DeleteOptions" {
		return bad(fmt.Errorf("no kind %q is registered for version %q", unk.Kind, unk.APIVersion))
	}
	if err := opts.Unmarshal(unk.Raw); err != nil {
		return bad(err)
	}
	return nil
}

// unsupportedMedia is upstream's errUnsupportedMediaType (negotiation's
// NewUnsupportedMediaTypeError) over the media types kubetab decodes: 415,
// naming what is accepted, not what was sent.
func unsupportedMedia(string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, " + protobufMediaType,
	}}
}

// decodeJSON decodes data into obj (see decode). Unknown and duplicate
// fields are strict errors, after those of pre (the YAML body's duplicate
// keys).
func decodeJSON(w http.ResponseWriter, validation string, data []byte, want schema.GroupVersionKind, obj runtime.Object, pre ...string) error {
	// What upstream's SimpleMetaFactory reads first (the same shape, so a
	// type error reads the same).
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		return unrecognized(want, fmt.Errorf("couldn't get version/kind; json parse error: %w", err), data)
	}
	gv := want.GroupVersion().String()
	if tm.APIVersion != "" && tm.APIVersion != gv {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, gv))
	}
	if tm.Kind != "" && tm.Kind != want.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q", tm.Kind, want.Version, want.Kind, tm.Kind, gv))
	}
	// Every strict check: duplicate fields ("duplicate field
	// \"metadata.name\"") and unknown ones ("unknown field \"spec.foo\"").
	strict, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, jsonErr(err)))
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	if len(strict) == 0 && len(pre) == 0 {
		return nil
	}
	msgs := append([]string(nil), pre...)
	for _, e := range strict {
		msgs = append(msgs, e.Error())
	}
	switch validation {
	case "Strict":
		return strictDecodingError(msgs)
	case "Ignore":
	case "", "Warn":
		for _, m := range msgs {
			for _, line := range yamlWarnings(m) {
				w.Header().Add("Warning", fmt.Sprintf("299 - %q", line))
			}
		}
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("fieldValidation parameter unsupported: %q", validation))
	}
	return nil
}

// yamlWarnings splits a YAML strict error into one warning per line, as
// upstream's parseYAMLWarnings: "yaml: unmarshal errors:\n  line 3: key
// \"name\" already set in map" warns `line 3: key "name" already set in
// map`. Other errors are one warning.
func yamlWarnings(msg string) []string {
	for _, prefix := range []string{"yaml: unmarshal errors:\n", "error converting YAML to JSON: yaml: unmarshal errors:\n"} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			lines := strings.Split(rest, "\n")
			for i := range lines {
				lines[i] = strings.TrimSpace(lines[i])
			}
			return lines
		}
	}
	return []string{msg}
}

// unrecognized is upstream's answer (transformDecodeError) for a body the
// serializer cannot read far enough to find its apiVersion and kind: not
// JSON (YAML sent as JSON: kubectl create --raw sends no Content-Type),
// or YAML that does not parse. It quotes the start of the body:
//
//	the object provided is unrecognized (must be of type ConfigMap):
//	couldn't get version/kind; json parse error: invalid character 'a'
//	looking for beginning of value (61706956657273696f6e3a2076310a6b ...)
func unrecognized(want schema.GroupVersionKind, err error, body []byte) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", want.Kind, err, summarizeBody(body, 30)))
}

// summarizeBody is upstream's summarizeData: the first max bytes, as text
// when the body looks like JSON and in hex otherwise, with " ..." when cut.
func summarizeBody(data []byte, max int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > max {
			return string(data[:max]) + " ..."
		}
		return string(data)
	default:
		if len(data) > max {
			return hex.EncodeToString(data[:max]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}

func jsonErr(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
