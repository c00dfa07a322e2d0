package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The LimitRanger and ResourceQuota admission plugins
// (plugin/pkg/admission/limitranger, and
// k8s.io/apiserver/pkg/admission/plugin/resourcequota with the evaluators
// of quota_evaluator.go). Both are on in kube-apiserver by default;
// ResourceQuota runs last of all, so it charges the object as it will be
// stored.
//
//	kubectl run p ──▶ LimitRanger (mutating): requests and limits a
//	                  container left out come from the namespace's
//	                  LimitRanges; then min, max and maxLimitRequestRatio
//	                  are checked ("maximum cpu usage per Container is 1,
//	                  but limit is 2")
//	              ──▶ validation ──▶ ResourceQuota (validating): for each
//	                  quota of the namespace that tracks what the pod costs,
//	                  used + cost <= hard, or 403 "exceeded quota: ...";
//	                  then status.used += cost is written to the quota
//	                  (compare-and-swap; a conflict recounts), before the
//	                  pod itself is stored.

// limitRangerAnnotation records what LimitRanger set.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// admitLimitRanger is LimitRanger's admit and validate for new pods. Pod
// updates are left alone: a container's resources cannot change then.
func (r *Registry) admitLimitRanger(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	if op != Create || res.Group != "" || res.Resource != "pods" {
		return nil
	}
	lrs, ok := r.Lookup(schema.GroupResource{Resource: "limitranges"})
	if !ok {
		return nil
	}
	pod := obj.(*corev1.Pod)
	items, err := lrs.listShared(pod.Namespace)
	if err != nil || len(items) == 0 {
		return err
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].(*corev1.LimitRange).Name < items[j].(*corev1.LimitRange).Name
	})
	// kube-apiserver has defaulted the pod when it decoded it, so a limit
	// without a request already has its request; do the same here first.
	defaultPod(pod)
	for _, it := range items {
		if err := limitPod(it.(*corev1.LimitRange), pod); err != nil {
			return apierrors.NewForbidden(res.GroupResource(), pod.Name, err)
		}
	}
	return nil
}

