// Package etcdctl is the console's etcdctl: a read-only window onto
// core/store, the etcd of a kubetab cluster, shaped like the real etcdctl v3
// (upstream: etcd's etcdctl/ctlv3, command/get_command.go,
// watch_command.go, ep_command.go, compaction_command.go and the printers).
//
// Lessons use it to show the single source of truth under the API server:
//
//	etcdctl get /registry/pods --prefix --keys-only
//	etcdctl get /registry/deployments/default/web -w json
//	etcdctl get /registry/pods/default/web-1 --rev 42
//	etcdctl watch /registry/pods --prefix          (Ctrl-C ends it)
//	etcdctl endpoint status -w table
//	etcdctl compaction 1200
//
// Output, errors and exit codes are etcdctl's: keys and values on lines of
// their own; "Error: ..." on standard error; errors from the store in the
// words etcd's gRPC layer uses ("etcdserver: mvcc: required revision has been
// compacted"); exit code 1 for a failed request, 128 for bad arguments, 5 when
// a watch is cancelled by the server.
//
// What differs, and why:
//
//   - There is no put, del or txn. Only kube-apiserver writes to the store, as
//     in a real cluster, where writing to etcd behind the API server's back
//     skips validation, admission, defaulting and the resourceVersion checks,
//     and leaves the cluster with objects nobody vouched for. The commands
//     exist only to say so.
//   - There is no network: the global connection flags (--endpoints, --cacert,
//     --cert, --key, ...) are accepted so commands copied from the Kubernetes
//     docs work, and --endpoints only names the endpoint in `endpoint status`.
//   - Values are objects as kube-apiserver stores them: protobuf, "k8s\x00"
//     and an envelope naming apiVersion and kind, mostly binary with the
//     names and strings readable. The real etcdctl prints those bytes raw;
//     this one shows control bytes as '.' (as hexdump -C does) so they cannot
//     drive the console's terminal. -w json carries the exact bytes.
//   - get and watch have one flag the real etcdctl lacks: --decode prints each
//     value as the YAML of the object it holds (as the auger tool does for a
//     real etcd), so a learner can read what kube-apiserver stored. Without
//     it the output is etcdctl's.
//   - A JSON header carries the revision only: kubetab's store has no cluster
//     or member IDs and no raft term.
//   - `endpoint status` shows what this store has (revision, compacted
//     revision, keys, size) instead of raft and version fields.
//   - `snapshot save` is left out: in the browser there is no file system to
//     save to; the page persists the cluster with store.Snapshot itself.
package etcdctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/store"
)

// IOStreams are a command's standard input, output and error.
type IOStreams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// Exit codes, as etcd's pkg/cobrautl names them.
const (
	ExitSuccess     = 0
	ExitError       = 1
	ExitBadFeature  = 4 // a valid flag with an unsupported value (an output format)
	ExitInterrupted = 5 // a watch cancelled by the server
	ExitBadArgs     = 128
)

// DefaultEndpoint is what `endpoint status` calls the store when --endpoints
// is not given: it lives in this process, not behind an address.
const DefaultEndpoint = "in-process"

// exitError is a failure with its exit code; Run prints "Error: " and the
// message, as cobrautl.ExitWithError does.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// errPrinted ends a command that already printed its own error lines.
type errPrinted struct{ code int }

func (e errPrinted) Error() string { return fmt.Sprintf("exit %d", e.code) }

// rpcError words a store error the way etcd's gRPC layer words the mvcc
// error behind it (api/v3rpc/rpctypes), which is what etcdctl prints.
func rpcError(err error) error {
	switch {
	case errors.Is(err, store.ErrCompacted):
		return errors.New("etcdserver: mvcc: required revision has been compacted")
	case errors.Is(err, store.ErrFuture):
		return errors.New("etcdserver: mvcc: required revision is a future revision")
	case errors.Is(err, store.ErrEmptyKey):
		return errors.New("etcdserver: key is not provided")
	case errors.Is(err, store.ErrRequestTooLarge):
		return errors.New("etcdserver: request is too large")
	}
	return err
}

// Decoder turns a stored value back into the object kube-apiserver wrote,
// as YAML; the registry's codecs do it (registry.Registry.DecodeYAML). It is
// what `get --decode` prints instead of the protobuf bytes.
type Decoder func(kv store.KeyValue) ([]byte, error)

// Option configures a Run.
type Option func(*session)

// WithDecoder lets get and watch decode values (--decode).
func WithDecoder(d Decoder) Option { return func(s *session) { s.decode = d } }

// session is one Run: the store, the streams and the global flags.
type session struct {
	ctx       context.Context
	decode    Decoder // nil: --decode is refused
	store     *store.Store
	streams   IOStreams
	writeOut  string   // -w: simple, json, table, fields, protobuf
	endpoints []string // --endpoints, only named in endpoint status
}

