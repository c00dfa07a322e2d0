package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/clusterroleaggregation"
	"github.com/kubetab/kubetab/core/controller/cronjob"
	"github.com/kubetab/kubetab/core/controller/daemon"
	"github.com/kubetab/kubetab/core/controller/deployment"
	"github.com/kubetab/kubetab/core/controller/disruption"
	"github.com/kubetab/kubetab/core/controller/endpoint"
	"github.com/kubetab/kubetab/core/controller/endpointslice"
	"github.com/kubetab/kubetab/core/controller/garbagecollector"
	"github.com/kubetab/kubetab/core/controller/job"
	"github.com/kubetab/kubetab/core/controller/namespace"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle/tainteviction"
	"github.com/kubetab/kubetab/core/controller/podautoscaler"
	"github.com/kubetab/kubetab/core/controller/podgc"
	"github.com/kubetab/kubetab/core/controller/replicaset"
	"github.com/kubetab/kubetab/core/controller/replication"
	"github.com/kubetab/kubetab/core/controller/resourcequota"
	"github.com/kubetab/kubetab/core/controller/rootcacertpublisher"
	"github.com/kubetab/kubetab/core/controller/serviceaccount"
	"github.com/kubetab/kubetab/core/controller/statefulset"
)

// controller is what the controller manager needs of a controller: Run
// until ctx is done, and say when its caches hold their first lists.
type controller interface {
	Run(ctx context.Context) error
	HasSynced() bool
}

// controllerDescriptor is one controller of kube-controller-manager: its
// name (as --controllers knows it) and how to build it from its client
// (user agent: the controller's component name) and the cluster's clock.
// Upstream: cmd/kube-controller-manager/app/controller_descriptor.go and
// the table in NewControllerDescriptors.
type controllerDescriptor struct {
	name string
	// agent is the user agent (and event source) of the controller's client.
	agent string
	// serviceAccount is the ServiceAccount in kube-system the controller
	// acts as (upstream: the name it asks its client builder for), bound
	// to the ClusterRole system:controller:<serviceAccount>; empty is the
	// controller manager's own identity.
	serviceAccount string
	new            func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error)
}

// controllerDescriptors is kube-controller-manager's table, the controllers
// kubetab runs, in start order.
var controllerDescriptors = []controllerDescriptor{
	{"deployment-controller", "deployment-controller", "deployment-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return deployment.New(deployment.Config{Client: c, Clock: clk})
	}},
	{"replicaset-controller", replicaset.Component, "replicaset-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return replicaset.New(replicaset.Config{Client: c, Clock: clk})
	}},
	{"garbage-collector-controller", "generic-garbage-collector", "generic-garbage-collector", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return garbagecollector.New(garbagecollector.Config{Client: c, Clock: clk})
	}},
	{"namespace-controller", namespace.Component, "namespace-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return namespace.New(namespace.Config{Client: c, Clock: clk})
	}},
	{"node-lifecycle-controller", nodelifecycle.Component, "node-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return nodelifecycle.New(nodelifecycle.Config{Client: c, Clock: clk})
	}},
	{"taint-eviction-controller", tainteviction.Component, "node-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return tainteviction.New(tainteviction.Config{Client: c, Clock: clk})
	}},
	{"job-controller", job.Component, "job-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return job.New(job.Config{Client: c, Clock: clk})
	}},
	{"cronjob-controller", cronjob.Component, "cronjob-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return cronjob.New(cronjob.Config{Client: c, Clock: clk})
	}},
	{"endpoints-controller", endpoint.Component, "endpoint-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return endpoint.New(endpoint.Config{Client: c, Clock: clk})
	}},
	{"endpointslice-controller", endpointslice.Component, "endpointslice-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return endpointslice.New(endpointslice.Config{Client: c, Clock: clk})
	}},
	{"disruption-controller", disruption.Component, "disruption-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return disruption.New(disruption.Config{Client: c, Clock: clk})
	}},
	{"pod-garbage-collector-controller", podgc.Component, "pod-garbage-collector", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return podgc.New(podgc.Config{Client: c, Clock: clk})
	}},
	{"root-ca-certificate-publisher-controller", rootcacertpublisher.Component, "root-ca-cert-publisher", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return rootcacertpublisher.New(rootcacertpublisher.Config{Client: c, Clock: clk})
	}},
	{"serviceaccount-controller", serviceaccount.Component, "service-account-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return serviceaccount.New(serviceaccount.Config{Client: c, Clock: clk})
	}},
	{"serviceaccount-token-controller", serviceaccount.TokensComponent, "", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return serviceaccount.NewTokens(serviceaccount.TokensConfig{Client: c, Clock: clk})
	}},
	{"clusterrole-aggregation-controller", clusterroleaggregation.Component, "clusterrole-aggregation-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return clusterroleaggregation.New(clusterroleaggregation.Config{Client: c, Clock: clk})
	}},
	{"daemonset-controller", daemon.Component, "daemon-set-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return daemon.New(daemon.Config{Client: c, Clock: clk})
	}},
	{"statefulset-controller", statefulset.Component, "statefulset-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return statefulset.New(statefulset.Config{Client: c, Clock: clk})
	}},
	{"replicationcontroller-controller", replication.Component, "replication-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return replication.New(replication.Config{Client: c, Clock: clk})
	}},
	{"resourcequota-controller", resourcequota.Component, "resourcequota-controller", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return resourcequota.New(resourcequota.Config{Client: c, Clock: clk})
	}},
	{"horizontal-pod-autoscaler-controller", podautoscaler.Component, "horizontal-pod-autoscaler", func(c *client.Client, clk clock.WithTickerAndDelayedExecution) (controller, error) {
		return podautoscaler.New(podautoscaler.Config{Client: c, Clock: clk})
	}},
}

// newControllers builds every controller of the table; an error names the
// controller that failed. Their informers are views of informers (one list,
// one watch, one cache per resource) that f runs once started, as
// kube-controller-manager's controllers share its SharedInformerFactory.
func (c *Cluster) newControllers(clk clock.WithTickerAndDelayedExecution, f *client.SharedInformerFactory) ([]controller, error) {
	out := make([]controller, 0, len(controllerDescriptors))
	for _, d := range controllerDescriptors {
		ctl, err := d.new(c.controllerClient(d.agent, d.serviceAccount).WithSharedInformers(f), clk)
		if err != nil {
			return nil, fmt.Errorf("error starting %q: %w", d.name, err)
		}
		// --horizontal-pod-autoscaler-downscale-stabilization
		if s, ok := ctl.(interface{ SetDownscaleStabilization(time.Duration) }); ok && c.cfg.HPADownscaleStabilization > 0 {
			s.SetDownscaleStabilization(c.cfg.HPADownscaleStabilization)
		}
		out = append(out, ctl)
	}
	return out, nil
}
