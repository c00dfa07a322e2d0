package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/validation"
)

// metadataEdit is `kubectl label` and `kubectl annotate` (upstream
// pkg/cmd/label and pkg/cmd/annotate): read each object, change one map of
// its metadata, and send the difference as a JSON merge patch
//
//	PATCH /apis/apps/v1/namespaces/default/deployments/web
//	Content-Type: application/merge-patch+json
//	{"metadata":{"labels":{"tier":"front"}}}
//
// A KEY=VALUE that would change an existing value is refused unless
// --overwrite; KEY- removes the key.
type metadataEdit struct {
	field string // "labels" or "annotations"
	sel   selection
	pf    printFlags

	overwrite       bool
	list            bool
	resourceVersion string
	fieldManager    string
}

func (s *session) newLabelCommand() *cobra.Command {
	o := &metadataEdit{field: "labels"}
	cmd := &cobra.Command{
		Use:                   "label [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]",
		DisableFlagsInUseLine: true,
		Short:                 "Update the labels on a resource",
		Long: `Update the labels on a resource.

  *  A label key and value must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 63 characters each.
  *  Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
  *  If --overwrite is true, then existing labels can be overwritten, otherwise attempting to overwrite a label will result in an error.
  *  If --resource-version is specified, then updates will use this resource version, otherwise the existing resource-version will be used.

 kubectl GETs each object and PATCHes its metadata.labels with a JSON merge patch.`,
		Example: `  # Update pod 'web' with the label 'unhealthy' and the value 'true'
  kubectl label pods web unhealthy=true

  # Update pod 'web' with the label 'status' and the value 'unhealthy', overwriting any existing value
  kubectl label --overwrite pods web status=unhealthy

  # Update all pods in the namespace
  kubectl label pods --all status=unhealthy

  # Remove a label named 'bar' if it exists
  kubectl label pods web bar-`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.runMetadataEdit(cmd, o, args) },
	}
	s.addMetadataEditFlags(cmd, o, "identifying the resource to update the labels", "kubectl-label")
	cmd.Flags().BoolVar(&o.list, "list", false, "If true, display the labels for a given resource.")
	return cmd
}

func (s *session) newAnnotateCommand() *cobra.Command {
	o := &metadataEdit{field: "annotations"}
	cmd := &cobra.Command{
		Use:                   "annotate [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]",
		DisableFlagsInUseLine: true,
		Short:                 "Update the annotations on a resource",
		Long: `Update the annotations on one or more resources.

 All Kubernetes objects support the ability to store additional data with the object as annotations. Annotations are key/value pairs that can be larger than labels and include arbitrary string values such as structured JSON. Tools and system extensions may use annotations to store their own data.

 Attempting to set an annotation that already exists will fail unless --overwrite is set. If --resource-version is specified and does not match the current resource version on the server the command will fail.`,
		Example: `  # Update pod 'web' with the annotation 'description' and the value 'my frontend'
  kubectl annotate pods web description='my frontend'

  # Update pod 'web' with the annotation 'description' and the value 'my frontend running hello', overwriting any existing value
  kubectl annotate --overwrite pods web description='my frontend running hello'

  # Remove an annotation named 'description' if it exists
  kubectl annotate pods web description-`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.runMetadataEdit(cmd, o, args) },
	}
	s.addMetadataEditFlags(cmd, o, "identifying the resource to update the annotation", "kubectl-annotate")
	cmd.Flags().BoolVar(&o.list, "list", false, "If true, display the annotations for a given resource.")
	return cmd
}

func (s *session) addMetadataEditFlags(cmd *cobra.Command, o *metadataEdit, usage, manager string) {
	o.sel.addFlags(cmd, usage, "f", "l", "field-selector", "all", "A")
	f := cmd.Flags()
	what := "labels"
	if o.field == "annotations" {
		what = "annotations"
	}
	f.BoolVar(&o.overwrite, "overwrite", false, fmt.Sprintf("If true, allow %s to be overwritten, otherwise reject %s updates that overwrite existing %s.", what, strings.TrimSuffix(what, "s"), what))
	f.StringVar(&o.resourceVersion, "resource-version", "", fmt.Sprintf("If non-empty, the %s update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.", what))
	f.StringVar(&o.fieldManager, "field-manager", manager, "Name of the manager used to track field ownership.")
	o.pf.add(cmd)
}

