// Package apiextensions serves CustomResourceDefinitions
// (apiextensions.k8s.io/v1): creating one makes the API server serve a new
// resource, with no code and no restart.
//
// Upstream counterpart: k8s.io/apiextensions-apiserver
// (staging/src/k8s.io/apiextensions-apiserver), which kube-apiserver runs as
// the last server of its delegation chain. Its pieces and kubetab's:
//
//	pkg/registry/customresourcedefinition   crd.go       the CRD's own strategy and validation
//	pkg/controller/status (naming)          controller.go NamesAccepted, acceptedNames
//	pkg/controller/establish                controller.go Established
//	pkg/controller/finalizer                controller.go deleting a CRD deletes its objects
//	pkg/apiserver (crdHandler)              controller.go registers one registry.Resource per served version
//	pkg/registry/customresource             customresource.go the objects' strategy, status and scale
//	pkg/apiserver/schema (structural)       schema.go    validation, pruning and defaulting
//	pkg/registry/customresource/tableconvertor table.go  additionalPrinterColumns
//
// The life of a CRD, as kubectl sees it:
//
//	kubectl apply -f crd.yaml        the CRD is stored, status empty
//	  controller: names free?        status.acceptedNames, NamesAccepted=True
//	  controller: serve              registry.Register(crontabs): discovery, REST paths, OpenAPI
//	                                 Established=True  (kubectl wait --for condition=established)
//	kubectl get crontabs             a custom resource store like any other, objects are JSON
//	kubectl delete crd ...           deletionTimestamp, Terminating=True, finalizer
//	                                 customresourcecleanup.apiextensions.k8s.io
//	  controller: delete objects     Terminating=True InstanceDeletionInProgress; every
//	                                 CronTab deleted (still served: get, list, watch and
//	                                 delete work, creates are refused), and once none is
//	                                 left, InstanceDeletionCompleted and the finalizer
//	                                 removed: the CRD is gone
//	  controller: unserve            registry.Unregister: discovery drops it, open
//	                                 watches of crontabs end
//
// Custom resources are *unstructured.Unstructured: JSON trees, checked
// against the version's structural schema (schema.go) instead of a Go type.
// The validator is written here rather than taken from
// apiextensions-apiserver/pkg/apiserver/validation, which would bring
// kube-openapi's validator, CEL (cel-go) and the apiserver libraries into
// the browser build; it covers what a structural schema may say (type,
// properties, required, enum, minimum/maximum, pattern, lengths, items,
// additionalProperties, nullable, default, allOf, anyOf, oneOf, not,
// x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string) with
// upstream's wording. CEL validation rules
// (x-kubernetes-validations) and conversion webhooks are not served.
package apiextensions
