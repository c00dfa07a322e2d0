package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// patch serves PATCH: JSON patch (RFC 6902), JSON merge patch (RFC 7386),
// strategic merge patch (Kubernetes' own: lists of containers merge by name)
// and server-side apply (apply.go).
// It reads the current object, applies the patch to its JSON, and updates
// with the read resourceVersion, retrying on conflict (upstream:
// k8s.io/apiserver/pkg/endpoints/handlers/patch.go).
func (s *Server) patch(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	pt := types.PatchType(mt)
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
	default:
		// Upstream's NewUnsupportedMediaTypeError over its patch types.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: " +
				"application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
		}}
	}
	if _, custom := st.Resource.New().(*unstructured.Unstructured); custom && pt == types.StrategicMergePatchType {
		// Upstream's crdHandler: custom resources have no Go type, so no
		// patch strategies.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: " +
				"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
		}}
	}
	wo, err := parseWriteOptions(r, "patch", pt)
	if err != nil {
		return err
	}
	patchBytes, err := s.readBody(r)
	if err != nil {
		return err
	}
	if pt == types.ApplyYAMLPatchType {
		return s.apply(w, r, st, info, wo, patchBytes)
	}
	// Duplicate fields in the patch itself are strict errors too (and, in a
	// JSON patch, unknown fields of an operation), as upstream.
	var patchStrict []string
	if wo.FieldValidation != "Ignore" {
		var into any = &map[string]any{}
		prefix := ""
		if pt == types.JSONPatchType {
			into, prefix = &[]jsonPatchOp{}, "json patch "
		}
		if errs, err := sigsjson.UnmarshalStrict(patchBytes, into); err == nil {
			for _, e := range errs {
				patchStrict = append(patchStrict, prefix+e.Error())
			}
		}
	}
	ctx := r.Context()
	opts := registry.UpdateOptions{DryRun: wo.DryRun}
	for attempt := 0; attempt < 5; attempt++ {
		var cur runtime.Object
		var want = st.Resource.GroupVersionKind()
		if info.Subresource == "scale" {
			sc, err := st.GetScale(ctx, info.Namespace, info.Name)
			if err != nil {
				return err
			}
			cur, want = sc, autoscalingv1.SchemeGroupVersion.WithKind("Scale")
		} else {
			if info.Subresource != "" && info.Subresource != "status" {
				return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "patch")
			}
			if cur, err = st.Get(ctx, namespaceOf(st, info), info.Name); err != nil {
				return err
			}
		}
		curJSON, err := json.Marshal(cur)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		patched, err := applyPatch(pt, curJSON, patchBytes, cur)
		if err != nil {
			return err
		}
		obj := newLike(cur)
		if err := decodeJSON(w, wo.FieldValidation, patched, want, obj, patchStrict...); err != nil {
			var strict strictDecodingError
			if errors.As(err, &strict) {
				return strictPatchError(pt, patchBytes, patched, strict)
			}
			return err
		}
		// A patch that sets resourceVersion is a precondition; otherwise the
		// version we read is, and a conflict means "read and patch again".
		explicitRV := patchSetsResourceVersion(patchBytes)
		if err := checkNames(obj, info); err != nil {
			return err
		}
		var out runtime.Object
		if sc, ok := obj.(*autoscalingv1.Scale); ok {
			out, err = st.UpdateScale(ctx, sc, opts)
		} else {
			opts.Subresource = info.Subresource
			obj = s.trackUpdate(r, st, info.Subresource, cur, obj, wo)
			out, err = st.Update(ctx, obj, opts)
		}
		if apierrors.IsConflict(err) && !explicitRV {
			continue
		}
		if err != nil {
			return err
		}
		return s.writeObject(w, info, http.StatusOK, out)
	}
	return apierrors.NewConflict(st.Resource.GroupResource(), info.Name, fmt.Errorf("too many conflicts while patching"))
}

// strictPatchError is upstream's answer to unknown fields in a patched
// object under fieldValidation=Strict: 422 naming the patch (the patch as a
// Go map for a strategic merge patch, the patched object otherwise).
func strictPatchError(pt types.PatchType, patch, patched []byte, strict strictDecodingError) error {
	value := string(patched)
	if pt == types.StrategicMergePatchType {
		var m map[string]any
		if json.Unmarshal(patch, &m) == nil {
			value = fmt.Sprintf("%+v", m)
		}
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, strict.Error())})
}

// maxJSONPatchOperations is the most operations one JSON patch may hold;
// more is 413 (kube-apiserver's limit, from CVE-2019-1002100, where a small
// patch of many operations took the API server down).
const maxJSONPatchOperations = 10000

// lowerJSONPatchCopyLimit sets the JSON patch library's accumulated copy
// limit to limit unless a lower one is already set. The library keeps it in
// a package variable shared by every server in the process; upstream's
// GenericAPIServer sets it the same way, with a compare-and-swap that only
// ever lowers it.
//
// Without it, a patch of copy operations that each copy a subtree into
// itself doubles the document per operation: 1.8 KB of patch asks for
// gigabytes. With it, the copies stop at the limit with the library's error
// ("Unable to complete the copy, the accumulated size increase of copy is
// N, exceeding the limit L"), which the API server answers 422.
func lowerJSONPatchCopyLimit(limit int64) {
	for limit > 0 {
		cur := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if cur > 0 && cur <= limit {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, cur, limit) {
			return
		}
	}
}

// applyPatch applies a patch to the JSON of the current object. The patch
// libraries can panic on some malformed patches (evanphx/json-patch v4 on a
// "replace" without a value, found by FuzzApplyPatch): that is bad input, so
// it is answered 400, not a crash.
func applyPatch(pt types.PatchType, cur, patch []byte, schemaObj runtime.Object) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, apierrors.NewBadRequest(fmt.Sprintf("invalid %s: %v", pt, p))
		}
	}()
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(p) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		if out, err = p.Apply(cur); err != nil {
			// A well-formed patch that does not apply (a missing path, a
			// failed test, the copy limit) is 422, as upstream.
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return out, nil
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(cur, patch)
	case types.StrategicMergePatchType:
		out, err = strategicpatch.StrategicMergePatch(cur, patch, schemaObj)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

// jsonPatchOp is one JSON patch operation, for the strict checks.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

func patchSetsResourceVersion(patch []byte) bool {
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return json.Unmarshal(patch, &m) == nil && m.Metadata.ResourceVersion != ""
}

// newLike returns a new empty object of obj's type.
func newLike(obj runtime.Object) runtime.Object {
	out := obj.DeepCopyObject()
	// Reset by decoding into a zero value of the same type.
	switch o := out.(type) {
	case *autoscalingv1.Scale:
		*o = autoscalingv1.Scale{}
		return o
	}
	return zeroOf(out)
}
