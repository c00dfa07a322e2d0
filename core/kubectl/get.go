package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// getOptions are the flags of `kubectl get` (upstream pkg/cmd/get/get.go).
type getOptions struct {
	raw               string // --raw: GET this URI and print the answer as is
	output            string
	labelSelector     string
	fieldSelector     string
	allNamespaces     bool
	watch             bool
	watchOnly         bool
	outputWatchEvents bool
	showLabels        bool
	noHeaders         bool
	ignoreNotFound    bool
	labelColumns      []string
	sortBy            string
	template          string
	allowMissingKeys  bool
}

func (s *session) newGetCommand() *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:                   "get [(-o|--output=)json|yaml|name|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Display one or many resources",
		Long: `Display one or many resources.

 Prints a table of the most important information about the specified resources. You can filter the list using a label selector and the --selector flag. If the desired resource type is namespaced you will only see results in the current namespace unless you pass --all-namespaces.

 The table's columns come from the server (GET with Accept: application/json;as=Table;v=v1;g=meta.k8s.io); kubectl only aligns them.`,
		Example: `  # List all pods in ps output format
  kubectl get pods

  # List all pods in ps output format with more information (such as node name)
  kubectl get pods -o wide

  # List a single deployment with specified NAME in JSON output format
  kubectl get deployment web -o json

  # Watch pods change as controllers work
  kubectl get pods -w`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.runGet(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, custom-columns, custom-columns-file, wide). See custom columns [https://kubernetes.io/docs/reference/kubectl/#custom-columns], golang template [http://golang.org/pkg/text/template/#pkg-overview] and jsonpath template [https://kubernetes.io/docs/reference/kubectl/jsonpath/].")
	f.StringVar(&o.template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
	f.BoolVar(&o.allowMissingKeys, "allow-missing-template-keys", true, "If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to golang and jsonpath output formats.")
	f.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
	f.StringVar(&o.sortBy, "sort-by", "", "If non-empty, sort list types using this field specification.  The field specification is expressed as a JSONPath expression (e.g. '{.metadata.name}'). The field in the API resource specified by this JSONPath expression must be an integer or a string.")
	f.StringVarP(&o.labelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	f.BoolVarP(&o.watch, "watch", "w", false, "After listing/getting the requested object, watch for changes.")
	f.BoolVar(&o.watchOnly, "watch-only", false, "Watch for changes to the requested object(s), without listing/getting first.")
	f.BoolVar(&o.outputWatchEvents, "output-watch-events", false, "Output watch event objects when --watch or --watch-only is used. Existing objects are output as initial ADDED events.")
	f.BoolVar(&o.showLabels, "show-labels", false, "When printing, show all labels as the last column (default hide labels column)")
	f.BoolVar(&o.noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist.")
	f.StringVar(&o.raw, "raw", "", "Raw URI to request from the server.  Uses the transport specified by the kubeconfig file.")
	return cmd
}

// runGetRaw is `kubectl get --raw URI`: one GET, the answer printed as it
// came (upstream RawGet), with upstream's checks of the flags first.
func (s *session) runGetRaw(cmd *cobra.Command, o *getOptions, args []string) error {
	if len(args) > 0 {
		return errors.New("arguments may not be passed when --raw is specified")
	}
	if o.watch || o.watchOnly || o.labelSelector != "" {
		return errors.New("--raw may not be specified with other flags that filter the server request or alter the output")
	}
	if o.output != "" {
		return usageErrorf(cmd, "--raw and --output are mutually exclusive")
	}
	u, err := url.ParseRequestURI(o.raw)
	if err != nil {
		return usageErrorf(cmd, "--raw must be a valid URL path: %v", err)
	}
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: u.Path, query: u.Query(), accept: "*/*"})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(s.out(), resp.Body)
	return err
}

func (s *session) runGet(cmd *cobra.Command, o *getOptions, args []string) error {
	if o.raw != "" {
		return s.runGetRaw(cmd, o, args)
	}
	if o.template != "" && o.output == "" {
		o.output = "go-template" // --template alone means a Go template, as upstream
	}
	if err := checkOutputFormat(o.output, getOutputFormats...); err != nil {
		return err
	}
	var printer *objectPrinter
	if o.output != "" && o.output != "wide" {
		var err error
		printer, err = newObjectPrinter(o.output, printerOptions{
			template: o.template, allowMissing: o.allowMissingKeys, noHeaders: o.noHeaders, readFile: s.cli.cfg.ReadFile,
		})
		if err != nil {
			return err
		}
	}
	if o.sortBy != "" {
		if _, err := relaxedJSONPath(o.sortBy); err != nil {
			return err
		}
	}
	if o.outputWatchEvents && !o.watch && !o.watchOnly {
		return errors.New("--output-watch-events option can only be used with --watch or --watch-only")
	}
	if len(args) == 0 {
		fmt.Fprintf(s.errOut(), "You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\n")
		return usageErrorf(cmd, "Required resource not specified.")
	}
	targets, err := s.parseResourceArgs(args)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if len(t.names) > 0 && o.allNamespaces && t.res.Namespaced {
			return errors.New("a resource cannot be retrieved by name across all namespaces")
		}
	}
	if o.watch || o.watchOnly {
		return s.watchGet(o, printer, targets)
	}
	if printer != nil {
		return s.getGeneric(o, printer, targets, len(targets) == 1 && len(targets[0].names) == 1)
	}

	// Human-readable: one tabwriter for everything; a new table (and a blank
	// line) for each resource type.
	track := &trackingWriter{w: s.out()}
	sep := &separatorWriter{w: track}
	tw := newTabWriter(sep)
	withKind := multipleKinds(targets)
	var errs multiError
	allNamespaced := !o.allNamespaces
	var tp *tablePrinter
	var last *apiResource
	for i := range targets {
		t := targets[i]
		allNamespaced = allNamespaced && t.res.Namespaced
		tables, terrs := s.getTables(t, o)
		for _, e := range terrs {
			if o.ignoreNotFound && apierrors.IsNotFound(e) {
				continue
			}
			errs = append(errs, e)
		}
		if len(tables) == 0 {
			continue
		}
		if last == nil || last.Name != t.res.Name || last.Group != t.res.Group {
			tw.Flush()
			tw.SetRememberedWidths(nil)
			if last != nil && !o.noHeaders && track.written > 0 {
				sep.ready = true
			}
			opts := tableOptions{
				Wide: o.output == "wide", NoHeaders: o.noHeaders, ShowLabels: o.showLabels,
				WithNamespace: o.allNamespaces && t.res.Namespaced, LabelColumns: o.labelColumns,
			}
			if withKind {
				opts.Kind = t.res.kindName()
			}
			tp = &tablePrinter{opts: opts}
			last = &targets[i].res
		}
		for _, table := range tables {
			tp.print(tw, table, "")
		}
	}
	tw.Flush()
	if track.written == 0 && len(errs) == 0 && !o.ignoreNotFound {
		if allNamespaced {
			fmt.Fprintf(s.errOut(), "No resources found in %s namespace.\n", s.namespace)
		} else {
			fmt.Fprintln(s.errOut(), "No resources found")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// multipleKinds reports whether the targets span several kinds, in which
// case names print as kind/name.
func multipleKinds(targets []target) bool {
	for _, t := range targets[1:] {
		if t.res.Kind != targets[0].res.Kind || t.res.Group != targets[0].res.Group {
			return true
		}
	}
	return false
}

// getTables fetches a target as server-side tables: one for a collection,
// one per name otherwise (with an error for each name that failed).
func (s *session) getTables(t target, o *getOptions) ([]*metav1.Table, []error) {
	ns := s.namespaceFor(t.res, o.allNamespaces)
	if len(t.names) == 0 {
		q := listQuery(o.labelSelector, o.fieldSelector)
		if o.sortBy != "" {
			q.Set("includeObject", "Object") // rows carry whole objects to sort by
		}
		table, err := s.getTable(t.res.path(ns, "", ""), q)
		if err != nil {
			return nil, []error{err}
		}
		if o.sortBy != "" {
			if err := s.sortTable(t.res, ns, o, table); err != nil {
				return nil, []error{err}
			}
		}
		return []*metav1.Table{table}, nil
	}
	var tables []*metav1.Table
	var errs []error
	for _, name := range t.names {
		table, err := s.getTable(t.res.path(ns, name, ""), nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tables = append(tables, table)
	}
	return tables, errs
}

func (s *session) getTable(path string, q url.Values) (*metav1.Table, error) {
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: path, query: q, accept: acceptTable})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return decodeTable(data)
}

// getGeneric prints -o yaml|json|name: the objects themselves. Several
// objects print as one v1 List; a single named object prints alone.
func (s *session) getGeneric(o *getOptions, printer *objectPrinter, targets []target, singleItem bool) error {
	var items []map[string]any
	var errs multiError
	for _, t := range targets {
		ns := s.namespaceFor(t.res, o.allNamespaces)
		if len(t.names) == 0 {
			list, _, err := s.listObjects(t.res, ns, listQuery(o.labelSelector, o.fieldSelector))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			items = append(items, list...)
			continue
		}
		for _, name := range t.names {
			obj, err := s.getObject(t.res, ns, name)
			if err != nil {
				if o.ignoreNotFound && apierrors.IsNotFound(err) {
					continue
				}
				if singleItem {
					return err
				}
				errs = append(errs, err)
				continue
			}
			items = append(items, obj)
		}
	}
	if o.sortBy != "" && !singleItem {
		if err := sortByPath(items, o.sortBy); err != nil {
			return err
		}
	}
	if len(items) == 0 && len(errs) == 0 && o.ignoreNotFound {
		return nil
	}
	if singleItem && len(items) == 1 {
		if err := printer.print(s.out(), items[0]); err != nil {
			return err
		}
	} else if err := printer.print(s.out(), listOf(items)); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// watchGet is `kubectl get -w`: print the current state, then every change
// the server streams (GET ...?watch=true&resourceVersion=<list's>), until
// the watch ends or ctx is cancelled.
func (s *session) watchGet(o *getOptions, printer *objectPrinter, targets []target) error {
	if len(targets) != 1 {
		return fmt.Errorf("you may only specify a single resource type")
	}
	t := targets[0]
	if len(t.names) > 1 {
		return fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(t.names))
	}
	ns := s.namespaceFor(t.res, o.allNamespaces)
	human := printer == nil
	q := listQuery(o.labelSelector, o.fieldSelector)
	if len(t.names) == 1 {
		q = listQuery("", "metadata.name="+t.names[0])
	}
	tw := newTabWriter(s.out())
	tp := &tablePrinter{opts: tableOptions{
		Wide: o.output == "wide", NoHeaders: o.noHeaders, ShowLabels: o.showLabels,
		WithNamespace: o.allNamespaces && t.res.Namespaced, EventType: o.outputWatchEvents, LabelColumns: o.labelColumns,
	}}
	printed := 0

	// The current state, and the revision where the watch starts.
	var rv string
	if human {
		table, err := s.getTable(t.res.path(ns, "", ""), q)
		if err != nil {
			return err
		}
		if len(t.names) == 1 && len(table.Rows) == 0 {
			return apierrors.NewNotFound(t.res.groupResource(), t.names[0])
		}
		rv = table.ResourceVersion
		if !o.watchOnly {
			tp.print(tw, table, "ADDED")
			tw.Flush()
		}
	} else {
		items, listRV, err := s.listObjects(t.res, ns, q)
		if err != nil {
			return err
		}
		if len(t.names) == 1 && len(items) == 0 {
			return apierrors.NewNotFound(t.res.groupResource(), t.names[0])
		}
		rv = listRV
		if !o.watchOnly {
			for _, it := range items {
				if err := s.printWatched(printer, it, printed); err != nil {
					return err
				}
				printed++
			}
		}
	}

	q.Set("watch", "true")
	q.Set("resourceVersion", rv)
	accept := acceptJSON
	if human {
		accept = acceptTable
	}
	resp, err := s.client.do(s.ctx, request{method: http.MethodGet, path: t.res.path(ns, "", ""), query: q, accept: accept})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev metav1.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			return nil // the server ended the watch (timeout): kubectl exits quietly
		}
		switch ev.Type {
		case "ERROR":
			return nil // e.g. 410 Gone; upstream's get -w ends here too
		case "BOOKMARK":
			continue
		}
		if human {
			table, err := decodeTable(ev.Object.Raw)
			if err != nil {
				return err
			}
			tp.print(tw, table, ev.Type)
			tw.Flush()
			continue
		}
		obj := map[string]any{}
		if err := decodeJSON(ev.Object.Raw, &obj); err != nil {
			return err
		}
		setTypeMeta(obj, t.res)
		if err := s.printWatched(printer, obj, printed); err != nil {
			return err
		}
		printed++
	}
}

