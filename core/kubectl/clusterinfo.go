package kubectl

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (s *session) newClusterInfoCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cluster-info",
		Short: "Display cluster information",
		Long:  "Display addresses of the control plane and services with label kubernetes.io/cluster-service=true.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var v metav1.APIVersions
			if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/api"}, &v); err != nil {
				return err
			}
			fmt.Fprintf(s.out(), "Kubernetes control plane is running at %s\n", s.cli.server.String())
			fmt.Fprint(s.out(), "\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n")
			return nil
		},
	}
}
