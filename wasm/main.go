//go:build js && wasm

// Command wasm is kubetab's entry point in the browser (GOOS=js GOARCH=wasm),
// run by site/src/worker.js in a dedicated Web Worker so the page never
// blocks.
//
// It boots the same control plane that `kubetab cluster` runs natively
// (core/cluster: store, apiserver, controllers, scheduler, kubelets) with the
// console of core/session (the same commands the lesson verifier runs), and opens
// three doors to the page through package worker: the page's API requests
// reach the kube-apiserver handler (list + watch for the live panels),
// console lines run kubectl against the same handler in-process, the
// page lists the image registry and adds a learner's own .wasm to it, and
// the lesson player prepares the cluster for a lesson, places its files and
// has its checks evaluated here. Glue only.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	// The IANA time zone database, for CronJobs' spec.timeZone: a browser
	// gives Go no /usr/share/zoneinfo, so without it every zone but UTC is
	// "unknown time zone Asia/Tokyo". About 75 KB of the brotli download.
	_ "time/tzdata"

	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/core/session"
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
	// The tab's heap is at most 4 GiB and running out of it is fatal; a
	// soft limit makes Go's GC work harder before that, rather than at
	// twice the live heap (the arithmetic: core/cluster's node sizes).
	debug.SetMemoryLimit(3 << 30)

	catalog := images.New() // the registry the kubelets pull from; the page adds to it
	// The learner's own images kept with the saved cluster, before it starts.
	for _, err := range worker.RestoreImages(catalog) {
		fmt.Fprintln(os.Stderr, "kubetab:", err)
	}
	// The page's saved cluster (IndexedDB, read by worker.js) when there is
	// a good one, restored before any controller starts; else a fresh one.
	sess, restored, err := worker.StartSession(context.Background(), session.Config{Images: catalog, WaitForCaches: true, Editor: worker.Edit})
	if err != nil {
		return err
	}
	return worker.Serve(sess, catalog, restored)
}
