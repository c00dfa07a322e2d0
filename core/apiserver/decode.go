package apiserver

import (
	"bytes"
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
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml: %v", err))
		}
	default:
		return unsupportedMedia(ct)
	}
	err = decodeJSON(w, r.URL.Query().Get("fieldValidation"), data, want, obj)
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

// decodeJSON decodes data into obj (see decode).
func decodeJSON(w http.ResponseWriter, validation string, data []byte, want schema.GroupVersionKind, obj runtime.Object) error {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, jsonErr(err)))
	}
	gv := want.GroupVersion().String()
	if tm.APIVersion != "" && tm.APIVersion != gv {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, gv))
	}
	if tm.Kind != "" && tm.Kind != want.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q", tm.Kind, want.Version, want.Kind, tm.Kind, gv))
	}
	strict, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowUnknownFields)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", want.Kind, want.Version, want.Kind, jsonErr(err)))
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	if len(strict) == 0 {
		return nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		msgs[i] = e.Error()
	}
	switch validation {
	case "Strict":
		return strictDecodingError(msgs)
	case "Ignore":
	case "", "Warn":
		for _, m := range msgs {
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", m))
		}
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("fieldValidation parameter unsupported: %q", validation))
	}
	return nil
}

func jsonErr(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
