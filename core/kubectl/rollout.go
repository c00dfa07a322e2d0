package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// newRolloutCommand is `kubectl rollout` (upstream pkg/cmd/rollout and
// pkg/polymorphichelpers) for Deployments. A Deployment's history is its
// ReplicaSets: each carries the pod template of one revision in the
// annotation deployment.kubernetes.io/revision.
func (s *session) newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of a resource",
		Long: `Manage the rollout of one or many resources.

 Valid resource types include:

  *  deployments
  *  daemonsets
  *  statefulsets`,
		Example: `  # Rollback to the previous deployment
  kubectl rollout undo deployment/web

  # Check the rollout status of a deployment
  kubectl rollout status deployment/web

  # Restart a deployment
  kubectl rollout restart deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(s.newRolloutStatusCommand(), s.newRolloutHistoryCommand(), s.newRolloutUndoCommand(),
		s.newRolloutPauseCommand(true), s.newRolloutPauseCommand(false), s.newRolloutRestartCommand())
	return cmd
}

const revisionAnnotation = "deployment.kubernetes.io/revision"

// rolloutTargets selects deployments (and for status, history and undo
// DaemonSets and StatefulSets, and restart them); other kinds get upstream's "no ... has
// been implemented" error.
func (s *session) rolloutTargets(cmd *cobra.Command, sel *selection, args []string, what string) ([]selected, error) {
	if len(args) == 0 && len(sel.files) == 0 {
		return nil, usageErrorf(cmd, "Required resource not specified.")
	}
	objs, err := s.selectObjects("rollout", sel, args)
	if err != nil {
		return objs, err
	}
	for _, o := range objs {
		if o.res.Kind != "Deployment" && !(isRevisioned(o.res.Kind) && (what == "status viewer" || what == "history viewer" || what == "rollbacker" || what == "restarter")) {
			return nil, fmt.Errorf("no %s has been implemented for %s", what, o.res.GroupVersion().WithKind(o.res.Kind).GroupKind())
		}
	}
	return objs, nil
}

func toDeployment(obj map[string]any) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	return d, fromMap(obj, d)
}

// deploymentStatus is upstream's DeploymentStatusViewer.Status.
func deploymentStatus(d *appsv1.Deployment) (string, bool, error) {
	if d.Generation > d.Status.ObservedGeneration {
		return "Waiting for deployment spec update to be observed...\n", false, nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	switch {
	case d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas), false, nil
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
	case d.Status.AvailableReplicas < d.Status.UpdatedReplicas:
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
}

func (s *session) newRolloutStatusCommand() *cobra.Command {
	var (
		sel      selection
		watch    bool
		revision int64
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:                   "status (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Show the status of the rollout",
		Long: `Show the status of the rollout.

 By default 'rollout status' will watch the status of the latest rollout until it's done. If you don't want to wait for the rollout to finish then you can use --watch=false.`,
		Example: `  # Watch the rollout status of a deployment
  kubectl rollout status deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if revision < 0 {
				return fmt.Errorf("revision must be a positive integer: %v", revision)
			}
			objs, err := s.rolloutTargets(cmd, &sel, args, "status viewer")
			if err != nil {
				return err
			}
			if len(objs) != 1 {
				return fmt.Errorf("rollout status is only supported on individual resources and resource collections, but %d resources were found", len(objs))
			}
			o := objs[0]
			ctx := s.ctx
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			// The status of the object as it is now: a Deployment's from its
			// conditions, a DaemonSet's or StatefulSet's from its revisions.
			status := func(obj map[string]any) (string, bool, error) {
				if isRevisioned(o.res.Kind) {
					o.obj = obj
					return revisionedStatus(o)
				}
				d, err := toDeployment(obj)
				if err != nil {
					return "", false, err
				}
				if revision > 0 {
					if rev, _ := strconv.ParseInt(d.Annotations[revisionAnnotation], 10, 64); rev != revision {
						return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%d)", revision, rev)
					}
				}
				return deploymentStatus(d)
			}
			obj := o.obj
			for {
				msg, done, err := status(obj)
				if err != nil {
					return err
				}
				fmt.Fprint(s.out(), msg)
				if done || !watch {
					return nil
				}
				next, err := s.nextVersion(ctx, o, obj)
				if err != nil {
					if ctx.Err() != nil && s.ctx.Err() == nil {
						return errors.New("timed out waiting for the condition")
					}
					return err
				}
				if next == nil {
					return fmt.Errorf("object has been deleted")
				}
				obj = next
			}
		},
	}
	sel.addFlags(cmd, "identifying the resource to get from a server.", "f", "l")
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "Watch the status of the rollout until it's done.")
	cmd.Flags().Int64Var(&revision, "revision", 0, "Pin to a specific revision for showing its status. Defaults to 0 (last revision).")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	return cmd
}

