package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitCondition is one --for: it says whether an object (nil: it does not
// exist) satisfies it.
type waitCondition struct {
	text string
	met  func(obj map[string]any) (bool, error)
	// onMissing is whether a missing object satisfies it (--for=delete).
	onMissing bool
	// create waits for the object to exist (--for=create).
	create bool
}

// newWaitCommand is `kubectl wait` (upstream pkg/cmd/wait): for each object,
// GET it, and until the condition holds, watch it (a watch on its name from
// its resourceVersion), up to --timeout.
func (s *session) newWaitCommand() *cobra.Command {
	var (
		sel     selection
		forCond []string
		timeout time.Duration
		output  string
	)
	cmd := &cobra.Command{
		Use:   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=create|--for=delete|--for condition=available|--for=jsonpath='{}'[=value]]",
		Short: "Wait for a specific condition on one or many resources",
		Long: `Experimental: Wait for a specific condition on one or many resources.

 The command takes multiple resources and waits until the specified condition is seen in the Status field of every given resource.

 Alternatively, the command can wait for the given set of resources to be created or deleted by providing the "create" or "delete" keyword as the value to the --for flag.

 A successful message will be printed to stdout indicating when the specified condition has been met. You can use -o option to change to output destination.`,
		Example: `  # Wait for the deployment "web" to be available
  kubectl wait --for=condition=Available deployment/web

  # Wait for the pod "web-1" to contain the status phase to be "Running"
  kubectl wait --for=jsonpath='{.status.phase}'=Running pod/web-1

  # Wait for the pod "web-1" to be deleted, with a timeout of 60s, after having issued the "delete" command
  kubectl delete pod/web-1
  kubectl wait --for=delete pod/web-1 --timeout=60s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(forCond) == 0 {
				return errors.New("--for must be specified")
			}
			conds, err := parseWaitConditions(forCond)
			if err != nil {
				return err
			}
			if err := checkOutputFormat(output, objectOutputFormats...); err != nil {
				return err
			}
			if len(args) == 0 && len(sel.files) == 0 {
				return usageErrorf(cmd, "You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
			}
			switch {
			case timeout < 0:
				timeout = 168 * time.Hour
			}
			deadline := s.cli.cfg.Clock.Now().Add(timeout)
			ctx, cancel := context.WithTimeout(s.ctx, timeout)
			defer cancel()
			return s.runWait(ctx, &sel, args, conds, output, deadline)
		},
	}
	sel.addFlags(cmd, "identifying the resource.", "f", "l", "field-selector", "all", "A")
	cmd.Flags().StringArrayVar(&forCond, "for", nil, "The condition to wait on: [create|delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]]. The default condition-value is true. Condition values are compared after Unicode simple case folding, which is a more general form of case-insensitivity.")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "The length of time to wait before giving up. Zero means check once and don't wait, negative means wait for a week.")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file).")
	return cmd
}

// parseWaitConditions reads the --for flags.
func parseWaitConditions(fors []string) ([]waitCondition, error) {
	var out []waitCondition
	for _, c := range fors {
		lower := strings.ToLower(c)
		switch {
		case lower == "delete":
			out = append(out, waitCondition{text: c, onMissing: true, met: func(map[string]any) (bool, error) { return false, nil }})
		case lower == "create":
			out = append(out, waitCondition{text: c, create: true, met: func(map[string]any) (bool, error) { return true, nil }})
		case strings.HasPrefix(c, "condition="):
			name := strings.TrimPrefix(c, "condition=")
			value := "true"
			if i := strings.Index(name, "="); i >= 0 {
				name, value = name[:i], name[i+1:]
			}
			out = append(out, waitCondition{text: c, met: func(obj map[string]any) (bool, error) { return conditionMet(obj, name, value), nil }})
		case strings.HasPrefix(c, "jsonpath="):
			expr, value, err := parseWaitJSONPath(strings.TrimPrefix(c, "jsonpath="))
			if err != nil {
				return nil, err
			}
			jp, err := parseJSONPath(expr)
			if err != nil {
				return nil, err
			}
			out = append(out, waitCondition{text: c, met: func(obj map[string]any) (bool, error) {
				vals, err := jp.find(obj)
				if err != nil {
					return false, err
				}
				if len(vals) > 1 {
					return false, errors.New("given jsonpath expression matches more than one value")
				}
				if len(vals) == 0 {
					return false, nil
				}
				switch vals[0].(type) {
				case map[string]any, []any:
					return false, errors.New("jsonpath leads to a nested object or list which is not supported")
				}
				if value == "" {
					return true, nil // any value will do
				}
				return fmt.Sprint(vals[0]) == value, nil
			}})
		default:
			return nil, fmt.Errorf("unrecognized condition: %q", c)
		}
	}
	return out, nil
}

// parseWaitJSONPath splits "'{.status.readyReplicas}'=3" on its single
// "=" ("==" inside the expression stays).
func parseWaitJSONPath(input string) (expr, value string, err error) {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(input); i++ {
		if input[i] == '=' {
			if i+1 < len(input) && input[i+1] == '=' {
				cur.WriteString("==")
				i++
				continue
			}
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(input[i])
	}
	parts = append(parts, cur.String())
	if len(parts) < 1 || len(parts) > 2 {
		return "", "", fmt.Errorf("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or --for=jsonpath='{.status.readyReplicas}'")
	}
	if parts[0] == "" {
		return "", "", errors.New("jsonpath expression cannot be empty")
	}
	if expr, err = relaxedJSONPath(parts[0]); err != nil {
		return "", "", err
	}
	if len(parts) == 1 {
		return expr, "", nil
	}
	value = strings.Trim(parts[1], `'"`)
	if value == "" {
		return "", "", errors.New("jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3")
	}
	return expr, value, nil
}

// conditionMet reports whether status.conditions has name with status
// value (case-folded), observed at the object's current generation.
func conditionMet(obj map[string]any, name, value string) bool {
	if obj == nil {
		return false
	}
	gen, hasGen := nestedMap(obj, "metadata")["generation"].(int64)
	if og, ok := nestedMap(obj, "status")["observedGeneration"].(int64); ok && hasGen && og != gen {
		return false
	}
	conds, _ := nestedMap(obj, "status")["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if !strings.EqualFold(fmt.Sprint(m["type"]), name) {
			continue
		}
		if !strings.EqualFold(fmt.Sprint(m["status"]), value) {
			return false
		}
		if og, ok := m["observedGeneration"].(int64); ok && hasGen && og != gen {
			return false
		}
		return true
	}
	return false
}

