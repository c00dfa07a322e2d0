package kubectl

import "github.com/spf13/cobra"

func (s *session) newDescribeCommand() *cobra.Command {
	return &cobra.Command{Use: "describe", Short: "Show details of a specific resource or group of resources"}
}
