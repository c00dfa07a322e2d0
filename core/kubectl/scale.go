package kubectl

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
)

func (s *session) newScaleCommand() *cobra.Command {
	var (
		replicas        int
		currentReplicas int
		resourceVersion string
	)
	cmd := &cobra.Command{
		Use:                   "scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Set a new size for a deployment or replica set",
		Long: `Set a new size for a deployment or replica set.

 Scale sends a merge patch {"spec":{"replicas":N}} to the scale subresource (PATCH .../deployments/NAME/scale); the deployment controller does the rest.

 If --current-replicas or --resource-version is specified, it is validated before the scale is attempted, and it is guaranteed that the precondition holds true when the scale is sent to the server.`,
		Example: `  # Scale a deployment named web to 3
  kubectl scale --replicas=3 deployment/web

  # Scale a replica set named web-7d4b9 to 2 if its current size is 3
  kubectl scale --current-replicas=3 --replicas=2 rs/web-7d4b9`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if replicas < 0 {
				return errors.New("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			if currentReplicas < -1 {
				return errors.New("The --current-replicas must specify an integer of -1 or greater")
			}
			if len(args) == 0 {
				return usageErrorf(cmd, "You must provide one or more resources by argument or filename.")
			}
			targets, err := s.parseResourceArgs(args)
			if err != nil {
				return err
			}
			var n int
			for _, t := range targets {
				if len(t.names) == 0 {
					return errors.New("resource(s) were provided, but no name was specified")
				}
				n += len(t.names)
			}
			if resourceVersion != "" && n > 1 {
				return fmt.Errorf("cannot use --resource-version with multiple resources")
			}
			var errs multiError
			for _, t := range targets {
				for _, name := range t.names {
					if err := s.scaleOne(t.res, name, replicas, currentReplicas, resourceVersion); err != nil {
						errs = append(errs, err)
						continue
					}
					fmt.Fprintf(s.out(), "%s/%s scaled\n", t.res.kindName(), name)
				}
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&replicas, "replicas", -1, "The new desired number of replicas. Required.")
	cmd.Flags().IntVar(&currentReplicas, "current-replicas", -1, "Precondition for current size. Requires that the current size of the resource match this value in order to scale. -1 (default) for no condition.")
	cmd.Flags().StringVar(&resourceVersion, "resource-version", "", "Precondition for resource version. Requires that the current resource version match this value in order to scale.")
	return cmd
}

// scaleOne is upstream's scaler: check the preconditions on the Scale, then
// PATCH the scale subresource with a JSON merge patch.
func (s *session) scaleOne(res apiResource, name string, replicas, currentReplicas int, resourceVersion string) error {
	ns := s.namespaceFor(res, false)
	path := res.path(ns, name, "scale")
	if currentReplicas != -1 || resourceVersion != "" {
		var sc autoscalingv1.Scale
		if err := s.client.into(s.ctx, request{method: http.MethodGet, path: path}, &sc); err != nil {
			return err
		}
		if currentReplicas != -1 && int(sc.Spec.Replicas) != currentReplicas {
			return fmt.Errorf("Expected replicas to be %d, was %d", currentReplicas, sc.Spec.Replicas)
		}
		if resourceVersion != "" && sc.ResourceVersion != resourceVersion {
			return fmt.Errorf("Expected resource version to be %s, was %s", resourceVersion, sc.ResourceVersion)
		}
	}
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if resourceVersion != "" {
		patch = fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"replicas":%d}}`, resourceVersion, replicas)
	}
	resp, err := s.client.do(s.ctx, request{method: http.MethodPatch, path: path, body: []byte(patch), contentType: "application/merge-patch+json"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
