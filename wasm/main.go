//go:build js && wasm

// Command wasm is kubetab's entry point in the browser (GOOS=js GOARCH=wasm),
// run by site/src/worker.js in a dedicated Web Worker so the page never
// blocks.
//
// It boots the same control plane that `kubetab cluster` runs natively
// (core/cluster: store, apiserver, controllers, scheduler, kubelets) and opens
// three doors to the page through package worker: the page's API requests
// reach the kube-apiserver handler (list + watch for the live panels),
// console lines run kubectl against the same handler in-process, and the
// page lists the image registry and adds a learner's own .wasm to it. Glue
// only.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/curl"
	"github.com/kubetab/kubetab/core/etcdctl"
	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/core/ssh"
	"github.com/kubetab/kubetab/core/trace"
	"github.com/kubetab/kubetab/wasm/console"
	"github.com/kubetab/kubetab/wasm/images"
	"github.com/kubetab/kubetab/wasm/jsloop"
	"github.com/kubetab/kubetab/wasm/worker"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubetab:", err)
		worker.ReportFatal(err)
		return
	}
	select {} // serve until the tab closes
}

func run() error {
	// Long work in the control plane (scheduling loops, guest containers)
	// gives the worker's event loop a turn every few milliseconds; a
	// MessageChannel turn costs no timer clamp (core/eventloop, wasm/jsloop).
	turner, err := jsloop.New()
	if err != nil {
		return err
	}
	eventloop.SetTurn(turner.Turn)

	catalog := images.New() // the registry the kubelets pull from; the page adds to it
	c, err := cluster.New(cluster.Config{Images: catalog})
	if err != nil {
		return fmt.Errorf("new cluster: %w", err)
	}
	if err := c.Start(context.Background()); err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	api := c.Handler()

	shell, err := console.New(console.Config{Split: kubectl.SplitWords})
	if err != nil {
		return err
	}
	transport := kubectl.InProcessTransport(api)
	shell.Register("kubectl", "control the cluster: get, create, apply, logs, exec ... (the real kubectl's commands)", func(ctx context.Context, args []string, s console.Streams) int {
		return kubectl.Run(ctx, args, kubectl.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut}, transport)
	})
	network, err := c.ConsoleTransport() // curl on node-1, names resolved as from namespace default
	if err != nil {
		return err
	}
	shell.Register("curl", "send an HTTP request through the cluster's network (Services, cluster DNS, pod IPs)", func(ctx context.Context, args []string, s console.Streams) int {
		return curl.Run(ctx, curl.Config{Transport: network}, args, curl.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut})
	})
	// etcdctl get /registry/pods --prefix --keys-only: the store as it is
	// (read-only: writes go through the API server).
	shell.Register("etcdctl", "read the store behind the API server (get, watch, endpoint status)", func(ctx context.Context, args []string, s console.Streams) int {
		return etcdctl.Run(ctx, args, etcdctl.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut}, c.Store)
	})
	// trace web: every hop of the requests about web and what it made, from
	// kubectl through the API server, etcd, the controllers and the
	// scheduler to the kubelet's CNI and CRI calls.
	shell.Register("trace", "show every hop of requests: kubectl, API server, etcd, controllers, scheduler, kubelet", func(ctx context.Context, args []string, s console.Streams) int {
		return trace.Run(ctx, c.Trace, args, trace.IOStreams{Out: s.Out, ErrOut: s.ErrOut})
	})
	// ssh NODE systemctl stop|start kubelet: a node failure, for the node
	// lifecycle lesson.
	shell.Register("ssh", "stop or start a node's kubelet (ssh node-2 systemctl stop kubelet)", func(ctx context.Context, args []string, s console.Streams) int {
		return ssh.Run(ctx, c, args, ssh.IOStreams{Out: s.Out, ErrOut: s.ErrOut})
	})
	// images: the registry's catalog, a learner's own modules included.
	shell.Register("images", "list the images the kubelets can pull, yours included", func(ctx context.Context, args []string, s console.Streams) int {
		if len(args) > 0 {
			fmt.Fprintln(s.ErrOut, "usage: images (lists the images pods can run; add your own .wasm in the page's Images panel)")
			return console.ExitUsage
		}
		if err := catalog.WriteTable(s.Out); err != nil {
			fmt.Fprintln(s.ErrOut, err)
			return 1
		}
		return console.ExitOK
	})
	// More console commands (a lesson's checks) are one shell.Register each.

	return worker.Serve(api, shell, catalog)
}
