package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// newDrainCommand is `kubectl drain NODE` (upstream pkg/cmd/drain and
// k8s.io/kubectl/pkg/drain): cordon the node, then evict its pods through
// the pods/eviction subresource (which respects disruption budgets, unlike a
// delete) and wait for them to go. Their controllers create replacements,
// which the scheduler places on other nodes, since this one is cordoned.
// An eviction a PodDisruptionBudget refuses (429) is tried again every 5
// seconds, so the drain goes as fast as the budget lets it: with
// minAvailable 2 of 3, one pod at a time, each once its replacement is Ready.
func (s *session) newDrainCommand() *cobra.Command {
	var force, ignoreDaemonSets, deleteEmptyDir bool
	var gracePeriod int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:                   "drain NODE",
		DisableFlagsInUseLine: true,
		Short:                 "Drain node in preparation for maintenance",
		Long: `Drain node in preparation for maintenance.

 The given node will be marked unschedulable to prevent new pods from arriving. 'drain' evicts the pods if the API server supports eviction. Otherwise, it will use normal DELETE to delete the pods. The 'drain' evicts or deletes all pods except mirror pods (which cannot be deleted through the API server). If there are daemon set-managed pods, drain will not proceed without --ignore-daemonsets, and regardless it will not delete any daemon set-managed pods. If there are any pods that are neither mirror pods nor managed by a replication controller, replica set, daemon set, stateful set, or job, then drain will not delete any pods unless you use --force.`,
		Example: `  # Drain node "node-1", even if there are pods not managed by a controller on it
  kubectl drain node-1 --force`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd, "USAGE: drain NODE [flags]")
			}
			node := args[0]
			nodes, err := s.resolve("nodes")
			if err != nil {
				return err
			}
			pods, err := s.resolve("pods")
			if err != nil {
				return err
			}
			obj, err := s.getObject(nodes, "", node)
			if err != nil {
				return err
			}
			if unschedulable, _ := nestedMap(obj, "spec")["unschedulable"].(bool); unschedulable {
				fmt.Fprintf(s.out(), "node/%s already cordoned\n", node)
			} else {
				if _, err := s.patchObject(nodes, "", node, "", "application/strategic-merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`), "none", "kubectl-cordon"); err != nil {
					return err
				}
				fmt.Fprintf(s.out(), "node/%s cordoned\n", node)
			}
			items, _, err := s.listObjects(pods, "", listQuery("", "spec.nodeName="+node))
			if err != nil {
				return err
			}
			var evict []map[string]any
			var unmanaged, local, daemons []string
			for _, p := range items {
				name := nestedString(p, "metadata", "namespace") + "/" + nestedString(p, "metadata", "name")
				phase := nestedString(p, "status", "phase")
				if phase == "Succeeded" || phase == "Failed" {
					evict = append(evict, p)
					continue
				}
				kind := controllerKind(p)
				if kind == "DaemonSet" {
					daemons = append(daemons, name)
					continue
				}
				if kind == "" && !force {
					unmanaged = append(unmanaged, name)
				}
				if hasEmptyDir(p) && !deleteEmptyDir {
					local = append(local, name)
				}
				evict = append(evict, p)
			}
			var problems []string
			if len(unmanaged) > 0 {
				problems = append(problems, "cannot delete Pods that declare no controller (use --force to override): "+strings.Join(unmanaged, ", "))
			}
			if len(local) > 0 {
				problems = append(problems, "cannot delete Pods with local storage (use --delete-emptydir-data to override): "+strings.Join(local, ", "))
			}
			if len(daemons) > 0 && !ignoreDaemonSets {
				problems = append(problems, "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): "+strings.Join(daemons, ", "))
			}
			if len(problems) > 0 {
				fmt.Fprintf(s.errOut(), "error: unable to drain node %q due to error: %s, continuing command...\n", node, strings.Join(problems, ", "))
				fmt.Fprintf(s.errOut(), "There are pending nodes to be drained:\n %s\n", node)
				return errors.New(strings.Join(problems, "\n"))
			}
			if len(daemons) > 0 {
				fmt.Fprintf(s.errOut(), "Warning: ignoring DaemonSet-managed Pods: %s\n", strings.Join(daemons, ", "))
			}
			if err := s.evictPods(pods, evict, gracePeriod, timeout); err != nil {
				fmt.Fprintf(s.errOut(), "error: unable to drain node %q due to error: %s, continuing command...\n", node, err)
				fmt.Fprintf(s.errOut(), "There are pending nodes to be drained:\n %s\n", node)
				return err
			}
			fmt.Fprintf(s.out(), "node/%s drained\n", node)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Continue even if there are pods that do not declare a controller.")
	cmd.Flags().BoolVar(&ignoreDaemonSets, "ignore-daemonsets", false, "Ignore DaemonSet-managed pods.")
	cmd.Flags().BoolVar(&deleteEmptyDir, "delete-emptydir-data", false, "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
	cmd.Flags().IntVar(&gracePeriod, "grace-period", -1, "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "The length of time to wait before giving up, zero means infinite")
	return cmd
}

// controllerKind is the kind of a pod's controller owner, "" when none.
func controllerKind(p map[string]any) string {
	owners, _ := nestedMap(p, "metadata")["ownerReferences"].([]any)
	for _, o := range owners {
		om, _ := o.(map[string]any)
		if c, _ := om["controller"].(bool); c {
			k, _ := om["kind"].(string)
			return k
		}
	}
	return ""
}

func hasEmptyDir(p map[string]any) bool {
	vols, _ := nestedMap(p, "spec")["volumes"].([]any)
	for _, v := range vols {
		if vm, _ := v.(map[string]any); vm != nil && vm["emptyDir"] != nil {
			return true
		}
	}
	return false
}

// drainRetryInterval is how long drain waits after an eviction answered
// 429 TooManyRequests (upstream sleeps 5 seconds).
const drainRetryInterval = 5 * time.Second

// evictPods is upstream's Helper.evictPods: each pod in its own goroutine
// is evicted, tried again while the API server answers 429 (a disruption
// budget says not now), and then waited for until it is gone. A pod already
// gone counts as evicted. A non-negative gracePeriod overrides the pods'
// own; timeout bounds the whole (0: no bound).
func (s *session) evictPods(pods apiResource, evict []map[string]any, gracePeriod int, timeout time.Duration) error {
	ctx, cancel := context.WithCancel(s.ctx)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(s.ctx, timeout)
	}
	defer cancel()
	globalTimeout := "2562047h47m16.854775807s" // upstream's time.Duration(math.MaxInt64)
	if timeout > 0 {
		globalTimeout = timeout.String()
	}
	// The goroutines share the command's streams.
	var mu sync.Mutex
	printf := func(w io.Writer, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, format, args...)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(365 * 24 * time.Hour)
	}
	errs := make([]error, len(evict))
	var wg sync.WaitGroup
	for i, p := range evict {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns, name := nestedString(p, "metadata", "namespace"), nestedString(p, "metadata", "name")
			ev := map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": name, "namespace": ns}}
			if gracePeriod >= 0 {
				ev["deleteOptions"] = map[string]any{"gracePeriodSeconds": gracePeriod}
			}
			body, _ := json.Marshal(ev)
			for {
				printf(s.out(), "evicting pod %s/%s\n", ns, name)
				if ctx.Err() != nil {
					errs[i] = fmt.Errorf("error when evicting pods/%q -n %q: global timeout reached: %v", name, ns, globalTimeout)
					return
				}
				resp, err := s.client.do(ctx, request{method: http.MethodPost, path: pods.path(ns, name, "eviction"), body: body, contentType: "application/json"})
				if err == nil {
					resp.Body.Close()
					break
				}
				if apierrors.IsNotFound(err) {
					return // gone already
				}
				if ctx.Err() != nil {
					errs[i] = fmt.Errorf("error when evicting pods/%q -n %q: global timeout reached: %v", name, ns, globalTimeout)
					return
				}
				if !apierrors.IsTooManyRequests(err) {
					errs[i] = fmt.Errorf("error when evicting pods/%q -n %q: %v", name, ns, err)
					return
				}
				printf(s.errOut(), "error when evicting pods/%q -n %q (will retry after 5s): %v\n", name, ns, err)
				select {
				case <-ctx.Done():
				case <-time.After(drainRetryInterval):
				}
			}
			if err := s.waitDeleted(pods, ns, name, nestedString(p, "metadata", "uid"), deadline); err != nil {
				errs[i] = fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %v", name, ns, err)
				return
			}
			printf(s.out(), "pod/%s evicted\n", name)
		}()
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	return utilerrors.NewAggregate(failed)
}
