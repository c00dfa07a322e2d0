// Package session is one learner's sandbox: a running cluster and the
// console that drives it, with every command the page offers (kubectl,
// etcdctl, trace, curl, ssh, images ...).
//
// The browser (wasm/) and the lesson verifier (core/lesson, `kubetab lessons
// verify`, natively) both build their console here, so a lesson's checks run
// exactly the commands a learner types:
//
//	session.New ──▶ cluster.New + Launch      (store, API server, controllers,
//	     │                                     scheduler, kubelets)
//	     └───────▶ console.Shell              kubectl ──HTTP──▶ Handler()
//	                 Run("kubectl get pods")   etcdctl ───────▶ the store
//	                                           trace ─────────▶ the hops
//
// Reset replaces the cluster with a fresh one (a lesson's "Reset"), with
// the lesson's nodes, and empties the console's files; the shell, Files
// and Handler stay the same values, and every command reaches the cluster
// that is current when it runs.
//
// Upstream counterpart: none in Kubernetes. It plays the part of a lab
// machine in Killercoda or the CKA exam environment: a shell with kubectl
// configured against one cluster.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/curl"
	"github.com/kubetab/kubetab/core/etcdctl"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/node"
	"github.com/kubetab/kubetab/core/ssh"
	"github.com/kubetab/kubetab/core/trace"
)

// Catalog is the image registry the kubelets pull from, listed by the
// console's `images` command (wasm/images.Catalog).
type Catalog interface {
	cri.ImageSource
	// WriteTable writes the catalog as a table: name, size, what it does.
	WriteTable(w io.Writer) error
}

// Config configures a Session.
type Config struct {
	// Images is the registry; required.
	Images Catalog
	// Clock drives the cluster; nil is the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Cluster is the template for every cluster the session makes (its
	// Images and Clock are set from the fields above).
	Cluster cluster.Config
	// Files is the console's working directory (lessons put their files
	// there); nil is a new, empty one. Reset empties it.
	Files *console.Files
	// Editor is the editor `kubectl edit` opens: the page's Editor tab
	// (wasm/worker), $KUBE_EDITOR or $EDITOR natively (cmd/kubetab). Nil:
	// kubectl edit says that no editor is available.
	Editor kubectl.EditFunc
	// WaitForCaches makes New and Reset return only once every component
	// has listed what it watches and done the work those lists gave it
	// (cluster.WaitForCacheSync, then, for a fresh cluster, WaitSettled):
	// the page, tests and the verifier, so that a learner's first command
	// is the first thing after ready, with no start-up write among its hops.
	WaitForCaches bool
}

// Session is a cluster and its console.
type Session struct {
	cfg   Config
	shell *console.Shell

	mu      sync.RWMutex // guards cluster and stop
	cluster *cluster.Cluster
	stop    context.CancelFunc
}

// New makes a session and starts its cluster. Close stops it.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Images == nil {
		return nil, errors.New("session: Config.Images is required")
	}
	if cfg.Files == nil {
		cfg.Files = console.NewFiles()
	}
	shell, err := console.New(console.Config{Files: cfg.Files})
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, shell: shell}
	if err := s.register(); err != nil {
		return nil, err
	}
	if err := s.start(ctx, nil, cfg.Cluster.Snapshot); err != nil {
		return nil, err
	}
	return s, nil
}

// Reset stops the current cluster (if any), empties the console's files
// and starts a fresh cluster from the session's Config: a lesson's "Reset
// lesson", the page's "Reset cluster". nodes, when not nil, are the new
// cluster's nodes (a lesson's `nodes:`), for this cluster only; nil means
// the Config's. Bad nodes are an error that leaves the current cluster
// and the files as they were.
func (s *Session) Reset(ctx context.Context, nodes []cluster.NodeSpec) error {
	return s.start(ctx, nodes, nil)
}

// Restore stops the current cluster and starts one from a store snapshot
// (cluster.Config.Snapshot: the page's saved cluster, an imported file, a
// share link), with its own nodes. The console's files are emptied. A bad
// snapshot is an error wrapping cluster.ErrBadSnapshot that leaves the
// current cluster and the files as they were.
func (s *Session) Restore(ctx context.Context, snap []byte) error {
	if snap == nil {
		snap = []byte{}
	}
	return s.start(ctx, nil, snap)
}