// limitPod is upstream's PodLimitFunc: merge the Container defaults into
// every container, then enforce the Container and Pod limits.
func limitPod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	defLimits, defRequests := corev1.ResourceList{}, corev1.ResourceList{}
	for _, l := range lr.Spec.Limits {
		if l.Type == corev1.LimitTypeContainer {
			for k, v := range l.DefaultRequest {
				defRequests[k] = v.DeepCopy()
			}
			for k, v := range l.Default {
				defLimits[k] = v.DeepCopy()
			}
		}
	}
	var notes []string
	merge := func(c *corev1.Container) {
		var setReq, setLim []string
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		for k, v := range defLimits {
			if _, ok := c.Resources.Limits[k]; !ok {
				c.Resources.Limits[k] = v.DeepCopy()
				setLim = append(setLim, string(k))
			}
		}
		for k, v := range defRequests {
			if _, ok := c.Resources.Requests[k]; !ok {
				c.Resources.Requests[k] = v.DeepCopy()
				setReq = append(setReq, string(k))
			}
		}
		if len(setReq) > 0 {
			sort.Strings(setReq)
			notes = append(notes, strings.Join(setReq, ", ")+" request for container "+c.Name)
		}
		if len(setLim) > 0 {
			sort.Strings(setLim)
			notes = append(notes, strings.Join(setLim, ", ")+" limit for container "+c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		merge(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		merge(&pod.Spec.InitContainers[i])
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}

	var errs []error
	check := func(l corev1.LimitRangeItem, requests, limits corev1.ResourceList) {
		typ := string(l.Type)
		for _, k := range sortedNames(l.Min) {
			if err := minConstraint(typ, string(k), l.Min[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(l.Max) {
			if err := maxConstraint(typ, string(k), l.Max[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(l.MaxLimitRequestRatio) {
			if err := ratioConstraint(typ, string(k), l.MaxLimitRequestRatio[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, l := range lr.Spec.Limits {
		switch l.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					check(l, cs[i].Resources.Requests, cs[i].Resources.Limits)
				}
			}
		case corev1.LimitTypePod:
			requests, limits := PodRequestsAndLimits(pod)
			// A pod has a limit only if every container has one.
			for k := range limits {
				for _, c := range pod.Spec.Containers {
					if _, ok := c.Resources.Limits[k]; !ok {
						delete(limits, k)
					}
				}
			}
			check(l, requests, limits)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// comparable is upstream's requestLimitEnforcedValues: milli-units when
// nothing overflows, units otherwise.
func comparable(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := comparable(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := comparable(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(typ, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, _ := comparable(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown, max := observed, float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed, max = observed*1000, float64(enforced.MilliValue())
	}
	if observed > max {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), shown)
	}
	return nil
}

// quotaIgnored are the resources the quota plugin never counts
// (upstream's default ignoredResources, and kubetab's own read-only views).
func quotaIgnored(gr schema.GroupResource) bool {
	return gr.Resource == "events" || strings.HasSuffix(gr.Group, "kubetab.dev")
}

type dryRunKey struct{}

// withDryRun marks ctx as a dry run's, for admission plugins that write
// elsewhere (a quota's charge): they check, but change nothing.
func withDryRun(ctx context.Context, dry bool) context.Context {
	if !dry {
		return ctx
	}
	return context.WithValue(ctx, dryRunKey{}, true)
}

func isDryRun(ctx context.Context) bool { return ctx.Value(dryRunKey{}) != nil }

// admitResourceQuota is the ResourceQuota plugin's Validate.
func (r *Registry) admitResourceQuota(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	// Subresource writes (status, eviction) change no cost: upstream's
	// plugin ignores them.
	if op == Delete || !res.Namespaced || quotaIgnored(res.GroupResource()) || SubresourceOf(ctx) != "" {
		return nil
	}
	ev := QuotaEvaluatorFor(res.GroupResource())
	if op == Update && !ev.OnUpdate {
		return nil
	}
	quotas, ok := r.Lookup(schema.GroupResource{Resource: "resourcequotas"})
	if !ok {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	// A write conflicts when another admission charged the same quota in
	// between: recount from the new status, as upstream retries.
	for attempt := 0; attempt < 3; attempt++ {
		items, err := quotas.listShared(acc.GetNamespace())
		if err != nil || len(items) == 0 {
			return err
		}
		sort.Slice(items, func(i, j int) bool {
			return items[i].(*corev1.ResourceQuota).Name < items[j].(*corev1.ResourceQuota).Name
		})
		charged, err := checkQuotas(items, ev, res, acc.GetName(), op, obj, old, r.clock.Now())
		if err != nil || len(charged) == 0 || isDryRun(ctx) {
			return err
		}
		conflict := false
		for _, q := range charged {
			if _, err := quotas.Update(ctx, q, UpdateOptions{Subresource: "status"}); err != nil {
				if apierrors.IsConflict(err) {
					conflict = true
					break
				}
				return err
			}
		}
		if !conflict {
			return nil
		}
	}
	return apierrors.NewConflict(schema.GroupResource{Resource: "resourcequotas"}, "",
		fmt.Errorf("the quota of namespace %s changed while admitting %s %q; try again", acc.GetNamespace(), res.Resource, acc.GetName()))
}

// checkQuotas is upstream's CheckRequest: the quotas that charge the object,
// with status.used raised by its cost, or the error that refuses it.
func checkQuotas(items []runtime.Object, ev *QuotaEvaluator, res *Resource, name string, op Operation, obj, old runtime.Object, now time.Time) ([]*corev1.ResourceQuota, error) {
	forbidden := func(err error) error { return apierrors.NewForbidden(res.GroupResource(), name, err) }
	var matched []*corev1.ResourceQuota
	for _, it := range items {
		q := it.(*corev1.ResourceQuota)
		if !QuotaMatches(q, ev, obj) {
			continue
		}
		tracked := ev.Matching(q.Status.Hard)
		if err := quotaConstraints(ev, tracked, obj); err != nil {
			return nil, forbidden(fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		var missing []string
		for _, n := range tracked {
			if _, ok := q.Status.Used[n]; !ok {
				missing = append(missing, string(n))
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, forbidden(fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, strings.Join(missing, ",")))
		}
		matched = append(matched, q)
	}
	if len(matched) == 0 {
		return nil, nil
	}
	cost := ev.Usage(obj, now)
	var negative []string
	for k, v := range cost {
		if v.Sign() < 0 {
			negative = append(negative, string(k))
		}
	}
	if len(negative) > 0 {
		sort.Strings(negative)
		return nil, forbidden(fmt.Errorf("quota usage is negative for resource(s): %s", strings.Join(negative, ",")))
	}
	var out []*corev1.ResourceQuota
	for _, q := range matched {
		delta := cost
		if op == Update && old != nil && QuotaMatches(q, ev, old) {
			delta = subtractNonNegative(cost, ev.Usage(old, now))
		}
		requested := corev1.ResourceList{}
		for k, v := range delta {
			if _, tracked := q.Status.Hard[k]; tracked && !v.IsZero() {
				requested[k] = v
			}
		}
		if len(requested) == 0 {
			continue
		}
		used := corev1.ResourceList{}
		for k, v := range q.Status.Used {
			used[k] = v.DeepCopy()
		}
		var exceeded []corev1.ResourceName
		for k, v := range requested {
			n := used[k]
			n.Add(v)
			used[k] = n
			if n.Cmp(q.Status.Hard[k]) > 0 {
				exceeded = append(exceeded, k)
			}
		}
		if len(exceeded) > 0 {
			mask := func(l corev1.ResourceList) corev1.ResourceList {
				m := corev1.ResourceList{}
				for _, k := range exceeded {
					if v, ok := l[k]; ok {
						m[k] = v
					}
				}
				return m
			}
			return nil, forbidden(fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name, prettyResources(mask(requested)), prettyResources(mask(q.Status.Used)), prettyResources(mask(q.Status.Hard))))
		}
		nq := q.DeepCopy()
		nq.Status.Used = used
		out = append(out, nq)
	}
	return out, nil
}

// quotaConstraints is the pod evaluator's Constraints: a quota that tracks
// cpu or memory requires every container to say how much it requests or
// may use of it ("must specify limits.cpu for: web").
func quotaConstraints(ev *QuotaEvaluator, tracked []corev1.ResourceName, obj runtime.Object) error {
	if !ev.Scoped {
		return nil
	}
	pod := obj.(*corev1.Pod)
	required := map[corev1.ResourceName]bool{}
	for _, n := range tracked {
		switch n {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
			corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory:
			required[n] = true
		}
	}
	if len(required) == 0 {
		return nil
	}
	missing := map[corev1.ResourceName][]string{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			has := podComputeUsage(c.Resources.Requests, c.Resources.Limits)
			for n := range required {
				if _, ok := has[n]; !ok && !hasString(missing[n], c.Name) {
					missing[n] = append(missing[n], c.Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var parts []string
	for _, n := range sortedNames(toList(missing)) {
		names := missing[n]
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("%s for: %s", n, strings.Join(names, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(parts, "; "))
}

func toList[V any](m map[corev1.ResourceName]V) corev1.ResourceList {
	l := corev1.ResourceList{}
	for k := range m {
		l[k] = resource.Quantity{}
	}
	return l
}

func subtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		n := v.DeepCopy()
		if o, ok := b[k]; ok {
			n.Sub(o)
		}
		if n.Sign() < 0 {
			n = *resource.NewQuantity(0, resource.DecimalSI)
		}
		out[k] = n
	}
	return out
}

// prettyResources is upstream's prettyPrint: "limits.cpu=2,pods=1", sorted.
func prettyResources(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range sortedNames(l) {
		v := l[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}
