package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deleteOptions are the flags of `kubectl delete` (upstream
// pkg/cmd/delete/delete.go).
type deleteOptions struct {
	files          []string
	labelSelector  string
	fieldSelector  string
	all            bool
	allNamespaces  bool
	ignoreNotFound bool
	gracePeriod    int
	now            bool
	force          bool
	wait           bool
	timeout        time.Duration
	cascade        string
	output         string
}

// deletion is one object to delete.
type deletion struct {
	res             apiResource
	namespace, name string
	source          string
}

func (s *session) newDeleteCommand() *cobra.Command {
	o := &deleteOptions{}
	cmd := &cobra.Command{
		Use:                   "delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)])",
		DisableFlagsInUseLine: true,
		Short:                 "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		Long: `Delete resources by file names, stdin, resource and names, or by resources and label selector.

 kubectl sends DELETE for each object, prints it as deleted, and then (--wait, the default) watches until each object is really gone: a pod on a node first gets a deletionTimestamp and shows as Terminating until its kubelet has stopped it.`,
		Example: `  # Delete a pod
  kubectl delete pod web

  # Delete the objects of a file
  kubectl delete -f web.yaml

  # Delete pods with label app=web
  kubectl delete pods -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.runDelete(o, args) },
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files, "filename", "f", nil, "containing the resource to delete.")
	s.addRecursiveFlag(cmd)
	f.StringVarP(&o.labelSelector, "selector", "l", "", "Selector (label query) to filter on, not including uninitialized ones.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
	f.BoolVar(&o.all, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "Treat \"resource not found\" as a successful delete.")
	f.IntVar(&o.gracePeriod, "grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully. Ignored if negative. Set to 1 for immediate shutdown.")
	f.BoolVar(&o.now, "now", false, "If true, resources are signaled for immediate shutdown (same as --grace-period=1).")
	f.BoolVar(&o.force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.BoolVar(&o.wait, "wait", true, "If true, wait for resources to be gone before returning. This waits for finalizers.")
	f.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object")
	f.StringVar(&o.cascade, "cascade", "background", `Must be "background", "orphan", or "foreground".`)
	f.StringVarP(&o.output, "output", "o", "", "Output mode. Use \"-o name\" for shorter output (resource/name).")
	return cmd
}

func (s *session) runDelete(o *deleteOptions, args []string) error {
	if o.output != "" && o.output != "name" {
		return fmt.Errorf("unexpected -o output mode: %v. We only support '-o name'", o.output)
	}
	if o.all && o.labelSelector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	if o.now {
		if o.gracePeriod != -1 {
			return errors.New("--now and --grace-period cannot be specified together")
		}
		o.gracePeriod = 1
	}
	if o.force && o.gracePeriod > 0 {
		return errors.New("--force and --grace-period greater than 0 cannot be specified together")
	}
	if o.force {
		o.gracePeriod = 0
		fmt.Fprintln(s.errOut(), "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	}
	var propagation metav1.DeletionPropagation
	switch o.cascade {
	case "background", "true":
		propagation = metav1.DeletePropagationBackground
	case "foreground":
		propagation = metav1.DeletePropagationForeground
	case "orphan", "false":
		propagation = metav1.DeletePropagationOrphan
	default:
		return fmt.Errorf("invalid cascade value (%v). Must be \"background\", \"foreground\", or \"orphan\"", o.cascade)
	}
	if len(args) == 0 && len(o.files) == 0 {
		return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
	}

	// Find everything first, then delete (as the resource builder does).
	var todo []deletion
	var errs multiError
	if len(o.files) > 0 {
		objs, err := s.readManifests("delete", o.files)
		if err != nil {
			return err
		}
		for _, m := range objs {
			todo = append(todo, deletion{res: m.res, namespace: m.namespace, name: m.name, source: m.source})
		}
	}
	targets, err := s.parseResourceArgs(args)
	if err != nil {
		return err
	}
	for _, t := range targets {
		ns := s.namespaceFor(t.res, o.allNamespaces)
		if len(t.names) > 0 {
			for _, n := range t.names {
				todo = append(todo, deletion{res: t.res, namespace: ns, name: n})
			}
			continue
		}
		if !o.all && o.labelSelector == "" && o.fieldSelector == "" {
			return errors.New("resource(s) were provided, but no name was specified")
		}
		items, _, err := s.listObjects(t.res, ns, listQuery(o.labelSelector, o.fieldSelector))
		if err != nil {
			return err
		}
		for _, it := range items {
			todo = append(todo, deletion{res: t.res, namespace: nestedString(it, "metadata", "namespace"), name: nestedString(it, "metadata", "name")})
		}
	}

	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, PropagationPolicy: &propagation}
	if o.gracePeriod >= 0 {
		g := int64(o.gracePeriod)
		opts.GracePeriodSeconds = &g
	}
	body, _ := json.Marshal(&opts)
	type deleted struct {
		d   deletion
		uid string
	}
	var gone []deleted
	found := 0
	for _, d := range todo {
		var resp map[string]any
		err := s.client.into(s.ctx, request{method: http.MethodDelete, path: d.res.path(d.namespace, d.name, ""), body: body, contentType: "application/json"}, &resp)
		if err != nil {
			if o.ignoreNotFound && apierrors.IsNotFound(err) {
				continue
			}
			errs = append(errs, sourceErr("deleting", d.source, err))
			continue
		}
		found++
		op := "deleted"
		if o.gracePeriod == 0 {
			op = "force deleted"
		}
		if o.output == "name" {
			fmt.Fprintf(s.out(), "%s/%s\n", d.res.kindName(), d.name)
		} else {
			fmt.Fprintf(s.out(), "%s %q %s\n", d.res.kindName(), d.name, op)
		}
		uid := nestedString(resp, "details", "uid")
		if uid == "" {
			uid = nestedString(resp, "metadata", "uid")
		}
		gone = append(gone, deleted{d: d, uid: uid})
	}
	if found == 0 && len(errs) == 0 {
		fmt.Fprintln(s.out(), "No resources found")
		return nil
	}
	if o.wait {
		timeout := o.timeout
		if timeout == 0 {
			timeout = 168 * time.Hour // "wait forever": a week, as upstream
		}
		deadline := time.Now().Add(timeout)
		for _, g := range gone {
			if err := s.waitDeleted(g.d.res, g.d.namespace, g.d.name, g.uid, deadline); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
