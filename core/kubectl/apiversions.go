package kubectl

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newAPIVersionsCommand is `kubectl api-versions` (upstream
// pkg/cmd/apiresources/apiversions.go): every group/version the server
// serves, from GET /api and GET /apis, sorted, one a line.
func (s *session) newAPIVersionsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "api-versions",
		Short: "Print the supported API versions on the server, in the form of \"group/version\"",
		Long:  "Print the supported API versions on the server, in the form of \"group/version\".",
		Example: `  # Print the supported API versions
  kubectl api-versions`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var legacy metav1.APIVersions
			if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/api"}, &legacy); err != nil {
				return fmt.Errorf("couldn't get available api versions from server: %v", err)
			}
			var groups metav1.APIGroupList
			if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/apis"}, &groups); err != nil {
				return fmt.Errorf("couldn't get available api versions from server: %v", err)
			}
			versions := append([]string(nil), legacy.Versions...)
			for _, g := range groups.Groups {
				for _, v := range g.Versions {
					versions = append(versions, v.GroupVersion)
				}
			}
			sort.Strings(versions)
			for _, v := range versions {
				fmt.Fprintln(s.out(), v)
			}
			return nil
		},
	}
}
