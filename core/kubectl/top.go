package kubectl

import (
	"errors"
	"fmt"
	"net/url"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/spf13/cobra"
)

// newTopCommand is `kubectl top nodes|pods` (upstream pkg/cmd/top): read the
// resource metrics API, metrics.k8s.io. Upstream metrics-server collects
// the kubelets' usage and serves that API; in kubetab the kubelets' samples
// of their containers (CPU time and memory of each wasm guest) are served
// by the API server itself.
func (s *session) newTopCommand() *cobra.Command {
	top := &cobra.Command{
		Use:   "top",
		Short: "Display resource (CPU/memory) usage",
		Long: `Display resource (CPU/memory) usage.

 The top command allows you to see the resource consumption for nodes or pods.

 This command requires the Metrics API to be available on the server.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	top.AddCommand(s.newTopNodeCommand(), s.newTopPodCommand())
	return top
}

const metricsPath = "/apis/metrics.k8s.io/v1beta1"

var errNoMetrics = errors.New("Metrics API not available")

func (s *session) getMetrics(path string, q url.Values, out any) error {
	err := s.client.into(s.ctx, request{method: "GET", path: metricsPath + path, query: q}, out)
	if apierrors.IsNotFound(err) && q != nil {
		return err // a named object that does not exist
	}
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok && !apierrors.IsNotFound(err) {
			return err
		}
		return errNoMetrics
	}
	return nil
}

func (s *session) newTopNodeCommand() *cobra.Command {
	var selector, sortBy string
	var noHeaders bool
	cmd := &cobra.Command{
		Use:     "node [NAME | -l label]",
		Aliases: []string{"nodes", "no"},
		Short:   "Display resource (CPU/memory) usage of nodes",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "only one NAME may be given")
			}
			var items []metricsv1beta1.NodeMetrics
			if len(args) == 1 {
				var m metricsv1beta1.NodeMetrics
				if err := s.getMetrics("/nodes/"+args[0], url.Values{}, &m); err != nil {
					return err
				}
				items = append(items, m)
			} else {
				var list metricsv1beta1.NodeMetricsList
				if err := s.getMetrics("/nodes", listQuery(selector, ""), &list); err != nil {
					return err
				}
				items = list.Items
			}
			if len(items) == 0 {
				return errors.New("metrics not available yet")
			}
			var nodes corev1.NodeList
			if err := s.client.into(s.ctx, request{method: "GET", path: "/api/v1/nodes"}, &nodes); err != nil {
				return err
			}
			alloc := map[string]corev1.ResourceList{}
			for _, n := range nodes.Items {
				alloc[n.Name] = n.Status.Allocatable
			}
			sortMetrics(items, sortBy, func(m metricsv1beta1.NodeMetrics) corev1.ResourceList { return m.Usage }, func(m metricsv1beta1.NodeMetrics) string { return m.Name })
			w := newTabWriter(s.out())
			if !noHeaders {
				fmt.Fprintln(w, "NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\t")
			}
			for _, m := range items {
				a := alloc[m.Name]
				cpu, mem := m.Usage[corev1.ResourceCPU], m.Usage[corev1.ResourceMemory]
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", m.Name, milli(cpu), percent(cpu.MilliValue(), a.Cpu().MilliValue()),
					mebi(mem), percent(mem.Value(), a.Memory().Value()))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on")
	cmd.Flags().StringVar(&sortBy, "sort-by", "", "If non-empty, sort nodes list using specified field. The field can be either 'cpu' or 'memory'.")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "If present, print output without headers")
	return cmd
}

func (s *session) newTopPodCommand() *cobra.Command {
	var selector, sortBy string
	var allNamespaces, containers, noHeaders bool
	cmd := &cobra.Command{
		Use:     "pod [NAME | -l label]",
		Aliases: []string{"pods", "po"},
		Short:   "Display resource (CPU/memory) usage of pods",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "only one NAME may be given")
			}
			ns := "/namespaces/" + s.namespace
			if allNamespaces {
				ns = ""
			}
			var items []metricsv1beta1.PodMetrics
			if len(args) == 1 {
				var m metricsv1beta1.PodMetrics
				if err := s.getMetrics("/namespaces/"+s.namespace+"/pods/"+args[0], url.Values{}, &m); err != nil {
					return err
				}
				items = append(items, m)
			} else {
				var list metricsv1beta1.PodMetricsList
				if err := s.getMetrics(ns+"/pods", listQuery(selector, ""), &list); err != nil {
					return err
				}
				items = list.Items
			}
			if len(items) == 0 {
				if allNamespaces {
					fmt.Fprintln(s.errOut(), "No resources found")
				} else {
					fmt.Fprintf(s.errOut(), "No resources found in %s namespace.\n", s.namespace)
				}
				return nil
			}
			sortMetrics(items, sortBy, podUsage, func(m metricsv1beta1.PodMetrics) string { return m.Namespace + "/" + m.Name })
			w := newTabWriter(s.out())
			if !noHeaders {
				if allNamespaces {
					fmt.Fprint(w, "NAMESPACE\t")
				}
				fmt.Fprint(w, "NAME\t")
				if containers {
					fmt.Fprint(w, "NAME\t")
				}
				fmt.Fprintln(w, "CPU(cores)\tMEMORY(bytes)\t")
			}
			for _, m := range items {
				rows := [][2]any{}
				if containers {
					for _, c := range m.Containers {
						rows = append(rows, [2]any{c.Name, c.Usage})
					}
				} else {
					rows = append(rows, [2]any{"", podUsage(m)})
				}
				for _, r := range rows {
					if allNamespaces {
						fmt.Fprintf(w, "%s\t", m.Namespace)
					}
					fmt.Fprintf(w, "%s\t", m.Name)
					if containers {
						fmt.Fprintf(w, "%s\t", r[0])
					}
					u := r[1].(corev1.ResourceList)
					fmt.Fprintf(w, "%s\t%s\t\n", milli(u[corev1.ResourceCPU]), mebi(u[corev1.ResourceMemory]))
				}
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&sortBy, "sort-by", "", "If non-empty, sort pods list using specified field. The field can be either 'cpu' or 'memory'.")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().BoolVar(&containers, "containers", false, "If present, print usage of containers within a pod.")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "If present, print output without headers.")
	return cmd
}

// podUsage sums a pod's containers.
func podUsage(m metricsv1beta1.PodMetrics) corev1.ResourceList {
	cpu, mem := resource.Quantity{}, resource.Quantity{}
	for _, c := range m.Containers {
		cpu.Add(c.Usage[corev1.ResourceCPU])
		mem.Add(c.Usage[corev1.ResourceMemory])
	}
	return corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
}

// sortMetrics sorts by usage, highest first (--sort-by cpu|memory), else by name.
func sortMetrics[T any](items []T, by string, usage func(T) corev1.ResourceList, name func(T) string) {
	sort.SliceStable(items, func(i, j int) bool {
		switch by {
		case "cpu":
			a, b := usage(items[i])[corev1.ResourceCPU], usage(items[j])[corev1.ResourceCPU]
			return a.MilliValue() > b.MilliValue()
		case "memory":
			a, b := usage(items[i])[corev1.ResourceMemory], usage(items[j])[corev1.ResourceMemory]
			return a.Value() > b.Value()
		}
		return name(items[i]) < name(items[j])
	})
}

// milli and mebi print usage the way kubectl top does: 12m, 34Mi.
func milli(q resource.Quantity) string { return fmt.Sprintf("%vm", q.MilliValue()) }
func mebi(q resource.Quantity) string  { return fmt.Sprintf("%vMi", q.Value()/(1024*1024)) }

func percent(used, total int64) string {
	if total == 0 {
		return "<unknown>"
	}
	return fmt.Sprintf("%d%%", int64(float64(used)/float64(total)*100))
}