func (s *session) runWait(ctx context.Context, sel *selection, args []string, conds []waitCondition, output string, deadline time.Time) error {
	onlyDelete, create := true, false
	for _, c := range conds {
		onlyDelete = onlyDelete && c.onMissing
		create = create || c.create
	}
	var objs []selected
	var selErr error
	if create {
		// --for=create names objects that may not exist yet.
		targets, err := s.parseResourceArgs(args)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if len(t.names) == 0 {
				return errors.New("--for=create requires resource names")
			}
			ns := s.namespaceFor(t.res, false)
			for _, name := range t.names {
				obj, err := s.getObject(t.res, ns, name)
				if err != nil && !apierrors.IsNotFound(err) {
					return err
				}
				objs = append(objs, selected{res: t.res, namespace: ns, name: name, obj: obj})
			}
		}
	} else {
		objs, selErr = s.selectObjects("wait", sel, args)
	}
	if selErr != nil {
		// Objects that do not exist already satisfy --for=delete.
		var rest multiError
		for _, err := range flattenErrors(selErr) {
			if !(onlyDelete && apierrors.IsNotFound(err)) {
				rest = append(rest, err)
			}
		}
		if len(rest) > 0 {
			return rest
		}
	}
	if len(objs) == 0 {
		if onlyDelete {
			return nil
		}
		return errors.New("no matching resources found")
	}
	for _, o := range objs {
		final := o.obj
		for _, c := range conds {
			var err error
			final, err = s.waitOne(ctx, o, final, c)
			if err != nil {
				return err
			}
		}
		if output != "" && final != nil {
			if err := printObject(s.out(), output, final); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(s.out(), "%s/%s condition met\n", o.res.kindName(), o.name)
	}
	return nil
}

func flattenErrors(err error) []error {
	if m, ok := err.(multiError); ok {
		var out []error
		for _, e := range m {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// waitOne waits for one condition on one object, starting from what was
// read; it returns the object as last seen.
func (s *session) waitOne(ctx context.Context, o selected, obj map[string]any, c waitCondition) (map[string]any, error) {
	timedOut := func() error {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		return fmt.Errorf("timed out waiting for the condition on %s/%s", o.res.Name, o.name)
	}
	for {
		if obj == nil {
			if c.onMissing {
				return nil, nil
			}
		} else if c.create {
			return obj, nil
		} else {
			ok, err := c.met(obj)
			if err != nil {
				return obj, err
			}
			if ok {
				return obj, nil
			}
		}
		if ctx.Err() != nil {
			return obj, timedOut()
		}
		// Watch the object by name from what we saw, until it changes.
		q := listQuery("", "metadata.name="+o.name)
		q.Set("watch", "true")
		if obj != nil {
			q.Set("resourceVersion", nestedString(obj, "metadata", "resourceVersion"))
		}
		resp, err := s.client.do(ctx, request{method: http.MethodGet, path: o.res.path(o.namespace, "", ""), query: q})
		if err != nil {
			if ctx.Err() != nil {
				return obj, timedOut()
			}
			return obj, err
		}
		dec := json.NewDecoder(resp.Body)
		changed := false
		for !changed {
			var ev metav1.WatchEvent
			if err := dec.Decode(&ev); err != nil {
				break
			}
			switch ev.Type {
			case "ADDED", "MODIFIED":
				m := map[string]any{}
				if err := decodeJSON(ev.Object.Raw, &m); err == nil {
					setTypeMeta(m, o.res)
					obj, changed = m, true
				}
			case "DELETED":
				obj, changed = nil, true
			}
		}
		resp.Body.Close()
		if !changed {
			// The watch ended (a timeout or 410): read the object again.
			cur, err := s.getObject(o.res, o.namespace, o.name)
			switch {
			case apierrors.IsNotFound(err):
				obj = nil
			case err != nil:
				if ctx.Err() != nil {
					return obj, timedOut()
				}
				return obj, err
			default:
				obj = cur
			}
		}
	}
}
