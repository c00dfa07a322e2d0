// Package kubectl is kubetab's kubectl: a command line client that turns
// `kubectl get pods -o wide` into HTTP requests to the API server and draws
// the answers, exactly like the real one.
//
// Upstream counterpart: k8s.io/kubectl/pkg/cmd/... (one package per command),
// k8s.io/cli-runtime/pkg/printers (tables, YAML, JSON, names) and
// k8s.io/kubectl/pkg/describe. kubectl is nothing but an HTTP client; it has
// no special access to the cluster. Every command here is a handful of REST
// calls, and reading a command's file shows which:
//
//	kubectl get pods -o wide
//	  GET /api                         ┐ discovery: which resources exist,
//	  GET /api/v1                      │ their short names ("po"), whether
//	  GET /apis, /apis/apps/v1         ┘ they are namespaced
//	  GET /api/v1/namespaces/default/pods
//	      Accept: application/json;as=Table;v=v1;g=meta.k8s.io
//	  ◀── a meta.k8s.io Table: the server chose the columns (core/printers);
//	      kubectl only aligns them, hiding priority-1 columns unless -o wide
//
//	kubectl apply -f web.yaml      GET the object; POST it if absent, else
//	                               PATCH a three-way strategic merge patch
//	                               computed from the last-applied annotation
//	kubectl scale deploy/web --replicas=3
//	                               PATCH .../deployments/web/scale
//	kubectl delete pod web         DELETE, then watch until it is gone
//	kubectl logs -f web            GET .../pods/web/log?follow=true (a stream)
//	kubectl run web --image=hello  POST .../pods (a bare pod, label run=web)
//	kubectl expose deploy/web --port=80
//	                               GET the deployment, POST a Service with
//	                               its selector
//
// The transport is pluggable: natively it can be any http.RoundTripper (a
// real server), and in the browser InProcessTransport hands the request
// straight to the apiserver's http.Handler in the same Web Worker, so the
// learner's request really travels kubectl -> API server -> store without a
// socket.
//
// Using it:
//
//	code := kubectl.Run(ctx, []string{"get", "pods"}, streams, kubectl.InProcessTransport(apiserverHandler))
//
// or kubectl.New(kubectl.Config{...}) for more control: the namespace of the
// "current context", the server URL, the clock of describe's ages, and
// ReadFile, through which `apply -f web.yaml` reads files (the browser passes
// a function over the files of its editor; "-" is always standard input).
// SplitWords turns a console line into args the way a shell would.
//
// One file per command (get.go, describe.go, apply.go, create.go, delete.go,
// run.go, expose.go, scale.go, logs.go, version.go, apiresources.go,
// clusterinfo.go), like upstream. The shared parts: kubectl.go (Config, Run, the root command),
// client.go (requests and API errors), discovery.go (resource names),
// resources.go (TYPE NAME arguments), table.go (kubectl's column alignment),
// output.go (-o yaml|json|name), manifests.go (reading -f files), wait.go
// (waiting for a deletion), errors.go (kubectl's error wording), words.go
// (shell word splitting for the console) and transport.go.
//
// Not here, on purpose: k8s.io/client-go and k8s.io/kubectl are too big for
// the wasm build, so the REST client and the few helpers are written by hand,
// with upstream's wording.
package kubectl