func (s *session) runMetadataEdit(cmd *cobra.Command, o *metadataEdit, args []string) error {
	isLabel := o.field == "labels"
	pairType := "label"
	if !isLabel {
		pairType = "annotation"
	}
	resources, pairs, err := splitResourcesAndPairs(args, pairType)
	if err != nil {
		return err
	}
	var set map[string]string
	var remove []string
	if isLabel {
		set, remove, err = parseLabelPairs(pairs)
	} else {
		set, remove, err = parseAnnotationPairs(pairs)
	}
	if err != nil {
		return err
	}
	if o.list && o.pf.output != "" {
		return errors.New("--list and --output may not be specified together")
	}
	if err := checkOutputFormat(o.pf.output, objectOutputFormats...); err != nil {
		return err
	}
	dr, err := parseDryRun(o.pf.dryRun)
	if err != nil {
		return err
	}
	if len(resources) == 0 && len(o.sel.files) == 0 {
		return errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
	}
	if len(set) == 0 && len(remove) == 0 && !o.list {
		return fmt.Errorf("at least one %s update is required", pairType)
	}
	if o.sel.all && o.sel.labelSelector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	objs, selErr := s.selectObjects(pairType, &o.sel, resources)
	if selErr != nil && objs == nil {
		return selErr
	}
	if o.resourceVersion != "" && len(objs) != 1 {
		return fmt.Errorf("--resource-version may only be used with a single resource")
	}
	var errs multiError
	if selErr != nil {
		errs = append(errs, selErr)
	}
	for _, sel := range objs {
		if o.list {
			s.listMetadata(o, sel, len(objs) == 1)
			continue
		}
		op, out, err := s.editOne(o, sel, set, remove, dr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.printChanged(sel.res, out, o.pf.output, op+dr.suffix()); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// editOne changes one object's labels or annotations and says what
// happened: "labeled", "unlabeled", "modified", "not labeled", "annotated".
func (s *session) editOne(o *metadataEdit, sel selected, set map[string]string, remove []string, dr dryRun) (string, map[string]any, error) {
	isLabel := o.field == "labels"
	current := map[string]string{}
	for k, v := range nestedMap(sel.obj, "metadata", o.field) {
		if sv, ok := v.(string); ok {
			current[k] = sv
		}
	}
	if !o.overwrite {
		if isLabel {
			var errs []string
			for _, k := range sortedKeys(set) {
				if cur, ok := current[k]; ok && cur != set[k] {
					errs = append(errs, fmt.Sprintf("'%s' already has a value (%s), and --overwrite is false", k, cur))
				}
			}
			if len(errs) == 1 {
				return "", nil, errors.New(errs[0])
			}
			if len(errs) > 1 {
				return "", nil, fmt.Errorf("[%s]", strings.Join(errs, ", "))
			}
		} else {
			var found []string
			for _, k := range sortedKeys(set) {
				if k == "kubernetes.io/change-cause" {
					continue // may always be overwritten
				}
				if cur, ok := current[k]; ok && cur != set[k] {
					found = append(found, fmt.Sprintf("'%s' already has a value (%s)", k, cur))
				}
			}
			if len(found) > 0 {
				return "", nil, fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(found, "; "))
			}
		}
	}
	if isLabel && dr != "client" {
		for _, k := range remove {
			if _, ok := current[k]; !ok {
				fmt.Fprintf(s.out(), "label %q not found.\n", k)
			}
		}
	}
	added, removed := 0, 0
	next := map[string]string{}
	for k, v := range current {
		next[k] = v
	}
	for k, v := range set {
		if cur, ok := current[k]; !ok || cur != v {
			next[k] = v
			added++
		}
	}
	for _, k := range remove {
		if _, ok := next[k]; ok {
			delete(next, k)
			removed++
		}
	}
	op := "annotated"
	if isLabel {
		switch {
		case added > 0 && removed > 0:
			op = "modified"
		case added > 0:
			op = "labeled"
		case removed > 0:
			op = "unlabeled"
		default:
			op = "not labeled"
		}
	}
	// The patch: the difference between the object before and after.
	before, _ := json.Marshal(map[string]any{"metadata": map[string]any{o.field: current}})
	afterMeta := map[string]any{o.field: next}
	if o.resourceVersion != "" {
		afterMeta["resourceVersion"] = o.resourceVersion
	}
	after, _ := json.Marshal(map[string]any{"metadata": afterMeta})
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return "", nil, err
	}
	if dr == "client" || (isLabel && added == 0 && removed == 0) || string(patch) == "{}" {
		md, _ := sel.obj["metadata"].(map[string]any)
		if md != nil {
			m := map[string]any{}
			for k, v := range next {
				m[k] = v
			}
			md[o.field] = m
		}
		return op, sel.obj, nil
	}
	out, err := s.patchObject(sel.res, sel.namespace, sel.name, "", "application/merge-patch+json", patch, dr, o.fieldManager)
	if err != nil {
		return "", nil, err
	}
	return op, out, nil
}

// listMetadata is --list: one KEY=VALUE a line.
func (s *session) listMetadata(o *metadataEdit, sel selected, one bool) {
	indent := ""
	if !one {
		indent = " "
		fmt.Fprintf(s.out(), "Listing %s for %s.%s/%s:\n", o.field, sel.res.Kind, sel.res.Group, sel.name)
	}
	m := nestedMap(sel.obj, "metadata", o.field)
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(s.out(), "%s%s=%v\n", indent, k, m[k])
	}
}

