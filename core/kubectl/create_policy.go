package kubectl

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The generators of `kubectl create serviceaccount`, `create
// poddisruptionbudget` and `create priorityclass` (upstream's
// pkg/cmd/create/create_serviceaccount.go, create_pdb.go and
// create_priorityclass.go): the objects lessons on identity, disruption
// budgets and preemption start from.
var (
	serviceAccountsResource = apiResource{Version: "v1", Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true}
	pdbsResource            = apiResource{Group: "policy", Version: "v1", Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true}
	priorityClassesResource = apiResource{Group: "scheduling.k8s.io", Version: "v1", Name: "priorityclasses", Kind: "PriorityClass"}
)

func (s *session) newCreateServiceAccountCommand() *cobra.Command {
	pf := &printFlags{}
	cmd := &cobra.Command{
		Use:                   "serviceaccount NAME [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"sa"},
		Short:                 "Create a service account with the specified name",
		Long:                  "Create a service account with the specified name.",
		Example: `  # Create a new service account named my-service-account
  kubectl create serviceaccount my-service-account`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			sa := &corev1.ServiceAccount{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
			}
			return s.createGenerated(serviceAccountsResource, sa, pf, func(err error) error { return fmt.Errorf("failed to create serviceaccount: %v", err) })
		},
	}
	pf.add(cmd)
	return cmd
}

// pdbBudget is what --min-available and --max-unavailable accept: a count
// or a percentage, not a quantity such as 10Gb.
var pdbBudget = regexp.MustCompile(`^[0-9]+%?$`)

func (s *session) newCreatePDBCommand() *cobra.Command {
	pf := &printFlags{}
	var minAvailable, maxUnavailable, selector string
	cmd := &cobra.Command{
		Use:                   "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"pdb"},
		Short:                 "Create a pod disruption budget with the specified name",
		Long:                  "Create a pod disruption budget with the specified name, selector, and desired minimum available pods.",
		Example: `  # Create a pod disruption budget named my-pdb that will select all pods with the app=rails label
  # and require at least one of them being available at any point in time
  kubectl create poddisruptionbudget my-pdb --selector=app=rails --min-available=1

  # Create a pod disruption budget named my-pdb that will select all pods with the app=nginx label
  # and require at least half of the pods selected to be available at any point in time
  kubectl create pdb my-pdb --selector=app=nginx --min-available=50%`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			switch {
			case selector == "":
				return errors.New("a selector must be specified")
			case minAvailable == "" && maxUnavailable == "":
				return errors.New("one of min-available or max-unavailable must be specified")
			case minAvailable != "" && maxUnavailable != "":
				return errors.New("min-available and max-unavailable cannot be both specified")
			case minAvailable != "" && !pdbBudget.MatchString(minAvailable):
				return errors.New("invalid format specified for min-available")
			case maxUnavailable != "" && !pdbBudget.MatchString(maxUnavailable):
				return errors.New("invalid format specified for max-unavailable")
			}
			sel, err := metav1.ParseToLabelSelector(selector)
			if err != nil {
				return err
			}
			pdb := &policyv1.PodDisruptionBudget{
				TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
			}
			if minAvailable != "" {
				v := intstr.Parse(minAvailable)
				pdb.Spec.MinAvailable = &v
			} else {
				v := intstr.Parse(maxUnavailable)
				pdb.Spec.MaxUnavailable = &v
			}
			return s.createGenerated(pdbsResource, pdb, pf, func(err error) error { return fmt.Errorf("failed to create poddisruptionbudgets: %v", err) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&minAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
	f.StringVar(&maxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
	f.StringVar(&selector, "selector", "", "A label selector to use for this budget. Only equality-based selector requirements are supported.")
	pf.add(cmd)
	return cmd
}

func (s *session) newCreatePriorityClassCommand() *cobra.Command {
	pf := &printFlags{}
	var (
		value         int32
		globalDefault bool
		description   string
		preemption    = string(corev1.PreemptLowerPriority)
	)
	cmd := &cobra.Command{
		Use:                   "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"pc"},
		Short:                 "Create a priority class with the specified name",
		Long:                  "Create a priority class with the specified name, value, globalDefault and description.",
		Example: `  # Create a priority class named high-priority
  kubectl create priorityclass high-priority --value=1000 --description="high priority"

  # Create a priority class named default-priority that is considered as the global default priority
  kubectl create priorityclass default-priority --value=1000 --global-default=true --description="default priority"

  # Create a priority class named high-priority that cannot preempt pods with lower priority
  kubectl create priorityclass high-priority --value=1000 --description="high priority" --preemption-policy="Never"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			policy := corev1.PreemptionPolicy(preemption)
			pc := &schedulingv1.PriorityClass{
				TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
				ObjectMeta:       metav1.ObjectMeta{Name: name},
				Value:            value,
				GlobalDefault:    globalDefault,
				Description:      description,
				PreemptionPolicy: &policy,
			}
			return s.createGenerated(priorityClassesResource, pc, pf, func(err error) error { return fmt.Errorf("failed to create priorityclass: %v", err) })
		},
	}
	f := cmd.Flags()
	f.Int32Var(&value, "value", 0, "the value of this priority class.")
	f.BoolVar(&globalDefault, "global-default", false, "global-default specifies whether this PriorityClass should be considered as the default priority.")
	f.StringVar(&description, "description", "", "description is an arbitrary string that usually provides guidelines on when this priority class should be used.")
	f.StringVar(&preemption, "preemption-policy", preemption, "preemption-policy is the policy for preempting pods with lower priority.")
	pf.add(cmd)
	return cmd
}
