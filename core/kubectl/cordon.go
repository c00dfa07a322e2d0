package kubectl

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// newCordonCommand is `kubectl cordon` and `kubectl uncordon` (upstream
// pkg/cmd/drain): set or clear a node's spec.unschedulable with a strategic
// merge patch. The scheduler's NodeUnschedulable filter then keeps new pods
// off a cordoned node; pods already there keep running.
func (s *session) newCordonCommand(desired bool) *cobra.Command {
	verb, short := "cordon", "Mark node as unschedulable"
	if !desired {
		verb, short = "uncordon", "Mark node as schedulable"
	}
	var sel selection
	var dryRunFlag string
	cmd := &cobra.Command{
		Use:                   verb + " NODE",
		DisableFlagsInUseLine: true,
		Short:                 short,
		Long:                  short + ".",
		Example:               fmt.Sprintf("  # Mark node \"node-1\" as %s\n  kubectl %s node-1", map[bool]string{true: "unschedulable", false: "schedulable"}[desired], verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			dr, err := parseDryRun(dryRunFlag)
			if err != nil {
				return err
			}
			if len(args) == 0 && sel.labelSelector == "" {
				return usageErrorf(cmd, "USAGE: %s NODE [flags]", verb)
			}
			if len(args) > 0 && sel.labelSelector != "" {
				return errors.New("error: cannot specify both a node name and a --selector option")
			}
			typed := []string{"nodes"}
			typed = append(typed, args...)
			objs, selErr := s.selectObjects(verb, &sel, typed)
			if selErr != nil && objs == nil {
				return selErr
			}
			for _, n := range objs {
				unschedulable, _ := nestedMap(n.obj, "spec")["unschedulable"].(bool)
				if unschedulable == desired {
					fmt.Fprintf(s.out(), "node/%s already %sed%s\n", n.name, verb, dr.suffix())
					continue
				}
				patch := `{"spec":{"unschedulable":true}}`
				if !desired {
					patch = `{"spec":{"unschedulable":null}}`
				}
				if dr != "client" {
					if _, err := s.patchObject(n.res, "", n.name, "", "application/strategic-merge-patch+json", []byte(patch), dr, "kubectl-cordon"); err != nil {
						fmt.Fprintf(s.errOut(), "error: unable to %s node %q: %v\n", verb, n.name, err)
						continue
					}
				}
				fmt.Fprintf(s.out(), "node/%s %sed%s\n", n.name, verb, dr.suffix())
			}
			return selErr
		},
	}
	sel.addFlags(cmd, "", "l")
	cmd.Flags().StringVar(&dryRunFlag, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	return cmd
}
