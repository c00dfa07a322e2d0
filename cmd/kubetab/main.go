// Command kubetab is the native side of kubetab:
//
//	kubetab serve [--addr 127.0.0.1:8080]   serve the web app (embedded, works offline)
//	kubetab console [-c LINE ...]           the page's console on a fresh cluster, natively
//
// and, from cluster.go, `kubetab cluster`: the same control plane as in the
// browser, with a real HTTP API for the real kubectl.
//
// Glue only: the web app is package site, the control plane is core/.
// Each subcommand lives in its own file and adds itself with addCommand from
// an init function, so a new subcommand is a new file:
//
//	func init() { addCommand(newClusterCommand) }
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// commands are the constructors of the subcommands, added by each file's init.
var commands []func() *cobra.Command

// addCommand registers a subcommand constructor.
func addCommand(newCmd func() *cobra.Command) {
	commands = append(commands, newCmd)
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "kubetab",
		Short:         "A Kubernetes control plane for learning, in a browser tab or natively",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, newCmd := range commands {
		root.AddCommand(newCmd())
	}
	return root
}

func main() {
	if err := newRootCommand().Execute(); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code)) // a console line's exit code; its output said why
		}
		fmt.Fprintln(os.Stderr, "kubetab:", err)
		os.Exit(1)
	}
}