// nextVersion watches one object from the version seen and returns the next
// one (nil once it is deleted).
func (s *session) nextVersion(ctx context.Context, o selected, obj map[string]any) (map[string]any, error) {
	for {
		q := listQuery("", "metadata.name="+o.name)
		q.Set("watch", "true")
		q.Set("resourceVersion", nestedString(obj, "metadata", "resourceVersion"))
		resp, err := s.client.do(ctx, request{method: http.MethodGet, path: o.res.path(o.namespace, "", ""), query: q})
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(resp.Body)
		for {
			var ev metav1.WatchEvent
			if err := dec.Decode(&ev); err != nil {
				break
			}
			switch ev.Type {
			case "MODIFIED", "ADDED":
				m := map[string]any{}
				if err := decodeJSON(ev.Object.Raw, &m); err != nil {
					resp.Body.Close()
					return nil, err
				}
				setTypeMeta(m, o.res)
				resp.Body.Close()
				return m, nil
			case "DELETED":
				resp.Body.Close()
				return nil, nil
			}
		}
		resp.Body.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The watch ended without news (a server timeout, or 410): read
		// the object again and go on from there.
		cur, err := s.getObject(o.res, o.namespace, o.name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if nestedString(cur, "metadata", "resourceVersion") != nestedString(obj, "metadata", "resourceVersion") {
			return cur, nil
		}
	}
}

// deploymentReplicaSets returns the ReplicaSets a Deployment controls, by
// revision.
func (s *session) deploymentReplicaSets(d *appsv1.Deployment) (map[int64]*appsv1.ReplicaSet, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	rsRes := apiResource{Group: "apps", Version: "v1", Name: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	var list appsv1.ReplicaSetList
	q := listQuery(sel.String(), "")
	if sel.Empty() {
		q = listQuery(labels.Everything().String(), "")
	}
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: rsRes.path(d.Namespace, "", ""), query: q}, &list); err != nil {
		return nil, err
	}
	out := map[int64]*appsv1.ReplicaSet{}
	for i := range list.Items {
		rs := &list.Items[i]
		owned := false
		for _, ref := range rs.OwnerReferences {
			if ref.UID == d.UID && ref.Controller != nil && *ref.Controller {
				owned = true
			}
		}
		if !owned {
			continue
		}
		rev, err := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
		if err != nil {
			continue
		}
		out[rev] = rs
	}
	return out, nil
}

