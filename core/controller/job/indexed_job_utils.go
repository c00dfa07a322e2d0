package job

// Indexed Jobs (upstream indexed_job_utils.go).
//
// With completionMode Indexed, each pod gets one of the indexes 0 ...
// completions-1 and the Job is complete when every index has a pod that
// succeeded. The index is the annotation and label
// batch.kubernetes.io/job-completion-index, the environment variable
// JOB_COMPLETION_INDEX, and part of the pod's name and hostname:
//
//	kubectl create job ... (completionMode: Indexed, completions: 3)
//	pods:  sq-0-x7k2p  sq-1-9fhw2  sq-2-q2tcd     (hostnames sq-0, sq-1, sq-2)
//	status.completedIndexes: "0,2"   then "0-2"    (status.succeeded: 3)
//
// A failed pod is replaced by a pod of the same index.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	unknownCompletionIndex = -1
	// completionIndexEnvName is the variable every container gets.
	completionIndexEnvName = "JOB_COMPLETION_INDEX"
)

func isIndexedJob(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

// getCompletionIndex reads the index annotation; unknownCompletionIndex
// when it is missing or not a non-negative number.
func getCompletionIndex(annotations map[string]string) int {
	v, ok := annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownCompletionIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownCompletionIndex
	}
	return i
}

// validIndex: the pod has an index below completions.
func validIndex(p *corev1.Pod, completions int32) (int, bool) {
	ix := getCompletionIndex(p.Annotations)
	return ix, ix != unknownCompletionIndex && ix < int(completions)
}

// interval is a closed range of indexes.
type interval struct{ first, last int }

// orderedIntervals is a sorted list of disjoint, non-adjacent intervals:
// how status.completedIndexes spells a set of indexes ("1,3-5").
type orderedIntervals []interval

// parseIndexes reads status.completedIndexes, keeping indexes below
// completions; malformed parts are skipped.
func parseIndexes(s string, completions int32) orderedIntervals {
	var set []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, found := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if found {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := first; i <= last && i < int(completions); i++ {
			set = append(set, i)
		}
	}
	return orderedIntervals(nil).with(set)
}

// with returns the intervals with more indexes added.
func (oi orderedIntervals) with(indexes []int) orderedIntervals {
	all := map[int]bool{}
	for _, iv := range oi {
		for i := iv.first; i <= iv.last; i++ {
			all[i] = true
		}
	}
	for _, i := range indexes {
		all[i] = true
	}
	sorted := make([]int, 0, len(all))
	for i := range all {
		sorted = append(sorted, i)
	}
	sort.Ints(sorted)
	var out orderedIntervals
	for _, i := range sorted {
		if n := len(out); n > 0 && out[n-1].last+1 == i {
			out[n-1].last = i
			continue
		}
		out = append(out, interval{i, i})
	}
	return out
}

func (oi orderedIntervals) has(i int) bool {
	for _, iv := range oi {
		if i >= iv.first && i <= iv.last {
			return true
		}
	}
	return false
}

func (oi orderedIntervals) total() int {
	n := 0
	for _, iv := range oi {
		n += iv.last - iv.first + 1
	}
	return n
}

// String is upstream's spelling: "3", "3,4" (two in a row), "3-5".
func (oi orderedIntervals) String() string {
	parts := make([]string, len(oi))
	for i, iv := range oi {
		switch iv.last - iv.first {
		case 0:
			parts[i] = strconv.Itoa(iv.first)
		case 1:
			parts[i] = fmt.Sprintf("%d,%d", iv.first, iv.last)
		default:
			parts[i] = fmt.Sprintf("%d-%d", iv.first, iv.last)
		}
	}
	return strings.Join(parts, ",")
}

// calculateSucceededIndexes returns the indexes counted in the status and
// those plus the indexes of succeeded pods not counted yet.
func calculateSucceededIndexes(j *batchv1.Job, pods []*corev1.Pod) (prev, cur orderedIntervals) {
	prev = parseIndexes(j.Status.CompletedIndexes, *j.Spec.Completions)
	var fresh []int
	for _, p := range pods {
		if ix, ok := validIndex(p, *j.Spec.Completions); ok && p.Status.Phase == corev1.PodSucceeded && hasJobTrackingFinalizer(p) {
			fresh = append(fresh, ix)
		}
	}
	return prev, prev.with(fresh)
}

// firstPendingIndexes returns up to n indexes that neither succeeded nor
// have an active pod, smallest first.
func firstPendingIndexes(jc *syncJobCtx, n int, completions int32) []int {
	busy := map[int]bool{}
	for _, p := range jc.activePods {
		if ix, ok := validIndex(p, completions); ok {
			busy[ix] = true
		}
	}
	var out []int
	for i := 0; i < int(completions) && len(out) < n; i++ {
		if !busy[i] && !jc.succeededIndexes.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// duplicatedIndexPodsForRemoval returns the active pods without a valid
// index, those of an index that already succeeded, and all but the best
// (per the deletion order, the last) of each index that has several.
func duplicatedIndexPodsForRemoval(pods []*corev1.Pod, completions int32, succeeded orderedIntervals) []*corev1.Pod {
	var rm []*corev1.Pod
	byIndex := map[int][]*corev1.Pod{}
	for _, p := range pods {
		ix, ok := validIndex(p, completions)
		if !ok || succeeded.has(ix) {
			rm = append(rm, p)
			continue
		}
		byIndex[ix] = append(byIndex[ix], p)
	}
	for _, ps := range byIndex {
		if len(ps) < 2 {
			continue
		}
		sort.Sort(controller.ActivePodsWithRanks{Pods: ps, Rank: make([]int, len(ps))})
		rm = append(rm, ps[:len(ps)-1]...)
	}
	return rm
}

// indexedTemplate is the pod template of one index: the annotation and
// label, the JOB_COMPLETION_INDEX variable, and the hostname <job>-<index>.
func indexedTemplate(j *batchv1.Job, template *corev1.PodTemplateSpec, ix int) *corev1.PodTemplateSpec {
	t := template.DeepCopy()
	v := strconv.Itoa(ix)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[batchv1.JobCompletionIndexAnnotation] = v
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[batchv1.JobCompletionIndexAnnotation] = v
	env := corev1.EnvVar{Name: completionIndexEnvName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)}}}
	for _, cs := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for i := range cs {
			has := false
			for _, e := range cs[i].Env {
				has = has || e.Name == completionIndexEnvName
			}
			if !has {
				cs[i].Env = append(cs[i].Env, env)
			}
		}
	}
	t.Spec.Hostname = fmt.Sprintf("%s-%d", j.Name, ix)
	return t
}
