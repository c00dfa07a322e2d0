package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// writeOptions are the query parameters of create, update and patch
// (metav1.CreateOptions, UpdateOptions and PatchOptions):
//
//	dryRun=All          run every step (defaults, validation, admission,
//	                    conflicts) but store nothing
//	fieldManager=NAME   who makes the change (managedFields)
//	fieldValidation=    Strict | Warn (default) | Ignore: unknown or
//	                    duplicate fields are an error, a Warning header, or dropped
//	force=true          server-side apply only: take fields other managers own
type writeOptions struct {
	DryRun          bool
	FieldManager    string
	FieldValidation string
	Force           bool
}

// parseWriteOptions reads and validates the options of verb ("create",
// "update" or "patch" with its patch type) with the API's own rules, so a
// bad value is 422 naming the parameter: `CreateOptions.meta.k8s.io "" is
// invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`.
func parseWriteOptions(r *http.Request, verb string, pt types.PatchType) (writeOptions, error) {
	q := r.URL.Query()
	o := writeOptions{FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	dry := q["dryRun"]
	o.DryRun = len(dry) > 0
	var errs field.ErrorList
	var kind string
	switch verb {
	case "create":
		kind = "CreateOptions"
		errs = metav1validation.ValidateCreateOptions(&metav1.CreateOptions{DryRun: dry, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation})
	case "update":
		kind = "UpdateOptions"
		errs = metav1validation.ValidateUpdateOptions(&metav1.UpdateOptions{DryRun: dry, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation})
	case "patch":
		kind = "PatchOptions"
		po := &metav1.PatchOptions{DryRun: dry, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
		if force, ok := queryBool(q, "force"); ok {
			po.Force, o.Force = &force, force
		}
		errs = metav1validation.ValidatePatchOptions(po, pt)
	}
	if len(errs) > 0 {
		return o, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return o, nil
}

// managerFor is the field manager of a write: the fieldManager parameter,
// or else the client's User-Agent up to the first "/", as upstream
// (kubectl's own requests say "kubectl-client-side-apply" and so on).
func managerFor(r *http.Request, o writeOptions) string {
	if o.FieldManager != "" {
		return o.FieldManager
	}
	ua := r.UserAgent()
	if i := strings.IndexByte(ua, '/'); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return "unknown"
	}
	if len(ua) > metav1validation.FieldManagerMaxLength {
		ua = ua[:metav1validation.FieldManagerMaxLength]
	}
	return ua
}

// methodNotAllowed is the 405 kube-apiserver answers for a method no route
// has (HEAD, OPTIONS, ... on an API path).
func methodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false)
}