// printWatched prints one watched object for -o yaml|json|name; YAML
// documents are separated by "---".
func (s *session) printWatched(p *objectPrinter, obj map[string]any, n int) error {
	if p.format == "yaml" && n > 0 {
		fmt.Fprintln(s.out(), "---")
	}
	return p.print(s.out(), obj)
}

// sortTable orders a table's rows by --sort-by (upstream's TableSorter).
// The rows carry whole objects when the server honours
// includeObject=Object; a server that sent only metadata gets the objects
// fetched once more, as a list, and matched by uid.
func (s *session) sortTable(res apiResource, ns string, o *getOptions, table *metav1.Table) error {
	objs := make([]map[string]any, len(table.Rows))
	full := true
	for i, row := range table.Rows {
		m := map[string]any{}
		if len(row.Object.Raw) > 0 {
			if err := decodeJSON(row.Object.Raw, &m); err != nil {
				return err
			}
		}
		if k, _ := m["kind"].(string); k == "" || k == "PartialObjectMetadata" {
			full = false
		}
		objs[i] = m
	}
	if !full && len(objs) > 0 {
		items, _, err := s.listObjects(res, ns, listQuery(o.labelSelector, o.fieldSelector))
		if err != nil {
			return err
		}
		byUID := map[string]map[string]any{}
		for _, it := range items {
			byUID[nestedString(it, "metadata", "uid")] = it
		}
		for i, m := range objs {
			if it, ok := byUID[nestedString(m, "metadata", "uid")]; ok {
				objs[i] = it
			}
		}
	}
	idx, err := sortOrder(objs, o.sortBy)
	if err != nil {
		return err
	}
	rows := make([]metav1.TableRow, len(objs))
	for k, i := range idx {
		rows[k] = table.Rows[i]
	}
	table.Rows = rows
	return nil
}
