package kubectl

import (
	"errors"

	"github.com/spf13/cobra"
)

// selection is how the commands that change existing objects (label,
// annotate, patch, wait, rollout ...) name them: TYPE NAME..., TYPE/NAME,
// TYPE -l SELECTOR, TYPE --all, or -f FILE (upstream: the resource
// builder's flags, genericclioptions.ResourceBuilderFlags).
type selection struct {
	files         []string
	recursive     bool // -R: -f DIR reads its subdirectories too
	labelSelector string
	fieldSelector string
	all           bool
	allNamespaces bool
}

// addFlags adds the flags a command supports: "f", "l", "field-selector",
// "all", "A".
func (sel *selection) addFlags(cmd *cobra.Command, usage string, which ...string) {
	f := cmd.Flags()
	for _, w := range which {
		switch w {
		case "f":
			f.StringSliceVarP(&sel.files, "filename", "f", nil, "Filename, directory, or URL to files "+usage)
			f.BoolVarP(&sel.recursive, "recursive", "R", false, recursiveUsage)
		case "l":
			f.StringVarP(&sel.labelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
		case "field-selector":
			f.StringVar(&sel.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
		case "all":
			f.BoolVar(&sel.all, "all", false, "Select all resources, in the namespace of the specified resource types")
		case "A":
			f.BoolVarP(&sel.allNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
		}
	}
}

// selected is one object a command works on, as the server has it now.
type selected struct {
	res       apiResource
	namespace string
	name      string
	obj       map[string]any
	source    string // the file that named it, if any
}

// selectObjects resolves args and flags into the objects they name and GETs
// them (a list for selectors). Names that do not exist are errors, returned
// after the objects that were found; nothing is written.
func (s *session) selectObjects(verb string, sel *selection, args []string) ([]selected, error) {
	if sel.all && sel.labelSelector != "" {
		return nil, errors.New("cannot set --all and --selector at the same time")
	}
	if sel.all && sel.fieldSelector != "" {
		return nil, errors.New("cannot set --all and --field-selector at the same time")
	}
	var out []selected
	var errs multiError
	if len(sel.files) > 0 {
		if len(args) > 0 {
			return nil, errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		s.recursive = sel.recursive
		objs, err := s.readManifests(verb, sel.files)
		if err != nil {
			return nil, err
		}
		for _, m := range objs {
			obj, err := s.getObject(m.res, m.namespace, m.name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, selected{res: m.res, namespace: m.namespace, name: m.name, obj: obj, source: m.source})
		}
	}
	targets, err := s.parseResourceArgs(args)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		ns := s.namespaceFor(t.res, sel.allNamespaces)
		if len(t.names) > 0 {
			if sel.labelSelector != "" || sel.all {
				return nil, errors.New("name cannot be provided when a selector is specified")
			}
			for _, name := range t.names {
				obj, err := s.getObject(t.res, ns, name)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, selected{res: t.res, namespace: ns, name: name, obj: obj})
			}
			continue
		}
		if !sel.all && sel.labelSelector == "" && sel.fieldSelector == "" {
			return nil, errors.New("resource(s) were provided, but no name was specified")
		}
		items, _, err := s.listObjects(t.res, ns, listQuery(sel.labelSelector, sel.fieldSelector))
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, selected{res: t.res, namespace: nestedString(it, "metadata", "namespace"), name: nestedString(it, "metadata", "name"), obj: it})
		}
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}