// patchObject sends a PATCH and returns the object the server answered.
func (s *session) patchObject(res apiResource, namespace, name, sub, contentType string, patch []byte, dr dryRun, fieldManager string) (map[string]any, error) {
	q := url.Values{}
	if dr == "server" {
		q.Set("dryRun", "All")
	}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	out := map[string]any{}
	err := s.client.into(s.ctx, request{method: http.MethodPatch, path: res.path(namespace, name, sub), query: q, body: patch, contentType: contentType}, &out)
	if err != nil {
		return nil, err
	}
	if sub == "" {
		setTypeMeta(out, res)
	}
	return out, nil
}

// printChanged prints "deployment.apps/web labeled", or the object for -o
// (upstream's NamePrintFlags with an operation).
func (s *session) printChanged(res apiResource, obj map[string]any, output, op string) error {
	if output == "" {
		_, err := fmt.Fprintf(s.out(), "%s/%s %s\n", res.kindName(), nestedString(obj, "metadata", "name"), op)
		return err
	}
	if output == "name" {
		_, err := fmt.Fprintf(s.out(), "%s/%s\n", res.kindName(), nestedString(obj, "metadata", "name"))
		return err
	}
	return printObject(s.out(), output, obj)
}

// splitResourcesAndPairs is upstream's GetResourcesAndPairs: resources
// first, then KEY=VALUE and KEY- arguments.
func splitResourcesAndPairs(args []string, pairType string) (resources, pairs []string, err error) {
	foundPair := false
	for _, a := range args {
		isPair := (strings.Contains(a, "=") && a[0] != '=') || (strings.HasSuffix(a, "-") && a != "-")
		switch {
		case isPair:
			foundPair = true
			pairs = append(pairs, a)
		case foundPair:
			return nil, nil, fmt.Errorf("all resources must be specified before %s changes: %s", pairType, a)
		default:
			resources = append(resources, a)
		}
	}
	return resources, pairs, nil
}

// parseLabelPairs reads KEY=VALUE and KEY- label arguments; values are
// checked here, keys by the server.
func parseLabelPairs(spec []string) (map[string]string, []string, error) {
	set := map[string]string{}
	var remove []string
	for _, l := range spec {
		switch {
		case strings.Contains(l, "="):
			parts := strings.Split(l, "=")
			if len(parts) != 2 {
				return nil, nil, fmt.Errorf("invalid label spec: %v", l)
			}
			if errs := validation.IsValidLabelValue(parts[1]); len(errs) != 0 {
				return nil, nil, fmt.Errorf("invalid label value: %q: %s", l, strings.Join(errs, ";"))
			}
			set[parts[0]] = parts[1]
		case strings.HasSuffix(l, "-"):
			remove = append(remove, l[:len(l)-1])
		default:
			return nil, nil, fmt.Errorf("unknown label spec: %v", l)
		}
	}
	for _, r := range remove {
		if _, ok := set[r]; ok {
			return nil, nil, fmt.Errorf("can not both modify and remove a label in the same command")
		}
	}
	return set, remove, nil
}

// parseAnnotationPairs is upstream's ParsePairs for annotations: values may
// hold anything, including "=".
func parseAnnotationPairs(spec []string) (map[string]string, []string, error) {
	set := map[string]string{}
	var remove, invalid []string
	for _, a := range spec {
		switch {
		case strings.Contains(a, "=") && a[0] != '=':
			k, v, _ := strings.Cut(a, "=")
			set[k] = v
		case strings.HasSuffix(a, "-") && a != "-":
			remove = append(remove, a[:len(a)-1])
		default:
			invalid = append(invalid, a)
		}
	}
	if len(invalid) > 0 {
		return nil, nil, fmt.Errorf("invalid annotation format: %s", strings.Join(invalid, ", "))
	}
	var both []string
	for _, r := range remove {
		if _, ok := set[r]; ok {
			both = append(both, r)
		}
	}
	if len(both) > 0 {
		sort.Strings(both)
		return nil, nil, fmt.Errorf("can not both modify and remove the following annotation(s) in the same command: %s", strings.Join(both, ", "))
	}
	return set, remove, nil
}