// Run runs one etcdctl command line against s; args exclude the word
// "etcdctl". It returns the exit code. Cancelling ctx (Ctrl-C) ends a watch,
// which then returns 0. A panic (a bug) is reported as an error instead of
// taking the whole cluster down with it in the browser.
func Run(ctx context.Context, args []string, streams IOStreams, s *store.Store, opts ...Option) (code int) {
	if streams.In == nil {
		streams.In = strings.NewReader("")
	}
	if streams.Out == nil {
		streams.Out = io.Discard
	}
	if streams.ErrOut == nil {
		streams.ErrOut = io.Discard
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(streams.ErrOut, "Error: internal error in etcdctl: %v\n", p)
			code = ExitError
		}
	}()
	sess := &session{ctx: ctx, store: s, streams: streams}
	for _, o := range opts {
		o(sess)
	}
	root := sess.rootCommand()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitSuccess
	}
	var printed errPrinted
	if errors.As(err, &printed) {
		return printed.code
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintln(streams.ErrOut, "Error:", ee.err)
		return ee.code
	}
	// A flag or argument cobra refused: etcdctl lets cobra print the error
	// and the command's usage, then exits 1.
	fmt.Fprintln(streams.ErrOut, "Error:", err)
	fmt.Fprint(streams.ErrOut, cmd.UsageString())
	return ExitError
}

const rootLong = `etcdctl reads the store of this kubetab cluster: the etcd that kube-apiserver
keeps every object in, under keys like /registry/pods/<namespace>/<name>.

It is read-only on purpose. In a real cluster only kube-apiserver writes to
etcd: a put or a delete behind its back skips validation, admission,
defaulting and the resourceVersion checks, and controllers would act on
objects nobody vouched for. Use kubectl to change the cluster, and etcdctl to
see what the change did to the store.`

func (s *session) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:               "etcdctl",
		Short:             "A simple command line client for etcd3.",
		Long:              rootLong,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&s.writeOut, "write-out", "w", "simple", "set the output format (fields, json, protobuf, simple, table)")
	pf.StringSliceVar(&s.endpoints, "endpoints", []string{DefaultEndpoint}, "gRPC endpoints (accepted; kubetab's store is in this process)")
	// Connection flags of the real etcdctl, accepted so that commands copied
	// from the Kubernetes docs run; there is no connection to make.
	for _, name := range []string{"cacert", "cert", "key", "user", "password", "dial-timeout", "command-timeout"} {
		pf.String(name, "", "accepted and ignored: there is no network between etcdctl and kubetab's store")
		pf.MarkHidden(name)
	}
	pf.Bool("insecure-skip-tls-verify", false, "accepted and ignored")
	pf.MarkHidden("insecure-skip-tls-verify")

	root.AddGroup(
		&cobra.Group{ID: "kv", Title: "Key-value commands:"},
		&cobra.Group{ID: "cluster", Title: "Cluster maintenance commands:"},
	)
	for _, c := range []*cobra.Command{s.newGetCommand(), s.newWatchCommand(), s.newCompactionCommand()} {
		c.GroupID = "kv"
		root.AddCommand(c)
	}
	for _, c := range s.readOnlyCommands() {
		c.GroupID = "kv"
		root.AddCommand(c)
	}
	ep := s.newEndpointCommand()
	ep.GroupID = "cluster"
	root.AddCommand(ep)
	root.SetHelpCommandGroupID("cluster")
	return root
}

// readOnlyCommands answer the write commands of the real etcdctl with the
// reason they are not here.
func (s *session) readOnlyCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, c := range []struct{ use, short string }{
		{"put [options] <key> <value>", "Puts the given key into the store (not in kubetab: see --help)"},
		{"del [options] <key> [range_end]", "Removes the specified key or range of keys (not in kubetab: see --help)"},
		{"txn [options]", "Txn processes all the requests in one transaction (not in kubetab: see --help)"},
	} {
		name := strings.Fields(c.use)[0]
		cmds = append(cmds, &cobra.Command{
			Use:                name + c.use[len(name):],
			Short:              c.short,
			Long:               rootLong,
			DisableFlagParsing: true,
			RunE: func(*cobra.Command, []string) error {
				return fail(ExitError, "%s is not available: kubetab's etcdctl is read-only, because only kube-apiserver writes to the store (use kubectl to change the cluster)", name)
			},
		})
	}
	return cmds
}

// checkOutput refuses an output format a command cannot print, with
// etcdctl's words: an unknown name, or one the command does not support.
func (s *session) checkOutput(supported ...string) error {
	switch s.writeOut {
	case "simple", "json", "table", "fields", "protobuf":
	default:
		return fail(ExitBadFeature, "unsupported output format")
	}
	for _, f := range supported {
		if f == s.writeOut {
			return nil
		}
	}
	return fail(ExitBadFeature, "%s not supported as output format", s.writeOut)
}
