package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// newTaintCommand is `kubectl taint` (upstream pkg/cmd/taint): add, change
// or remove a node's spec.taints. A taint repels pods: the scheduler's
// TaintToleration filter keeps a pod without a matching toleration off a
// node with a NoSchedule taint, PreferNoSchedule only lowers the node's
// score, and NoExecute also evicts running pods that do not tolerate it.
//
// Arguments are NODE-TYPE NAME... then taint changes:
//
//	key=value:Effect   add (or, with --overwrite, replace) a taint
//	key:Effect         add a taint with no value
//	key:Effect-        remove the taint with that key and effect
//	key-               remove every taint with that key
//
// The new list is sent as a strategic merge patch of spec.taints (a list
// with no merge key, so the patch carries the whole list), as upstream.
func (s *session) newTaintCommand() *cobra.Command {
	var (
		pf           printFlags
		selector     string
		overwrite    bool
		all          bool
		fieldManager string
		validateFlag string
	)
	cmd := &cobra.Command{
		Use:                   "taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update the taints on one or more nodes",
		Long: fmt.Sprintf(`Update the taints on one or more nodes.

  *  A taint consists of a key, value, and effect. As an argument here, it is expressed as key=value:effect.
  *  The key must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to %d characters.
  *  Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
  *  The value is optional. If given, it must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to %d characters.
  *  The effect must be NoSchedule, PreferNoSchedule or NoExecute.
  *  Currently taint can only apply to node.`, validation.DNS1123SubdomainMaxLength, validation.LabelValueMaxLength),
		Example: `  # Update node 'foo' with a taint with key 'dedicated' and value 'special-user' and effect 'NoSchedule'
  # If a taint with that key and effect already exists, its value is replaced as specified
  kubectl taint nodes foo dedicated=special-user:NoSchedule
  
  # Remove from node 'foo' the taint with key 'dedicated' and effect 'NoSchedule' if one exists
  kubectl taint nodes foo dedicated:NoSchedule-
  
  # Remove from node 'foo' all the taints with key 'dedicated'
  kubectl taint nodes foo dedicated-
  
  # Add a taint with key 'dedicated' on nodes having label myLabel=X
  kubectl taint node -l myLabel=X  dedicated=foo:PreferNoSchedule
  
  # Add to node 'foo' a taint with key 'bar' and no value
  kubectl taint nodes foo bar:NoSchedule`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Resources come first, then taint changes (upstream Complete).
			var resources, taintArgs []string
			for _, a := range args {
				isTaint := strings.Contains(a, "=") || strings.Contains(a, ":") || strings.HasSuffix(a, "-")
				switch {
				case isTaint:
					taintArgs = append(taintArgs, a)
				case len(taintArgs) > 0:
					return fmt.Errorf("all resources must be specified before taint changes: %s", a)
				default:
					resources = append(resources, a)
				}
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			if len(resources) < 1 {
				return errors.New("one or more resources must be specified as <resource> <name>")
			}
			if len(taintArgs) < 1 {
				return errors.New("at least one taint update is required")
			}
			add, remove, err := parseTaints(taintArgs)
			if err != nil {
				return usageErrorf(cmd, "%s", err.Error())
			}
			// Validate (upstream): node types only, no change that both
			// adds and removes one taint, then the selection flags.
			typ := strings.ToLower(resources[0])
			res, err := s.resolve(typ)
			if err != nil {
				return err
			}
			if res.Kind != "Node" {
				return fmt.Errorf("invalid resource type %s, only node types are supported", typ)
			}
			var conflicts []string
			for _, a := range add {
				for _, r := range remove {
					if a.Key == r.Key && (r.Effect == "" || a.Effect == r.Effect) {
						conflicts = append(conflicts, fmt.Sprintf("%s=%s", r.Key, r.Effect))
					}
				}
			}
			if len(conflicts) > 0 {
				return fmt.Errorf("can not both modify and remove the following taint(s) in the same command: %s", strings.Join(conflicts, ", "))
			}
			if all && selector != "" {
				return errors.New("setting 'all' parameter with a non empty selector is prohibited")
			}
			if !all && selector == "" && len(resources) < 2 {
				return errors.New("at least one resource name must be specified since 'all' parameter is not set")
			}
			sel := selection{labelSelector: selector, all: all}
			names := resources[1:]
			if all || selector != "" {
				names = nil
			}
			objs, selErr := s.selectObjects("taint", &sel, append([]string{typ}, names...))
			if selErr != nil && objs == nil {
				return selErr
			}
			var errs multiError
			if selErr != nil {
				errs = append(errs, selErr)
			}
			for _, o := range objs {
				var node corev1.Node
				raw, _ := json.Marshal(o.obj)
				if err := json.Unmarshal(raw, &node); err != nil {
					errs = append(errs, err)
					continue
				}
				if !overwrite {
					if exists := taintsAlreadyPresent(node.Spec.Taints, add); exists != "" {
						errs = append(errs, fmt.Errorf("node %s already has %s taint(s) with same effect(s) and --overwrite is false", node.Name, exists))
						continue
					}
				}
				op, taints, err := reorganizeTaints(node.Spec.Taints, overwrite, add, remove)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				var patch []byte
				if len(taints) == 0 {
					patch = []byte(`{"spec":{"taints":null}}`)
				} else {
					list, _ := json.Marshal(taints)
					patch = []byte(`{"spec":{"taints":` + string(list) + `}}`)
				}
				out := o.obj
				if dr == "client" {
					spec := nestedMap(out, "spec")
					if spec == nil {
						spec = map[string]any{}
						out["spec"] = spec
					}
					if len(taints) == 0 {
						delete(spec, "taints")
					} else {
						var list []any
						b, _ := json.Marshal(taints)
						_ = json.Unmarshal(b, &list)
						spec["taints"] = list
					}
				} else {
					out, err = s.patchObject(o.res, "", o.name, "", "application/strategic-merge-patch+json", patch, dr, fieldManager)
					if err != nil {
						errs = append(errs, err)
						continue
					}
				}
				// Upstream sets the printer's operation after the dry-run
				// suffix was added, so a dry run prints no "(dry run)".
				if err := s.printChanged(o.res, out, pf.output, op); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
	}
	pf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&validateFlag, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false). "true" or "strict" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. "warn" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as "ignore" otherwise. "false" or "ignore" will not perform any schema validation, silently dropping any unknown or duplicate fields.`)
	f.Lookup("validate").NoOptDefVal = "strict"
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.BoolVar(&overwrite, "overwrite", false, "If true, allow taints to be overwritten, otherwise reject taint updates that overwrite existing taints.")
	f.BoolVar(&all, "all", false, "Select all nodes in the cluster")
	f.StringVar(&fieldManager, "field-manager", "kubectl-taint", "Name of the manager used to track field ownership.")
	return cmd
}

// parseTaints splits taint arguments into taints to add and taints to
// remove (upstream taint.parseTaints): an added taint needs an effect, and
// one key+effect may be added only once.
func parseTaints(spec []string) (add, remove []corev1.Taint, err error) {
	seen := map[corev1.TaintEffect]map[string]bool{}
	for _, ts := range spec {
		if strings.HasSuffix(ts, "-") {
			t, err := parseTaint(strings.TrimSuffix(ts, "-"))
			if err != nil {
				return nil, nil, err
			}
			remove = append(remove, corev1.Taint{Key: t.Key, Effect: t.Effect})
			continue
		}
		t, err := parseTaint(ts)
		if err != nil {
			return nil, nil, err
		}
		if t.Effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v", ts)
		}
		if seen[t.Effect][t.Key] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
		add = append(add, t)
	}
	return add, remove, nil
}

// parseTaint parses key=value:effect, key:effect or key.
func parseTaint(st string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(st, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		t.Effect = corev1.TaintEffect(parts[1])
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return corev1.Taint{}, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.Effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", st)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
			}
		}
	default:
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", st)
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
	}
	return t, nil
}

// taintsAlreadyPresent names (comma-separated) the taints to add whose key
// and effect the node already has.
func taintsAlreadyPresent(old, add []corev1.Taint) string {
	var keys []string
	for _, a := range add {
		for _, o := range old {
			if a.Key == o.Key && a.Effect == o.Effect {
				keys = append(keys, a.Key)
			}
		}
	}
	return strings.Join(keys, ",")
}

// reorganizeTaints computes the node's new taint list: the added taints
// first, then the old ones they do not replace, less the removed ones. The
// operation is what kubectl reports: "tainted", "untainted", or "modified"
// (both, or any --overwrite). A removal that matches nothing is an error.
func reorganizeTaints(old []corev1.Taint, overwrite bool, add, remove []corev1.Taint) (string, []corev1.Taint, error) {
	taints := append([]corev1.Taint{}, add...)
	for i := range old {
		replaced := false
		for j := range taints {
			if taints[j].MatchTaint(&old[i]) {
				replaced = true
				break
			}
		}
		if !replaced {
			taints = append(taints, old[i])
		}
	}
	added := len(old) != len(taints)
	var errs multiError
	deleted := false
	for _, r := range remove {
		kept := taints[:0:0]
		for _, t := range taints {
			if t.Key == r.Key && (r.Effect == "" || t.Effect == r.Effect) {
				continue
			}
			kept = append(kept, t)
		}
		deleted = len(kept) != len(taints)
		if !deleted {
			errs = append(errs, fmt.Errorf("taint %q not found", r.ToString()))
		}
		taints = kept
	}
	op := "untainted"
	switch {
	case (added && deleted) || overwrite:
		op = "modified"
	case added:
		op = "tainted"
	}
	if len(errs) == 1 {
		return op, taints, errs[0]
	}
	if len(errs) > 1 {
		return op, taints, aggregateError(errs)
	}
	return op, taints, nil
}

// aggregateError prints as apimachinery's utilerrors.Aggregate does:
// "[first, second]".
type aggregateError []error

func (a aggregateError) Error() string {
	msgs := make([]string, len(a))
	for i, e := range a {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
