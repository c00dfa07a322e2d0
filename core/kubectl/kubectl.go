package kubectl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/utils/clock"
)

// IOStreams are a command's standard input, output and error.
type IOStreams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// DefaultServer is the server URL kubectl reports (cluster-info) and sends
// in requests when Config.Server is empty. With InProcessTransport the host
// is never dialed.
const DefaultServer = "https://kubetab.local:6443"

// Version is the client version `kubectl version` reports: kubetab's kubectl
// speaks the API of the k8s.io/api release it is built with.
const Version = "v1.37.2-kubetab"

// Config configures a CLI.
type Config struct {
	// Transport carries every request; required. Use InProcessTransport to
	// talk to an apiserver handler in the same process.
	Transport http.RoundTripper
	// Server is the API server's base URL; empty means DefaultServer.
	Server string
	// Namespace is the namespace of the current context (kubeconfig); empty
	// means "default". The -n flag overrides it.
	Namespace string
	// ReadFile reads the files named by -f. Nil means os.ReadFile. The
	// browser passes a function over the files the learner wrote in the
	// editor; "-" always means standard input.
	ReadFile func(name string) ([]byte, error)
	// ReadDir lists a directory for -f DIR: its files ending .json, .yaml
	// or .yml, and with -R its subdirectories too. Nil means os.ReadDir.
	// The console passes its working directory's (console.Files).
	ReadDir func(name string) ([]fs.DirEntry, error)
	// Editor is what `kubectl edit` opens its file in (edit.go). Nil: edit
	// says that no editor is available (ErrNoEditor).
	Editor EditFunc
	// Clock is used for the ages `kubectl describe` computes itself (get's
	// ages come from the server). Nil means the real clock.
	Clock clock.PassiveClock
}

// CLI runs kubectl command lines against one API server. It holds no state
// between runs, so one CLI may run several commands at once.
type CLI struct {
	cfg    Config
	server *url.URL
}

// New returns a CLI.
func New(cfg Config) (*CLI, error) {
	if cfg.Transport == nil {
		return nil, errors.New("kubectl: Config.Transport is required")
	}
	if cfg.Server == "" {
		cfg.Server = DefaultServer
	}
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("kubectl: invalid Config.Server %q", cfg.Server)
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.ReadFile == nil {
		cfg.ReadFile = os.ReadFile
	}
	if cfg.ReadDir == nil {
		cfg.ReadDir = os.ReadDir
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &CLI{cfg: cfg, server: u}, nil
}

// Run runs one kubectl command line with the default configuration; args
// exclude the word "kubectl". It returns the exit code: 0 on success, 1 on
// error (printed to streams.ErrOut the way kubectl prints it). Cancelling
// ctx ends a running command (Ctrl-C): `get -w` and `logs -f` then return 0.
func Run(ctx context.Context, args []string, streams IOStreams, rt http.RoundTripper) int {
	c, err := New(Config{Transport: rt})
	if err != nil {
		fmt.Fprintf(errOut(streams), "error: %v\n", err)
		return 1
	}
	return c.Run(ctx, args, streams)
}

func errOut(s IOStreams) io.Writer {
	if s.ErrOut == nil {
		return io.Discard
	}
	return s.ErrOut
}

// Run runs one command line; see the package-level Run. A panic in a
// command (a bug) is reported as an error instead of ending the program,
// which in the browser would take the whole cluster down with it.
func (c *CLI) Run(ctx context.Context, args []string, streams IOStreams) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(errOut(streams), "error: internal error in kubectl: %v\n", p)
			code = 1
		}
	}()
	if streams.In == nil {
		streams.In = strings.NewReader("")
	}
	if streams.Out == nil {
		streams.Out = io.Discard
	}
	if streams.ErrOut == nil {
		streams.ErrOut = io.Discard
	}
	s := &session{cli: c, ctx: ctx, streams: streams, namespace: c.cfg.Namespace}
	s.client = newRESTClient(c.cfg.Transport, c.server)
	root := s.rootCommand()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	_, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return 0 // Ctrl-C: the command was asked to stop
	}
	if errors.Is(err, errExit) {
		return 1
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		if ec.err != nil {
			printError(streams.ErrOut, ec.err)
		}
		return ec.code
	}
	printError(streams.ErrOut, err)
	return 1
}

