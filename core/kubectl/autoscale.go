package kubectl

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// `kubectl autoscale` and `kubectl create quota` (upstream's
// pkg/cmd/autoscale/autoscale.go and pkg/cmd/create/create_quota.go). Like
// kubectl v1.32, autoscale writes an autoscaling/v1 HorizontalPodAutoscaler
// (--cpu-percent is its targetCPUUtilizationPercentage); the API server
// stores it as v2, which `kubectl get hpa` reads. The controller that acts
// on it is core/controller/podautoscaler.
var (
	hpasV1Resource = apiResource{Group: "autoscaling", Version: "v1", Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true}
	quotasResource = apiResource{Version: "v1", Name: "resourcequotas", Kind: "ResourceQuota", Namespaced: true}
)

func (s *session) newAutoscaleCommand() *cobra.Command {
	pf := &printFlags{}
	var (
		minPods, maxPods, cpuPercent int32
		name                         string
	)
	cmd := &cobra.Command{
		Use:                   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu-percent=CPU]",
		DisableFlagsInUseLine: true,
		Short:                 "Auto-scale a deployment, replica set, stateful set, or replication controller",
		Long: `Creates an autoscaler that automatically chooses and sets the number of pods that run in a Kubernetes cluster.

 Looks up a deployment, replica set, stateful set, or replication controller by name and creates an autoscaler that uses the given resource as a reference. An autoscaler can automatically increase or decrease number of pods deployed within the system as needed.`,
		Example: `  # Auto scale a deployment "foo", with the number of pods between 2 and 10, no target CPU utilization specified so a default autoscaling policy will be used
  kubectl autoscale deployment foo --min=2 --max=10

  # Auto scale a replication controller "foo", with the number of pods between 1 and 5, target CPU utilization at 80%
  kubectl autoscale rc foo --max=5 --cpu-percent=80`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd, "You must provide one or more resources by argument or filename.")
			}
			if maxPods < 1 {
				return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", maxPods)
			}
			if maxPods < minPods {
				return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", maxPods, minPods)
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			targets, err := s.parseResourceArgs(args)
			if err != nil {
				return err
			}
			for _, t := range targets {
				if len(t.names) == 0 {
					return errors.New("resource(s) were provided, but no name was specified")
				}
				for _, ref := range t.names {
					if !slices.Contains(t.res.Subresources, "scale") {
						return fmt.Errorf("cannot autoscale a %s: could not find scale subresource for %s, Resource=%s in discovery information", t.res.Kind, t.res.GroupVersion().String(), t.res.Name)
					}
					// The target must exist (upstream's builder fetches it).
					ns := s.namespaceFor(t.res, false)
					if err := s.client.into(s.ctx, request{method: http.MethodGet, path: t.res.path(ns, ref, "")}, &map[string]any{}); err != nil {
						return err
					}
					hpa := &autoscalingv1.HorizontalPodAutoscaler{
						TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
						ObjectMeta: metav1.ObjectMeta{Name: ref},
						Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
							ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: t.res.GroupVersion().String(), Kind: t.res.Kind, Name: ref},
							MaxReplicas:    maxPods,
						},
					}
					if name != "" {
						hpa.Name = name
					}
					if minPods > 0 {
						v := minPods
						hpa.Spec.MinReplicas = &v
					}
					if cpuPercent >= 0 {
						v := cpuPercent
						hpa.Spec.TargetCPUUtilizationPercentage = &v
					}
					if s.explicitNamespace() {
						hpa.Namespace = s.namespace
					}
					m, body, err := toMap(hpa)
					if err != nil {
						return err
					}
					out, err := s.create(hpasV1Resource, s.namespace, body, dr)
					if err != nil {
						return err
					}
					if out == nil {
						out = m
					}
					if err := s.printCreated(hpasV1Resource, out, pf.output, "autoscaled"+dr.suffix()); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&minPods, "min", -1, "The lower limit for the number of pods that can be set by the autoscaler. If it's not specified or negative, the server will apply a default value.")
	f.Int32Var(&maxPods, "max", -1, "The upper limit for the number of pods that can be set by the autoscaler. Required.")
	f.Int32Var(&cpuPercent, "cpu-percent", -1, "The target average CPU utilization (represented as a percent of requested CPU) over all the pods. If it's not specified or negative, a default autoscaling policy will be used.")
	f.StringVar(&name, "name", "", "The name for the newly created object. If not specified, the name of the input resource will be used.")
	pf.add(cmd)
	return cmd
}

func (s *session) newCreateQuotaCommand() *cobra.Command {
	pf := &printFlags{}
	var hard, scopes string
	cmd := &cobra.Command{
		Use:                   "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"resourcequota"},
		Short:                 "Create a quota with the specified name",
		Long:                  "Create a resource quota with the specified name, hard limits, and optional scopes.",
		Example: `  # Create a new resource quota named my-quota
  kubectl create quota my-quota --hard=cpu=1,memory=1G,pods=2,services=3,replicationcontrollers=2,resourcequotas=1,secrets=5,persistentvolumeclaims=10

  # Create a new resource quota named best-effort
  kubectl create quota best-effort --hard=pods=100 --scopes=BestEffort`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			list, err := parseResourceList(hard)
			if err != nil {
				return err
			}
			q := &corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       corev1.ResourceQuotaSpec{Hard: list},
			}
			if scopes != "" {
				for _, sc := range strings.Split(scopes, ",") {
					// The API server checks the names, as upstream leaves it to.
					if sc == "" {
						return errors.New(`invalid resource quota scope ""`)
					}
					q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(sc))
				}
			}
			return s.createGenerated(quotasResource, q, pf, func(err error) error { return fmt.Errorf("failed to create quota: %v", err) })
		},
	}
	cmd.Flags().StringVar(&hard, "hard", "", "A comma-delimited set of resource=quantity pairs that define a hard limit.")
	cmd.Flags().StringVar(&scopes, "scopes", "", "A comma-delimited set of quota scopes that must all match each object tracked by the quota.")
	pf.add(cmd)
	return cmd
}

// parseResourceList is upstream's populateResourceListV1: "cpu=1,pods=2".
func parseResourceList(spec string) (corev1.ResourceList, error) {
	if spec == "" {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for _, st := range strings.Split(spec, ",") {
		parts := strings.Split(st, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", st)
		}
		q, err := resource.ParseQuantity(parts[1])
		if err != nil {
			return nil, err
		}
		out[corev1.ResourceName(parts[0])] = q
	}
	return out, nil
}
