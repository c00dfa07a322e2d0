// Package helper holds small functions several plugins share (upstream:
// pkg/scheduler/framework/plugins/helper, and the parts of
// k8s.io/component-helpers/scheduling/corev1 the plugins use; that module is
// not a dependency of kubetab, so the few functions are written out here).
package helper

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// TolerationsTolerateTaint reports whether any toleration tolerates taint,
// by k8s.io/api's own matching rules (Toleration.ToleratesTaint). The numeric
// Lt/Gt operators are alpha upstream (TaintTolerationComparisonOperators) and
// off here.
func TolerationsTolerateTaint(tolerations []v1.Toleration, taint *v1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(klog.Background(), taint, false) {
			return true
		}
	}
	return false
}

// TaintFilter picks the taints a check looks at.
type TaintFilter func(*v1.Taint) bool

// DoNotScheduleTaintsFilterFunc picks the taints that keep pods off a node:
// NoSchedule and NoExecute (PreferNoSchedule only lowers a score).
func DoNotScheduleTaintsFilterFunc() TaintFilter {
	return func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}
}

// FindMatchingUntoleratedTaint returns the first taint that inclusionFilter
// picks and no toleration tolerates (upstream: component-helpers
// FindMatchingUntoleratedTaint). A nil filter picks every taint.
func FindMatchingUntoleratedTaint(taints []v1.Taint, tolerations []v1.Toleration, inclusionFilter TaintFilter) (v1.Taint, bool) {
	for i := range taints {
		if inclusionFilter != nil && !inclusionFilter(&taints[i]) {
			continue
		}
		if !TolerationsTolerateTaint(tolerations, &taints[i]) {
			return taints[i], true
		}
	}
	return v1.Taint{}, false
}