// session is the state of one Run: flags shared by every command, the REST
// client and the discovery cache.
type session struct {
	cli       *CLI
	ctx       context.Context
	streams   IOStreams
	client    *restClient
	namespace string // -n, or the configured namespace

	namespaceFlag string
	// validate is --validate of create -f and apply; fieldValidation is
	// what it asks the server for (Strict, Warn, Ignore).
	validate, fieldValidation string
	// applyDryRun is apply's --dry-run: "server" adds dryRun=All to its
	// writes (writeQuery), "client" sends none.
	applyDryRun dryRun
	resources   []apiResource // discovery cache, filled by discover
	// recursive is -R: -f DIR reads the directory's subdirectories too.
	recursive bool
	// requestTimeout is --request-timeout; verbosity is -v (klog.go).
	requestTimeout string
	verbosity      int
	// as and asGroups are --as and --as-group (impersonation).
	as       string
	asGroups []string
}

// out and errOut are the command's streams.
func (s *session) out() io.Writer    { return s.streams.Out }
func (s *session) errOut() io.Writer { return s.streams.ErrOut }

// explicitNamespace reports whether -n was given.
func (s *session) explicitNamespace() bool { return s.namespaceFlag != "" }

func (s *session) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl",
		Short: "kubectl controls the Kubernetes cluster manager.",
		Long: `kubectl controls the Kubernetes cluster manager.

 Find more information at: https://kubernetes.io/docs/reference/kubectl/`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if s.namespaceFlag != "" {
				s.namespace = s.namespaceFlag
			}
			timeout, err := parseRequestTimeout(s.requestTimeout)
			if err != nil {
				return err
			}
			s.client.timeout = timeout
			s.client.as, s.client.asGroups = s.as, s.asGroups
			if s.verbosity > 0 {
				s.client.log = &klogger{v: s.verbosity, w: s.streams.ErrOut, clock: s.cli.cfg.Clock}
			}
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&s.namespaceFlag, "namespace", "n", "", "If present, the namespace scope for this CLI request")
	root.PersistentFlags().StringVar(&s.requestTimeout, "request-timeout", "0", "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.")
	root.PersistentFlags().IntVarP(&s.verbosity, "v", "v", 0, "number for the log level verbosity")
	root.PersistentFlags().StringVar(&s.as, "as", "", "Username to impersonate for the operation. User could be a regular user or a service account in a namespace.")
	root.PersistentFlags().StringArrayVar(&s.asGroups, "as-group", nil, "Group to impersonate for the operation, this flag can be repeated to specify multiple groups.")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for usage.", err, c.CommandPath())
	})
	root.AddGroup(
		&cobra.Group{ID: "basic", Title: "Basic Commands:"},
		&cobra.Group{ID: "troubleshooting", Title: "Troubleshooting and Debugging Commands:"},
		&cobra.Group{ID: "advanced", Title: "Advanced Commands:"},
		&cobra.Group{ID: "settings", Title: "Settings Commands:"},
		&cobra.Group{ID: "deploy", Title: "Deploy Commands:"},
		&cobra.Group{ID: "cluster", Title: "Cluster Management Commands:"},
		&cobra.Group{ID: "other", Title: "Other Commands:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("basic", s.newCreateCommand(), s.newExposeCommand(), s.newRunCommand(), s.newExplainCommand(), s.newGetCommand(), s.newDeleteCommand())
	add("deploy", s.newRolloutCommand(), s.newScaleCommand(), s.newAutoscaleCommand())
	add("basic", s.newSetCommand())
	add("cluster", s.newAuthCommand())
	add("cluster", s.newClusterInfoCommand(), s.newTopCommand(), s.newCordonCommand(true), s.newCordonCommand(false), s.newDrainCommand(), s.newTaintCommand())
	add("troubleshooting", s.newDescribeCommand(), s.newLogsCommand(), s.newExecCommand(), s.newAttachCommand(), s.newPortForwardCommand(), s.newEventsCommand(), s.newSchedulingCommand())
	add("advanced", s.newDiffCommand(), s.newApplyCommand(), s.newPatchCommand(), s.newWaitCommand())
	add("basic", s.newEditCommand())
	add("settings", s.newLabelCommand(), s.newAnnotateCommand())
	add("other", s.newAPIResourcesCommand(), s.newAPIVersionsCommand(), s.newVersionCommand())
	root.SetHelpCommandGroupID("other")
	return root
}

// parseRequestTimeout reads --request-timeout as upstream does: a bare
// integer is seconds, anything else a Go duration; "0" means none.
func parseRequestTimeout(v string) (time.Duration, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		v = strconv.Itoa(n) + "s"
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errors.New("Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)")
	}
	return d, nil
}

// usageErrorf is kubectl's cmdutil.UsageErrorf.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	return fmt.Errorf("%s\nSee '%s -h' for help and examples", fmt.Sprintf(format, args...), cmd.CommandPath())
}
