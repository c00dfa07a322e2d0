package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"
)

func (s *session) newVersionCommand() *cobra.Command {
	var (
		client bool
		output string
	)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server version information",
		Long:  "Print the client and server version information for the current context (GET /version).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "yaml" && output != "json" {
				return errors.New(`--output must be 'yaml' or 'json'`)
			}
			var v struct {
				ClientVersion *version.Info `json:"clientVersion,omitempty"`
				ServerVersion *version.Info `json:"serverVersion,omitempty"`
			}
			v.ClientVersion = &version.Info{Major: "1", Minor: "37", GitVersion: Version, GitTreeState: "clean", GoVersion: "go1.26", Compiler: "gc", Platform: "kubetab"}
			var serverErr error
			if !client {
				sv := &version.Info{}
				if serverErr = s.client.into(s.ctx, request{method: http.MethodGet, path: "/version"}, sv); serverErr == nil {
					v.ServerVersion = sv
				}
			}
			switch output {
			case "":
				fmt.Fprintf(s.out(), "Client Version: %s\n", v.ClientVersion.GitVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(s.out(), "Server Version: %s\n", v.ServerVersion.GitVersion)
				}
			case "yaml":
				data, err := yaml.Marshal(&v)
				if err != nil {
					return err
				}
				fmt.Fprintln(s.out(), string(data))
			case "json":
				data, err := json.MarshalIndent(&v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(s.out(), string(data))
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&client, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}