// start replaces the cluster with a new one: from snap when not nil,
// otherwise fresh with nodes (nil: the Config's).
func (s *Session) start(ctx context.Context, nodes []cluster.NodeSpec, snap []byte) error {
	conf := s.cfg.Cluster
	conf.Snapshot = snap
	conf.Images = s.cfg.Images
	conf.Clock = s.cfg.Clock
	if nodes != nil {
		if len(nodes) == 0 {
			return errors.New("session: a cluster needs at least one node")
		}
		conf.NodeSpecs = nodes
	}
	c, err := cluster.New(conf)
	if err != nil {
		return fmt.Errorf("session: new cluster: %w", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	if err := c.Launch(runCtx); err != nil {
		stop()
		return fmt.Errorf("session: start cluster: %w", err)
	}
	if s.cfg.WaitForCaches {
		if err := c.WaitForCacheSync(ctx); err != nil {
			stop()
			return err
		}
		// A fresh cluster settles before ready, so that its start-up
		// writes come before a learner's first command. A restored one
		// does not wait: its kubelets are restarting every pod (a reboot),
		// which with 300 pods kept it from settling for all of
		// settleLimit, and the learner may type while they come back.
		if snap == nil {
			if err := c.WaitSettled(ctx); err != nil {
				stop()
				return err
			}
		}
	}
	// After "ready" (the caller posts it when this returns), in the
	// background: the JS engine compiles wazero's interpreter before the
	// first pod needs it (in a fresh tab that took 0.8 s of the start).
	go func() { _ = c.WarmUp(runCtx) }()
	s.mu.Lock()
	old := s.stop
	s.cluster, s.stop = c, stop
	s.mu.Unlock()
	s.cfg.Files.Clear()
	if old != nil {
		old()
	}
	return nil
}

// Close stops the cluster.
func (s *Session) Close() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Cluster is the current cluster.
func (s *Session) Cluster() *cluster.Cluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cluster
}

// Files is the console's working directory: what `ls` lists and
// `kubectl apply -f` reads.
func (s *Session) Files() *console.Files { return s.cfg.Files }

// Shell is the console; Run is the usual way in.
func (s *Session) Shell() *console.Shell { return s.shell }

// Run runs one console line (or several, as the shell reads them) and
// returns its exit code.
func (s *Session) Run(ctx context.Context, line string, streams console.Streams) int {
	return s.shell.Run(ctx, line, streams)
}

// Handler is the current cluster's API server. It stays valid across Reset:
// each request reaches the cluster that is current when it arrives.
func (s *Session) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Cluster().Handler().ServeHTTP(w, r)
	})
}

// roundTrip sends curl's request through the current cluster's console
// network: kube-proxy on its first node and the cluster DNS, looked up at
// each request since nodes come and go.
func (s *Session) roundTrip(r *http.Request) (*http.Response, error) {
	t, err := s.Cluster().ConsoleTransport()
	if err != nil {
		return nil, err
	}
	return t.RoundTrip(r)
}

// register adds every console command. Each one reaches the current cluster
// when it runs, so Reset needs no registration again.
func (s *Session) register() error {
	sh := s.shell
	// kubectl reads -f FILE and -f DIR from the console's files.
	cli, err := kubectl.New(kubectl.Config{
		Transport: kubectl.InProcessTransport(s.Handler()),
		ReadFile:  s.cfg.Files.ReadFile,
		ReadDir:   s.cfg.Files.ReadDir,
		Editor:    s.cfg.Editor,
	})
	if err != nil {
		return err
	}
	sh.Register("kubectl", "control the cluster: get, create, apply, logs, exec ... (the real kubectl's commands)", func(ctx context.Context, args []string, st console.Streams) int {
		return cli.Run(ctx, args, kubectl.IOStreams{In: st.In, Out: st.Out, ErrOut: st.ErrOut})
	})
	network := roundTripperFunc(s.roundTrip)
	sh.Register("curl", "send an HTTP request through the cluster's network (Services, cluster DNS, pod IPs)", func(ctx context.Context, args []string, st console.Streams) int {
		return curl.Run(ctx, curl.Config{Transport: network}, args, curl.IOStreams{In: st.In, Out: st.Out, ErrOut: st.ErrOut})
	})
	// etcdctl get /registry/pods --prefix --keys-only: the store as it is
	// (read-only: writes go through the API server).
	sh.Register("etcdctl", "read the store behind the API server (get, watch, endpoint status)", func(ctx context.Context, args []string, st console.Streams) int {
		return etcdctl.Run(ctx, args, etcdctl.IOStreams{In: st.In, Out: st.Out, ErrOut: st.ErrOut}, s.Cluster().Store, etcdctl.WithDecoder(s.Cluster().Registry.DecodeYAML))
	})
	// trace web: every hop of the requests about web and what it made, from
	// kubectl through the API server, etcd, the controllers and the
	// scheduler to the kubelet's CNI and CRI calls.
	sh.Register("trace", "show every hop of requests: kubectl, API server, etcd, controllers, scheduler, kubelet", func(ctx context.Context, args []string, st console.Streams) int {
		return trace.Run(ctx, s.Cluster().Trace, args, trace.IOStreams{Out: st.Out, ErrOut: st.ErrOut})
	})
	// ssh NODE systemctl stop|start kubelet: a node failure, for the node
	// lifecycle lesson.
	sh.Register("ssh", "stop or start a node's kubelet (ssh node-2 systemctl stop kubelet)", func(ctx context.Context, args []string, st console.Streams) int {
		return ssh.Run(ctx, s.Cluster(), args, ssh.IOStreams{Out: st.Out, ErrOut: st.ErrOut})
	})
	// node add node-4 --cpu=8: a machine joins (or leaves) the cluster, for
	// "a Pending pod schedules once a node joins".
	sh.Register("node", "add, remove and list the cluster's nodes (node add node-4 --cpu=8)", func(ctx context.Context, args []string, st console.Streams) int {
		return node.Run(ctx, s.Cluster(), args, node.IOStreams{Out: st.Out, ErrOut: st.ErrOut})
	})
	// images: the registry's catalog, a learner's own modules included.
	sh.Register("images", "list the images the kubelets can pull, yours included", func(ctx context.Context, args []string, st console.Streams) int {
		if len(args) > 0 {
			fmt.Fprintln(st.ErrOut, "usage: images (lists the images pods can run; add your own .wasm in the page's Images panel)")
			return console.ExitUsage
		}
		if err := s.cfg.Images.WriteTable(st.Out); err != nil {
			fmt.Fprintln(st.ErrOut, err)
			return 1
		}
		return console.ExitOK
	})
	for name, ja := range map[string]string{
		"kubectl": "クラスターを操作します: get、create、apply、logs、exec など（本物の kubectl のコマンドです）",
		"curl":    "クラスターのネットワーク（Service、クラスター DNS、Pod の IP）を通して HTTP リクエストを送ります",
		"etcdctl": "API サーバーの裏にあるストアを読みます（get、watch、endpoint status）",
		"trace":   "リクエストの経路をすべて表示します: kubectl、API サーバー、etcd、コントローラー、スケジューラー、kubelet",
		"ssh":     "ノードの kubelet を止めたり動かしたりします（ssh node-2 systemctl stop kubelet）",
		"node":    "クラスターのノードを追加、削除、一覧します（node add node-4 --cpu=8）",
		"images":  "kubelet が pull できるイメージを一覧します（自分で追加したものも含みます）",
	} {
		sh.Translate(name, ja)
	}
	s.registerCompleters(cli)
	return nil
}

