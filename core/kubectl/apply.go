package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// lastAppliedAnnotation holds the configuration the last `kubectl apply`
// sent; the next apply compares against it to know which fields the user
// removed from the file.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

const warningNoLastApplied = "Warning: resource %[1]s is missing the %[2]s annotation which is required by %[3]s apply. %[3]s apply should only be used on resources created declaratively by either %[3]s create --save-config or %[3]s apply. The missing annotation will be patched automatically.\n"

// patchScheme knows the Go types kubectl can compute strategic merge
// patches for (their struct tags say how lists merge: containers by name).
var patchScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = appsv1.AddToScheme(s)
	return s
}()

func (s *session) newApplyCommand() *cobra.Command {
	var files []string
	var o applyOptions
	var dryRunFlag string
	cmd := &cobra.Command{
		Use:                   "apply (-f FILENAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Apply a configuration to a resource by file name or stdin",
		Long: `Apply a configuration to a resource by file name or stdin. The resource name must be specified. This resource will be created if it doesn't exist yet. To use 'apply', always create the resource initially with either 'apply' or 'create --save-config'.

 JSON and YAML formats are accepted. This is client-side apply: kubectl GETs the object, and either POSTs it (created) or PATCHes it with a three-way strategic merge patch between the last applied configuration (an annotation), the file, and the live object (configured, or unchanged when there is nothing to send). With --server-side kubectl sends the file as it is (an apply patch) and the API server merges it, recording which fields each field manager owns (serverside-applied).`,
		Example: `  # Apply the configuration in web.yaml to a deployment
  kubectl apply -f web.yaml

  # Apply the YAML passed into stdin
  cat web.yaml | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(files) == 0 {
				return usageErrorf(cmd, "must specify one of -f and -k")
			}
			if len(args) > 0 {
				return usageErrorf(cmd, "Unexpected args: %v", args)
			}
			if o.forceConflicts && !o.serverSide {
				return errors.New("--force-conflicts only works with --server-side")
			}
			if err := s.parseValidate(); err != nil {
				return err
			}
			if s.applyDryRun, err = parseDryRun(dryRunFlag); err != nil {
				return err
			}
			if o.serverSide && s.applyDryRun == "client" {
				return errors.New("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
			}
			// Server-side apply's manager is "kubectl" unless one is given
			// (upstream GetServerSideFieldManager).
			if o.serverSide && o.fieldManager == csaManager {
				o.fieldManager = "kubectl"
			}
			return s.runApply(files, o)
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "The files that contain the configurations to apply.")
	cmd.Flags().BoolVar(&o.serverSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	cmd.Flags().BoolVar(&o.forceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	cmd.Flags().StringVar(&o.fieldManager, "field-manager", csaManager, "Name of the manager used to track field ownership.")
	cmd.Flags().StringVar(&dryRunFlag, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	s.addRecursiveFlag(cmd)
	s.addValidateFlag(cmd)
	return cmd
}

// applyOptions are apply's flags for how it writes.
type applyOptions struct {
	serverSide, forceConflicts bool
	fieldManager               string
}

// csaManager is client-side apply's field manager.
const csaManager = "kubectl-client-side-apply"

// maxPatchRetry is how often client-side apply reads the object again and
// recomputes its patch after a 409 Conflict (upstream patcher.go).
const maxPatchRetry = 5

func (s *session) runApply(files []string, o applyOptions) error {
	objs, err := s.readManifests("apply", files)
	if err != nil {
		return err
	}
	var errs multiError
	for _, m := range objs {
		var op string
		var err error
		if o.serverSide {
			op, err = s.serverSideApply(m, o)
		} else {
			op, err = s.applyOne(m, o.fieldManager)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(s.out(), "%s/%s %s%s\n", m.res.kindName(), m.name, op, s.applyDryRun.suffix())
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// applyOne applies one object and says what happened: created, configured
// or unchanged (upstream pkg/cmd/apply/apply.go applyOneObject and
// patcher.go patchSimple).
func (s *session) applyOne(m manifest, fieldManager string) (string, error) {
	if m.name == "" {
		if nestedString(m.obj, "metadata", "generateName") != "" {
			return "", fmt.Errorf("from %s: cannot use generate name with apply", nestedString(m.obj, "metadata", "generateName"))
		}
		return "", sourceErr("creating", m.source, fmt.Errorf("resource name may not be empty"))
	}
	// The object carries its namespace, as upstream's builder sets it on
	// the objects it reads (so the annotation records "namespace" too).
	if m.namespace != "" && nestedString(m.obj, "metadata", "namespace") == "" {
		m.obj = deepCopyMap(m.obj)
		if md, ok := m.obj["metadata"].(map[string]any); ok {
			md["namespace"] = m.namespace
		}
	}
	// modified: the file's object with the annotation it will carry.
	modified, err := modifiedConfiguration(m.obj, true)
	if err != nil {
		return "", err
	}
	current, err := s.getObject(m.res, m.namespace, m.name)
	if apierrors.IsNotFound(err) {
		body, err := modifiedConfiguration(m.obj, true)
		if err != nil {
			return "", err
		}
		if s.applyDryRun == "client" {
			return "created", nil
		}
		_, err = s.client.do(s.ctx, request{method: http.MethodPost, path: m.res.path(m.namespace, "", ""), query: s.writeQuery(fieldManager), body: body, contentType: "application/json"})
		if err != nil {
			return "", sourceErr("creating", m.source, err)
		}
		return "created", nil
	}
	if err != nil {
		return "", sourceErr(fmt.Sprintf("retrieving current configuration of:\nResource: %q, GroupVersionKind: %q\nName: %q, Namespace: %q\nfrom server for:", m.res.groupResource().String(), m.res.GroupVersion().WithKind(m.res.Kind).String(), m.name, m.namespace), m.source, err)
	}
	annotations := nestedMap(current, "metadata", "annotations")
	original, hasOriginal := annotations[lastAppliedAnnotation].(string)
	if !hasOriginal {
		fmt.Fprintf(s.errOut(), warningNoLastApplied, m.res.kindName()+"/"+m.name, lastAppliedAnnotation, "kubectl")
	}
	// A 409 Conflict (the object changed between GET and PATCH) is retried
	// with the object read again, up to maxPatchRetry times; a file with a
	// stale metadata.resourceVersion conflicts every time.
	var patch []byte
	for i := 0; ; i++ {
		currentJSON, err := json.Marshal(current)
		if err != nil {
			return "", err
		}
		var patchType types.PatchType
		patch, patchType, err = threeWayPatch(m.res, []byte(original), modified, currentJSON)
		if err != nil {
			return "", err
		}
		if string(patch) == "{}" {
			return "unchanged", nil
		}
		if s.applyDryRun == "client" {
			return "configured", nil
		}
		_, err = s.client.do(s.ctx, request{method: http.MethodPatch, path: m.res.path(m.namespace, m.name, ""), query: s.writeQuery(fieldManager), body: patch, contentType: string(patchType)})
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || i >= maxPatchRetry {
			// Upstream wraps twice: patcher.go's "patching", then
			// apply.go's "applying patch:\n<patch>\nto:\n<info>\nfor:".
			err = sourceErr("patching", m.source, err)
			return "", sourceErr(fmt.Sprintf("applying patch:\n%s\nto:\n%s\nfor:", patch, m.info()), m.source, err)
		}
		if current, err = s.getObject(m.res, m.namespace, m.name); err != nil {
			return "", err
		}
		original, _ = nestedMap(current, "metadata", "annotations")[lastAppliedAnnotation].(string)
	}
	return "configured", nil
}

// serverSideApply sends the file's object as an apply patch
// (application/apply-patch+yaml): the API server merges it into the live
// object, or creates it, and records which fields this field manager owns.
// A field another manager owns with a different value is a conflict (409)
// unless --force-conflicts takes it over (upstream apply.go applyOneObject).
func (s *session) serverSideApply(m manifest, o applyOptions) (string, error) {
	if m.name == "" {
		return "", sourceErr("creating", m.source, fmt.Errorf("resource name may not be empty"))
	}
	body, err := json.Marshal(m.obj)
	if err != nil {
		return "", err
	}
	q := s.writeQuery(o.fieldManager)
	q.Set("force", strconv.FormatBool(o.forceConflicts))
	_, err = s.client.do(s.ctx, request{method: http.MethodPatch, path: m.res.path(m.namespace, m.name, ""), query: q, body: body, contentType: string(types.ApplyPatchType)})
	if err == nil {
		return "serverside-applied", nil
	}
	if apierrors.IsConflict(err) {
		return "", fmt.Errorf(`%v
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `+"`--force-conflicts`"+` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`, err)
	}
	return "", sourceErr("serverside-applying", m.source, err)
}

// info is how upstream prints a resource.Info in errors:
//
//	Resource: "apps/v1, Resource=deployments", GroupVersionKind: "apps/v1, Kind=Deployment"
//	Name: "web", Namespace: "default"
func (m manifest) info() string {
	gv := m.res.GroupVersion()
	return fmt.Sprintf("Resource: %q, GroupVersionKind: %q\nName: %q, Namespace: %q", gv.WithResource(m.res.Name).String(), gv.WithKind(m.res.Kind).String(), m.name, m.namespace)
}

// threeWayPatch computes the patch that turns current into modified while
// deleting the fields that were in original (the last apply) but are no
// longer in the file. Known types get a strategic merge patch; others a
// JSON merge patch, as upstream falls back to for custom resources.
func threeWayPatch(res apiResource, original, modified, current []byte) ([]byte, types.PatchType, error) {
	if typed, err := patchScheme.New(res.GroupVersion().WithKind(res.Kind)); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return nil, "", err
		}
		p, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		if err != nil {
			return nil, "", fmt.Errorf("creating patch: %v", err)
		}
		return p, types.StrategicMergePatchType, nil
	}
	p, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current,
		mergepatch.RequireKeyUnchanged("apiVersion"), mergepatch.RequireKeyUnchanged("kind"), mergepatch.RequireMetadataKeyUnchanged("name"))
	if err != nil {
		if mergepatch.IsPreconditionFailed(err) {
			return nil, "", fmt.Errorf("%s", "At least one of apiVersion, kind and name was changed")
		}
		return nil, "", err
	}
	return p, types.MergePatchType, nil
}

// modifiedConfiguration is upstream's util.GetModifiedConfiguration: the
// object as JSON without the last-applied annotation, and, with annotate,
// that JSON stored into the annotation and the object encoded again. The
// annotation's value ends with a newline, as kubectl's encoder writes it.
func modifiedConfiguration(obj map[string]any, annotate bool) ([]byte, error) {
	obj = deepCopyMap(obj)
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	annotations, _ := md["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	// As upstream's GetModifiedConfiguration: the annotations map stays,
	// empty ("annotations":{}) when the annotation was the only one.
	delete(annotations, lastAppliedAnnotation)
	md["annotations"] = annotations
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	if !annotate {
		return data, nil
	}
	annotations[lastAppliedAnnotation] = string(data)
	md["annotations"] = annotations
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopyValue(x)
		}
		return out
	}
	return v
}

// addValidateFlag adds --validate: how the server treats unknown or
// duplicate fields (the fieldValidation query parameter). Upstream's
// default, "strict", makes the server refuse them.
func (s *session) addValidateFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.validate, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false). "true" or "strict" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. "warn" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as "ignore" otherwise. "false" or "ignore" will not perform any schema validation, silently dropping any unknown or duplicate fields.`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
}

// parseValidate turns --validate into the fieldValidation parameter.
func (s *session) parseValidate() error {
	switch strings.ToLower(s.validate) {
	case "", "true", "strict":
		s.fieldValidation = "Strict"
	case "warn":
		s.fieldValidation = "Warn"
	case "false", "ignore":
		s.fieldValidation = "Ignore"
	default:
		return fmt.Errorf("invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)", s.validate)
	}
	return nil
}

// writeQuery is the query of a create or patch: the field manager and
// --validate's fieldValidation.
func (s *session) writeQuery(fieldManager string) url.Values {
	q := url.Values{}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	if s.fieldValidation != "" {
		q.Set("fieldValidation", s.fieldValidation)
	}
	if s.applyDryRun == "server" {
		q.Set("dryRun", "All")
	}
	return q
}
