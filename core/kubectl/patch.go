package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// patchTypes maps --type to the Content-Type the server reads the patch as.
var patchTypes = map[string]string{
	"json":      "application/json-patch+json",  // RFC 6902: a list of operations
	"merge":     "application/merge-patch+json", // RFC 7386: a partial object; null deletes
	"strategic": "application/strategic-merge-patch+json",
}

// newPatchCommand is `kubectl patch` (upstream pkg/cmd/patch): GET the
// object, PATCH it, and say "patched", or "patched (no change)" when the
// server's answer equals what it had.
func (s *session) newPatchCommand() *cobra.Command {
	var (
		sel          selection
		pf           printFlags
		patchType    string
		patch        string
		patchFile    string
		subresource  string
		fieldManager string
	)
	cmd := &cobra.Command{
		Use:                   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		DisableFlagsInUseLine: true,
		Short:                 "Update fields of a resource",
		Long: `Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.

 JSON and YAML formats are accepted.

 Note: Strategic merge patch is not supported for custom resources.`,
		Example: `  # Partially update a node using a strategic merge patch, specifying the patch as JSON
  kubectl patch node node-1 -p '{"spec":{"unschedulable":true}}'

  # Update a container's image; spec.containers[*].name is required because it's a merge key
  kubectl patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"hello:2.0"}]}}}}'

  # Update a container's image using a JSON patch with positional arrays
  kubectl patch deployment web --type='json' -p='[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value":"hello:2.0"}]'

  # Update a deployment's replicas through the 'scale' subresource using a merge patch
  kubectl patch deployment web --subresource='scale' --type='merge' -p '{"spec":{"replicas":2}}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if patch != "" && patchFile != "" {
				return errors.New("cannot specify --patch and --patch-file together")
			}
			if patch == "" && patchFile == "" {
				return errors.New("must specify --patch or --patch-file containing the contents of the patch")
			}
			contentType, ok := patchTypes[strings.ToLower(patchType)]
			if !ok {
				names := make([]string, 0, len(patchTypes))
				for n := range patchTypes {
					names = append(names, n)
				}
				sort.Strings(names)
				return fmt.Errorf("--type must be one of %v, not %q", names, patchType)
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			if subresource != "" && subresource != "status" && subresource != "scale" {
				return fmt.Errorf("invalid subresource value: %q. Must be one of [status scale]", subresource)
			}
			raw := []byte(patch)
			if patchFile != "" {
				if raw, err = s.cli.cfg.ReadFile(patchFile); err != nil {
					return fmt.Errorf("unable to read patch file: %v", err)
				}
			}
			body, err := yaml.YAMLToJSON(raw)
			if err != nil {
				return fmt.Errorf("unable to parse %q: %v", string(raw), err)
			}
			if len(args) == 0 && len(sel.files) == 0 {
				return usageErrorf(cmd, "You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
			}
			objs, selErr := s.selectObjects("patch", &sel, args)
			if selErr != nil && objs == nil {
				return selErr
			}
			var errs multiError
			if selErr != nil {
				errs = append(errs, selErr)
			}
			for _, o := range objs {
				before := o.obj
				if subresource != "" {
					before = map[string]any{}
					if err := s.client.into(s.ctx, request{method: "GET", path: o.res.path(o.namespace, o.name, subresource)}, &before); err != nil {
						errs = append(errs, err)
						continue
					}
				}
				var after map[string]any
				if dr == "client" {
					after, err = patchLocally(o.res, before, patchType, body)
				} else {
					after, err = s.patchObject(o.res, o.namespace, o.name, subresource, contentType, body, dr, fieldManager)
				}
				if err != nil {
					if apierrors.IsUnsupportedMediaType(err) {
						err = fmt.Errorf("%s is not supported by %s: %w", contentType, o.res.GroupVersion().WithKind(o.res.Kind), err)
					}
					errs = append(errs, err)
					continue
				}
				op := "patched"
				if reflect.DeepEqual(before, after) || sameIgnoringType(before, after) {
					op = "patched (no change)"
				}
				if subresource != "" {
					after["metadata"] = o.obj["metadata"]
				}
				if err := s.printChanged(o.res, after, pf.output, op+dr.suffix()); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return errs
			}
			if len(objs) == 0 {
				return errors.New("no objects passed to patch")
			}
			return nil
		},
	}
	sel.addFlags(cmd, "identifying the resource to update", "f")
	f := cmd.Flags()
	f.StringVarP(&patch, "patch", "p", "", "The patch to be applied to the resource JSON file.")
	f.StringVar(&patchFile, "patch-file", "", "A file containing a patch to be applied to the resource.")
	f.StringVar(&patchType, "type", "strategic", "The type of patch being provided; one of [json merge strategic]")
	f.StringVar(&subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object. Must be one of [status scale].")
	f.StringVar(&fieldManager, "field-manager", "kubectl-patch", "Name of the manager used to track field ownership.")
	pf.add(cmd)
	return cmd
}

// patchLocally applies a patch without the server (--dry-run=client), as
// upstream's getPatchedJSON does.
func patchLocally(res apiResource, obj map[string]any, patchType string, patch []byte) (map[string]any, error) {
	cur, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch strings.ToLower(patchType) {
	case "json":
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, err
		}
		if out, err = p.Apply(cur); err != nil {
			return nil, err
		}
	case "merge":
		if out, err = jsonpatch.MergePatch(cur, patch); err != nil {
			return nil, err
		}
	default:
		gvk := res.GroupVersion().WithKind(res.Kind)
		typed, err := patchScheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("strategic merge patch is not supported for %s locally, try --type merge", gvk.String())
		}
		if out, err = strategicpatch.StrategicMergePatch(cur, patch, typed); err != nil {
			return nil, err
		}
	}
	m := map[string]any{}
	return m, decodeJSON(out, &m)
}

// sameIgnoringType compares two objects without apiVersion and kind (a
// subresource answers with its own).
func sameIgnoringType(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "apiVersion" && k != "kind" {
				c[k] = v
			}
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
