package registry

import (
	"context"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pdb(name string, mutate ...func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
	two := intstr.FromInt32(2)
	p := &policyv1.PodDisruptionBudget{ObjectMeta: objMeta(name), Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: &two,
		Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func intOrString(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

// TestPodDisruptionBudgetValidation is upstream's ValidatePodDisruptionBudgetSpec:
// minAvailable xor maxUnavailable, each a non-negative number or a
// percentage of at most 100%, a valid selector, a known
// unhealthyPodEvictionPolicy.
func TestPodDisruptionBudgetValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(*policyv1.PodDisruptionBudget)
		want []string // substrings of the 422's message; none: valid
	}{
		{name: "minAvailable number", spec: func(p *policyv1.PodDisruptionBudget) {}},
		{name: "minAvailable percentage", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = intOrString("50%") }},
		{name: "minAvailable 100%", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = intOrString("100%") }},
		{name: "maxUnavailable 0", spec: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, intOrString("0")
		}},
		{name: "neither (every pod may go)", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = nil }},
		{name: "empty selector selects every pod", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = &metav1.LabelSelector{} }},
		{name: "no selector", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = nil }},
		{name: "AlwaysAllow", spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.AlwaysAllow) }},
		{
			name: "both set",
			spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = intOrString("1") },
			want: []string{`PodDisruptionBudget.policy "budget" is invalid: spec: Invalid value: {"MinAvailable":2,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`},
		},
		{
			name: "negative minAvailable",
			spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = intOrString("-1") },
			want: []string{"spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"},
		},
		{
			name: "minAvailable over 100%",
			spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = intOrString("101%") },
			want: []string{`spec.minAvailable: Invalid value: "101%": must not be greater than 100%`},
		},
		{
			name: "maxUnavailable not a percentage",
			spec: func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, intOrString("half")
			},
			want: []string{`spec.maxUnavailable: Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`},
		},
		{
			name: "bad selector operator",
			spec: func(p *policyv1.PodDisruptionBudget) {
				p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"a"}}}}
			},
			want: []string{`spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
		},
		{
			name: "bad selector value",
			spec: func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector.MatchLabels = map[string]string{"app": "a b"} },
			want: []string{`spec.selector.matchLabels: Invalid value: "a b"`},
		},
		{
			name: "unknown unhealthyPodEvictionPolicy",
			spec: func(p *policyv1.PodDisruptionBudget) {
				p.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.UnhealthyPodEvictionPolicyType("Never"))
			},
			want: []string{`spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"`},
		},
		{
			name: "name is a path segment only",
			spec: func(p *policyv1.PodDisruptionBudget) { p.Name = "a/b" },
			want: []string{`metadata.name: Invalid value: "a/b": may not contain '/'`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			obj := pdb("budget", tc.spec)
			_, err := create(t, reg, obj)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("created; want 422")
			}
			wantStatus(t, err, 422, tc.want...)
			if n := reg.KV().Count("/registry/poddisruptionbudgets/"); n != 0 {
				t.Errorf("%d budgets stored after a failed create", n)
			}
		})
	}
}

// A budget's status is the controller's: a create clears it, an update of
// the main resource keeps it and bumps the generation only when the spec
// changes; the status subresource keeps the spec and refuses negative
// counts.
func TestPodDisruptionBudgetStatusSubresource(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	st := storeOf(t, reg, "policy", "poddisruptionbudgets")
	in := pdb("budget")
	in.Status.DisruptionsAllowed = 5
	created := mustCreate(t, reg, in)
	if created.Status.DisruptionsAllowed != 0 || created.Generation != 1 {
		t.Fatalf("created: status %+v generation %d; want a cleared status, generation 1", created.Status, created.Generation)
	}

	s := created.DeepCopy()
	s.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3, ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
			LastTransitionTime: metav1.NewTime(testNow), ObservedGeneration: 1}}}
	s.Spec.MinAvailable = intOrString("1") // ignored by a status update
	out, err := st.Update(ctx, s, UpdateOptions{Subresource: "status"})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*policyv1.PodDisruptionBudget)
	if got.Status.DisruptionsAllowed != 1 || got.Spec.MinAvailable.IntValue() != 2 || got.Generation != 1 {
		t.Fatalf("after status update: %+v", got)
	}

	// The main resource: status kept, generation bumped by a spec change only.
	m := got.DeepCopy()
	m.Status = policyv1.PodDisruptionBudgetStatus{}
	m.Labels = map[string]string{"team": "a"}
	out, err = st.Update(ctx, m, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget); got.Status.DisruptionsAllowed != 1 || got.Generation != 1 {
		t.Fatalf("after a label change: status %+v generation %d", got.Status, got.Generation)
	}
	m = out.(*policyv1.PodDisruptionBudget).DeepCopy()
	m.Spec.MinAvailable = intOrString("50%")
	out, err = st.Update(ctx, m, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget); got.Generation != 2 || got.Status.ObservedGeneration != 1 {
		t.Fatalf("after a spec change: generation %d observedGeneration %d; want 2 and 1", got.Generation, got.Status.ObservedGeneration)
	}

	for _, tc := range []struct {
		name   string
		mutate func(*policyv1.PodDisruptionBudgetStatus)
		want   string
	}{
		{"negative disruptionsAllowed", func(s *policyv1.PodDisruptionBudgetStatus) { s.DisruptionsAllowed = -1 },
			"status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"},
		{"negative expectedPods", func(s *policyv1.PodDisruptionBudgetStatus) { s.ExpectedPods = -2 },
			"status.expectedPods: Invalid value: -2: must be greater than or equal to 0"},
		{"condition without reason", func(s *policyv1.PodDisruptionBudgetStatus) { s.Conditions[0].Reason = "" },
			"status.conditions[0].reason: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur, err := st.Get(ctx, "default", "budget")
			if err != nil {
				t.Fatal(err)
			}
			b := cur.(*policyv1.PodDisruptionBudget)
			tc.mutate(&b.Status)
			_, err = st.Update(ctx, b, UpdateOptions{Subresource: "status"})
			if err == nil {
				t.Fatal("status update accepted")
			}
			wantStatus(t, err, 422, tc.want)
		})
	}
}