func (s *session) newRolloutHistoryCommand() *cobra.Command {
	var (
		sel      selection
		revision int64
	)
	cmd := &cobra.Command{
		Use:                   "history (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "View rollout history",
		Long:                  "View previous rollout revisions and configurations.",
		Example: `  # View the rollout history of a deployment
  kubectl rollout history deployment/web

  # View the details of deployment revision 3
  kubectl rollout history deployment/web --revision=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if revision < 0 {
				return fmt.Errorf("revision must be a positive integer: %v", revision)
			}
			objs, err := s.rolloutTargets(cmd, &sel, args, "history viewer")
			if err != nil {
				return err
			}
			for _, o := range objs {
				if isRevisioned(o.res.Kind) {
					if err := s.revisionHistory(o, revision); err != nil {
						return err
					}
					continue
				}
				d, err := toDeployment(o.obj)
				if err != nil {
					return err
				}
				rss, err := s.deploymentReplicaSets(d)
				if err != nil {
					return err
				}
				if revision > 0 {
					rs, ok := rss[revision]
					if !ok {
						return fmt.Errorf("unable to find the specified revision")
					}
					fmt.Fprintf(s.out(), "%s/%s with revision #%d\n", o.res.kindName(), o.name, revision)
					t := rs.Spec.Template.DeepCopy()
					if cause := rs.Annotations["kubernetes.io/change-cause"]; cause != "" {
						if t.Annotations == nil {
							t.Annotations = map[string]string{}
						}
						t.Annotations["kubernetes.io/change-cause"] = cause
					}
					text, err := tabbedString(func(w io.Writer) error {
						describePodTemplate(&prefixWriter{out: w}, t)
						return nil
					})
					if err != nil {
						return err
					}
					fmt.Fprint(s.out(), text)
					continue
				}
				fmt.Fprintf(s.out(), "%s/%s \n", o.res.kindName(), o.name)
				if len(rss) == 0 {
					fmt.Fprintln(s.out(), "No rollout history found.")
					continue
				}
				causes := make(map[int64]string, len(rss))
				for r, rs := range rss {
					causes[r] = rs.Annotations["kubernetes.io/change-cause"]
				}
				printHistory(s.out(), causes)
			}
			return nil
		},
	}
	sel.addFlags(cmd, "identifying the resource to get from a server.", "f", "l")
	cmd.Flags().Int64Var(&revision, "revision", 0, "See the details, including podTemplate of the revision specified")
	return cmd
}

// printHistory prints `rollout history`'s table: each revision, oldest
// first, with its kubernetes.io/change-cause.
func printHistory(out io.Writer, causes map[int64]string) {
	revs := make([]int64, 0, len(causes))
	for r := range causes {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	text, _ := tabbedString(func(w io.Writer) error {
		fmt.Fprintf(w, "REVISION\tCHANGE-CAUSE\n")
		for _, r := range revs {
			cause := causes[r]
			if cause == "" {
				cause = "<none>"
			}
			fmt.Fprintf(w, "%d\t%s\n", r, cause)
		}
		return nil
	})
	fmt.Fprintln(out, text)
}

// annotationsToSkip are the Deployment annotations a rollback keeps.
var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation:          true,
	revisionAnnotation:                          true,
	"deployment.kubernetes.io/revision-history": true,
	"deployment.kubernetes.io/desired-replicas": true,
	"deployment.kubernetes.io/max-replicas":     true,
	"deprecated.deployment.rollback.to":         true,
}

func (s *session) newRolloutUndoCommand() *cobra.Command {
	var (
		sel        selection
		toRevision int64
		dryRunFlag string
	)
	cmd := &cobra.Command{
		Use:                   "undo (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Undo a previous rollout",
		Long:                  "Roll back to a previous rollout.",
		Example: `  # Roll back to the previous deployment
  kubectl rollout undo deployment/web

  # Roll back to revision 3
  kubectl rollout undo deployment/web --to-revision=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dr, err := parseDryRun(dryRunFlag)
			if err != nil {
				return err
			}
			objs, err := s.rolloutTargets(cmd, &sel, args, "rollbacker")
			if err != nil {
				return err
			}
			for _, o := range objs {
				msg, err := s.rollback(o, toRevision, dr)
				if err != nil {
					return err
				}
				fmt.Fprintf(s.out(), "%s/%s %s%s\n", o.res.kindName(), o.name, msg, dr.suffix())
			}
			return nil
		},
	}
	sel.addFlags(cmd, "identifying the resource to get from a server.", "f", "l")
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to rollback to. Default to 0 (last revision).")
	cmd.Flags().StringVar(&dryRunFlag, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	return cmd
}

// rollback is upstream's DeploymentRollbacker: put the pod template of a
// past revision's ReplicaSet back into the Deployment (a JSON patch); the
// deployment controller then rolls out that ReplicaSet again.
func (s *session) rollback(o selected, toRevision int64, dr dryRun) (string, error) {
	if isRevisioned(o.res.Kind) {
		return s.revisionRollback(o, toRevision, dr)
	}
	if toRevision < 0 {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	d, err := toDeployment(o.obj)
	if err != nil {
		return "", err
	}
	rss, err := s.deploymentReplicaSets(d)
	if err != nil {
		return "", err
	}
	var rs *appsv1.ReplicaSet
	if toRevision > 0 {
		if rs = rss[toRevision]; rs == nil {
			return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
		}
	} else {
		// The previous revision: the highest below the current one.
		current, _ := strconv.ParseInt(d.Annotations[revisionAnnotation], 10, 64)
		var prev int64
		for r := range rss {
			if r < current && r > prev {
				prev = r
			}
		}
		if prev == 0 {
			return "", fmt.Errorf("no rollout history found for deployment %q", d.Name)
		}
		rs, toRevision = rss[prev], prev
	}
	if dr == "client" {
		return "rolled back", nil
	}
	if d.Spec.Paused {
		return "", fmt.Errorf("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again")
	}
	if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", toRevision), nil
	}
	t := rs.Spec.Template.DeepCopy()
	delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	annotations := map[string]string{}
	for k := range annotationsToSkip {
		if v, ok := d.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !annotationsToSkip[k] {
			annotations[k] = v
		}
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/spec/template", "value": t},
		{"op": "replace", "path": "/metadata/annotations", "value": annotations},
	})
	if err != nil {
		return "", err
	}
	if _, err := s.patchObject(o.res, o.namespace, o.name, "", "application/json-patch+json", patch, dr, ""); err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %v", toRevision, err)
	}
	return "rolled back", nil
}

