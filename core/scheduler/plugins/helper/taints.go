// Package helper holds small functions several plugins share (upstream:
// pkg/scheduler/framework/plugins/helper and pkg/apis/core/v1/helper).
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