// registerCompleters gives Tab its answers: kubectl's are cobra's
// __complete over the live cluster (kubectl.CLI.Complete); the others
// reuse them for node and object names.
func (s *Session) registerCompleters(cli *kubectl.CLI) {
	sh := s.shell
	kube := func(ctx context.Context, args []string, toComplete string) console.Completion {
		c := cli.Complete(ctx, args, toComplete)
		return console.Completion{Candidates: c.Candidates, NoSpace: c.NoSpace, Files: c.Files, Exts: c.Exts}
	}
	sh.RegisterCompleter("kubectl", kube)
	words := func(toComplete string, list ...string) console.Completion {
		return console.Completion{Candidates: list}
	}
	sh.RegisterCompleter("ssh", func(ctx context.Context, args []string, toComplete string) console.Completion {
		switch len(args) {
		case 0:
			return kube(ctx, []string{"cordon"}, toComplete) // the node names
		case 1:
			return words(toComplete, "systemctl")
		case 2:
			return words(toComplete, "start", "stop", "restart", "status", "is-active")
		case 3:
			return words(toComplete, "kubelet")
		}
		return console.Completion{}
	})
	sh.RegisterCompleter("node", func(ctx context.Context, args []string, toComplete string) console.Completion {
		switch {
		case len(args) == 0:
			return words(toComplete, "add", "remove", "list")
		case len(args) == 1 && (args[0] == "remove" || args[0] == "delete" || args[0] == "rm"):
			return kube(ctx, []string{"cordon"}, toComplete)
		case args[0] == "add" && strings.HasPrefix(toComplete, "-"):
			return console.Completion{Candidates: []string{"--cpu=", "--memory=", "--label", "--taint"}, NoSpace: true}
		}
		return console.Completion{}
	})
	sh.RegisterCompleter("trace", func(ctx context.Context, args []string, toComplete string) console.Completion {
		if strings.HasPrefix(toComplete, "-") {
			return console.Completion{Candidates: []string{"--follow", "--kind=", "--tail="}}
		}
		if strings.Contains(toComplete, "/") {
			return kube(ctx, []string{"get"}, toComplete)
		}
		// NAME: a deployment's, or any pod's, or a type.
		c := kube(ctx, []string{"get", "deployments"}, toComplete)
		c.Candidates = append(c.Candidates, kube(ctx, []string{"get", "pods"}, toComplete).Candidates...)
		c.Files = false
		return c
	})
	sh.RegisterCompleter("etcdctl", func(ctx context.Context, args []string, toComplete string) console.Completion {
		if len(args) == 0 {
			return words(toComplete, "get", "watch", "endpoint")
		}
		if len(args) == 1 && args[0] == "endpoint" {
			return words(toComplete, "status")
		}
		return console.Completion{}
	})
	none := func(context.Context, []string, string) console.Completion { return console.Completion{} }
	sh.RegisterCompleter("curl", none)
	sh.RegisterCompleter("images", none)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