// newRolloutPauseCommand is `rollout pause` (pause) and `rollout resume`:
// set spec.paused, which stops the deployment controller from rolling out
// template changes.
func (s *session) newRolloutPauseCommand(pause bool) *cobra.Command {
	verb, done := "pause", "paused"
	if !pause {
		verb, done = "resume", "resumed"
	}
	var sel selection
	var pf printFlags
	var fieldManager string
	cmd := &cobra.Command{
		Use:                   verb + " RESOURCE",
		DisableFlagsInUseLine: true,
		Short:                 map[bool]string{true: "Mark the provided resource as paused", false: "Resume a paused resource"}[pause],
		Long: map[bool]string{
			true:  "Mark the provided resource as paused.\n\n Paused resources will not be reconciled by a controller. Use \"kubectl rollout resume\" to resume a paused resource.",
			false: "Resume a paused resource.\n\n Paused resources will not be reconciled by a controller. By resuming a resource, we allow it to be reconciled again.",
		}[pause],
		Example: fmt.Sprintf("  # %s the deployment web\n  kubectl rollout %s deployment/web", map[bool]string{true: "Mark as paused", false: "Resume"}[pause], verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			objs, err := s.rolloutTargets(cmd, &sel, args, map[bool]string{true: "pauser", false: "resumer"}[pause])
			if err != nil {
				return err
			}
			var errs multiError
			for _, o := range objs {
				paused, _ := nestedMap(o.obj, "spec")["paused"].(bool)
				if paused == pause {
					if err := s.printChanged(o.res, o.obj, pf.output, "already "+done+dr.suffix()); err != nil {
						return err
					}
					continue
				}
				out := o.obj
				if dr != "client" {
					patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, pause)
					if out, err = s.patchObject(o.res, o.namespace, o.name, "", "application/strategic-merge-patch+json", []byte(patch), dr, fieldManager); err != nil {
						errs = append(errs, fmt.Errorf("failed to patch: %v", err))
						continue
					}
				}
				if err := s.printChanged(o.res, out, pf.output, done+dr.suffix()); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
	}
	sel.addFlags(cmd, "identifying the resource to get from a server.", "f", "l")
	cmd.Flags().StringVar(&fieldManager, "field-manager", "kubectl-rollout", "Name of the manager used to track field ownership.")
	pf.add(cmd)
	return cmd
}

// newRolloutRestartCommand is `rollout restart`: stamp the pod template
// with kubectl.kubernetes.io/restartedAt, a template change the deployment
// controller rolls out like any other.
func (s *session) newRolloutRestartCommand() *cobra.Command {
	var sel selection
	var pf printFlags
	var fieldManager string
	cmd := &cobra.Command{
		Use:                   "restart RESOURCE",
		DisableFlagsInUseLine: true,
		Short:                 "Restart a resource",
		Long:                  "Restart a resource.\n\n Resource rollout will be restarted.",
		Example:               "  # Restart the deployment web\n  kubectl rollout restart deployment/web",
		RunE: func(cmd *cobra.Command, args []string) error {
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			objs, err := s.rolloutTargets(cmd, &sel, args, "restarter")
			if err != nil {
				return err
			}
			var errs multiError
			for _, o := range objs {
				if paused, _ := nestedMap(o.obj, "spec")["paused"].(bool); paused {
					errs = append(errs, fmt.Errorf("can't restart paused deployment (run rollout resume first)"))
					continue
				}
				stamp := s.cli.cfg.Clock.Now().Format(time.RFC3339)
				patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, stamp)
				out := o.obj
				if dr != "client" {
					if out, err = s.patchObject(o.res, o.namespace, o.name, "", "application/strategic-merge-patch+json", []byte(patch), dr, fieldManager); err != nil {
						errs = append(errs, fmt.Errorf("failed to patch: %v", err))
						continue
					}
				}
				if err := s.printChanged(o.res, out, pf.output, "restarted"+dr.suffix()); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
	}
	sel.addFlags(cmd, "identifying the resource to get from a server.", "f", "l")
	cmd.Flags().StringVar(&fieldManager, "field-manager", "kubectl-rollout", "Name of the manager used to track field ownership.")
	pf.add(cmd)
	return cmd
}
