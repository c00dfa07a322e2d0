// Package clientgo checks kubetab's API server with the real Kubernetes
// client library, k8s.io/client-go: typed clientsets, shared informers and
// their reflectors, and retry.RetryOnConflict. If client-go cannot tell
// kubetab from kube-apiserver, neither can the controllers and operators
// learners will meet later.
//
// Upstream counterpart: the integration tests under
// k8s.io/kubernetes/test/integration/apiserver, which drive a real
// kube-apiserver through client-go.
//
// The whole package is tests. client-go is imported only by the _test.go
// files here, so it never reaches the browser build (wasm/), which
// test/clientgo's TestNoClientGoInWasm checks.
package clientgo
