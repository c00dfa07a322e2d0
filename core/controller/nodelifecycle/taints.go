package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
)

// The taint helpers of upstream's pkg/controller/controller_utils.go
// (AddOrUpdateTaintOnNode, RemoveTaintOffNode), pkg/util/taints and
// pkg/controller/util/node (SwapNodeControllerTaint).

// updateTaintRetries is how often a taint change is retried after a 409
// Conflict (upstream's UpdateTaintBackoff has 5 steps).
const updateTaintRetries = 5

// matchTaint: same key and effect (the value and timeAdded may differ).
func matchTaint(a, b *corev1.Taint) bool { return a.Key == b.Key && a.Effect == b.Effect }

// TaintExists reports whether taints has one with t's key and effect.
func TaintExists(taints []corev1.Taint, t *corev1.Taint) bool {
	for i := range taints {
		if matchTaint(&taints[i], t) {
			return true
		}
	}
	return false
}

// taintSetDiff returns the taints of want missing from have, and those of
// have missing from want (by key and effect).
func taintSetDiff(want, have []corev1.Taint) (toAdd, toRemove []*corev1.Taint) {
	for i := range want {
		if !TaintExists(have, &want[i]) {
			t := want[i]
			toAdd = append(toAdd, &t)
		}
	}
	for i := range have {
		if !TaintExists(want, &have[i]) {
			t := have[i]
			toRemove = append(toRemove, &t)
		}
	}
	return toAdd, toRemove
}

// updateNodeTaints re-reads node name and writes mutate(its taints), retrying
// on conflicts; no write when mutate changes nothing.
func updateNodeTaints(ctx context.Context, c *client.Client, name string, mutate func([]corev1.Taint) ([]corev1.Taint, bool)) error {
	var err error
	for i := 0; i < updateTaintRetries; i++ {
		var node *corev1.Node
		node, err = c.Nodes().Get(ctx, "", name)
		if err != nil {
			return err
		}
		taints, changed := mutate(node.Spec.Taints)
		if !changed {
			return nil
		}
		node = node.DeepCopy()
		node.Spec.Taints = taints
		if _, err = c.Nodes().Update(ctx, node); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// addOrUpdateTaints adds taints to a node, replacing any with the same key
// and effect that differs.
func addOrUpdateTaints(ctx context.Context, c *client.Client, name string, taints ...*corev1.Taint) error {
	if len(taints) == 0 {
		return nil
	}
	return updateNodeTaints(ctx, c, name, func(cur []corev1.Taint) ([]corev1.Taint, bool) {
		out := append([]corev1.Taint(nil), cur...)
		changed := false
		for _, t := range taints {
			found := false
			for i := range out {
				if matchTaint(&out[i], t) {
					found = true
					if out[i].Value != t.Value {
						out[i] = *t
						changed = true
					}
					break
				}
			}
			if !found {
				out = append(out, *t)
				changed = true
			}
		}
		return out, changed
	})
}

// removeTaints removes taints (by key and effect) from a node. When the
// cached node has none of them, nothing is read or written: this runs for
// every healthy node on every pass.
func removeTaints(ctx context.Context, c *client.Client, name string, cached *corev1.Node, taints ...*corev1.Taint) error {
	if len(taints) == 0 {
		return nil
	}
	if cached != nil {
		match := false
		for _, t := range taints {
			match = match || TaintExists(cached.Spec.Taints, t)
		}
		if !match {
			return nil
		}
	}
	return updateNodeTaints(ctx, c, name, func(cur []corev1.Taint) ([]corev1.Taint, bool) {
		var out []corev1.Taint
		for i := range cur {
			drop := false
			for _, t := range taints {
				drop = drop || matchTaint(&cur[i], t)
			}
			if !drop {
				out = append(out, cur[i])
			}
		}
		return out, len(out) != len(cur)
	})
}

// swapNodeControllerTaint adds toAdd (stamped timeAdded now) and removes
// toRemove. The not-ready and unreachable NoExecute taints are swapped this
// way, so a node never has both.
func swapNodeControllerTaint(ctx context.Context, c *client.Client, now time.Time, toAdd, toRemove []*corev1.Taint, node *corev1.Node) error {
	stamped := make([]*corev1.Taint, len(toAdd))
	for i, t := range toAdd {
		cp := *t
		ts := metav1.NewTime(now)
		cp.TimeAdded = &ts
		stamped[i] = &cp
	}
	if err := addOrUpdateTaints(ctx, c, node.Name, stamped...); err != nil {
		return fmt.Errorf("unable to taint %v unresponsive Node %q: %w", describeTaints(toAdd), node.Name, err)
	}
	if err := removeTaints(ctx, c, node.Name, node, toRemove...); err != nil {
		return fmt.Errorf("unable to remove %v unneeded taint from unresponsive Node %q: %w", describeTaints(toRemove), node.Name, err)
	}
	return nil
}

func describeTaints(ts []*corev1.Taint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ToString())
	}
	return out
}
