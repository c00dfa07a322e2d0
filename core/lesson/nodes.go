package lesson

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetab/kubetab/core/cluster"
)

// Node defaults, as the cluster's own (cluster.Config).
const (
	DefaultNodeCPU    = "4"
	DefaultNodeMemory = cluster.DefaultNodeMemory
)

// NodeSpecs turns a lesson's nodes into the cluster's node specs. Empty
// nodes give nil: the cluster's usual three. A node's cpu and memory are
// quantities ("500m", "2", "4Gi"); its labels are checked the way the API
// server checks metadata.labels; its taints are key=value:Effect or
// key:Effect, parsed and checked the way the kubelet's
// --register-with-taints and kubectl taint do (upstream
// pkg/util/taints.ParseTaints), with their messages.
func NodeSpecs(nodes []Node) ([]cluster.NodeSpec, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	specs := make([]cluster.NodeSpec, 0, len(nodes))
	seen := map[string]bool{}
	for i, n := range nodes {
		spec, err := nodeSpec(n)
		if err != nil {
			return nil, fmt.Errorf("nodes[%d]: %w", i, err)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("nodes[%d]: node %q is defined twice", i, n.Name)
		}
		seen[n.Name] = true
		specs = append(specs, spec)
	}
	return specs, nil
}

func nodeSpec(n Node) (cluster.NodeSpec, error) {
	spec := cluster.NodeSpec{Name: n.Name}
	if n.Name == "" {
		return spec, fmt.Errorf("name is required")
	}
	if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
		return spec, fmt.Errorf("name: Invalid value: %q: %s", n.Name, strings.Join(errs, "; "))
	}
	var err error
	if spec.CPU, err = quantity("cpu", n.CPU, DefaultNodeCPU); err != nil {
		return spec, err
	}
	if spec.Memory, err = quantity("memory", n.Memory, DefaultNodeMemory); err != nil {
		return spec, err
	}
	if len(n.Labels) > 0 {
		if errs := metav1validation.ValidateLabels(n.Labels, field.NewPath("labels")); len(errs) > 0 {
			return spec, errs.ToAggregate()
		}
		spec.Labels = make(map[string]string, len(n.Labels))
		for k, v := range n.Labels {
			spec.Labels[k] = v
		}
	}
	if spec.Taints, err = parseTaints(n.Taints); err != nil {
		return spec, fmt.Errorf("taints: %w", err)
	}
	return spec, nil
}

func quantity(field, s, def string) (resource.Quantity, error) {
	if s == "" {
		s = def
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("%s: Invalid value: %q: %v", field, s, err)
	}
	if q.Sign() <= 0 {
		return q, fmt.Errorf("%s: Invalid value: %q: must be greater than 0", field, s)
	}
	return q, nil
}

// parseTaints reads taints to add: each must have an effect, and no two may
// share a key and an effect.
func parseTaints(specs []string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	for _, s := range specs {
		t, err := parseTaint(s)
		if err != nil {
			return nil, err
		}
		if t.Effect == "" {
			return nil, fmt.Errorf("invalid taint spec: %v", s)
		}
		for _, prev := range taints {
			if prev.Key == t.Key && prev.Effect == t.Effect {
				return nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t.ToString())
			}
		}
		taints = append(taints, t)
	}
	return taints, nil
}

// parseTaint reads key=value:Effect, key:Effect or key.
func parseTaint(s string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		t.Effect = corev1.TaintEffect(parts[1])
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return t, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.Effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", s)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return t, fmt.Errorf("invalid taint spec: %v, %s", s, strings.Join(errs, "; "))
			}
		}
	default:
		return t, fmt.Errorf("invalid taint spec: %v", s)
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", s, strings.Join(errs, "; "))
	}
	return t, nil
}
