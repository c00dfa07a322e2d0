// Package core is kubetab's Kubernetes control plane: a plain Go library that
// runs the same way natively and in a browser tab (GOOS=js, in a Web Worker).
// Nothing under core/ imports syscall/js; the browser glue lives in wasm/.
//
// # Organization
//
// The folders are named after the components a learner meets in the
// architecture diagram, so "where does the scheduler pick a node?" has one
// answer. Follow a Deployment from kubectl to a running container:
//
//   - kubectl: the CLI the console runs. It is only an HTTP client: it asks
//     the API server for discovery, sends JSON, and draws the Tables the server
//     builds (printers).
//   - apiserver: kube-apiserver's HTTP handler. It parses the path into a
//     verb and a resource, decodes the body (JSON, YAML or protobuf), and hands
//     the object to the registry.
//   - apiserver/authz: who may do what. Every request is authenticated
//     (apiserver/authn.go: the kubeconfig's bearer token is the admin, in
//     system:masters; no token is system:anonymous; kubectl --as
//     impersonates someone else) and authorized by RBAC (Roles,
//     ClusterRoles and their bindings, with the default policy of
//     apiserver/registry/rbac_bootstrap.go) and, for kubelets, the Node
//     authorizer. The components' in-process requests too: each acts as its
//     own user (cluster/identities.go, client/identity.go). Writing a role
//     or binding is checked again, in the registry (rbac_escalation.go): no
//     one grants what they do not hold.
//   - apiserver/registry: defaulting, validation and admission per resource
//     (the "strategies"), resourceVersion checks, graceful deletion and
//     finalizers; then a write to the store.
//   - store: etcd. A global revision, compare-and-swap writes, watches from a
//     revision. Keys look like /registry/deployments/default/web; values are
//     the objects in protobuf, as kube-apiserver writes them.
//   - snapshot: the store's snapshot carried elsewhere (etcdctl snapshot
//     save/restore): the page's saved cluster, export files and share links;
//     cluster.Config.Snapshot starts a whole cluster from one.
//   - client: how the components below talk to the API server in-process:
//     typed clients, informers (list + watch caches) and work queues.
//   - controller/deployment: sees the Deployment, writes a ReplicaSet named
//     web-<pod-template-hash>.
//   - controller/replicaset: sees the ReplicaSet, creates Pods with no
//     nodeName.
//   - scheduler: sees Pods with no node, filters and scores the nodes with
//     plugins, and binds the pod to the best one (pods/binding).
//   - kubelet: one per node. Sees the Pods bound to its node; kubelet/cni gives
//     each an IP from the node's podCIDR; kubelet/cri pulls the image (a .wasm
//     module) and starts the container in wazero; the kubelet reports status
//     and serves logs.
//   - controller/garbagecollector: deletes what is left when an owner goes.
//
// And around that path:
//
//   - controller/namespace, nodelifecycle (with tainteviction), job, endpoint,
//     endpointslice, disruption (PodDisruptionBudgets' status, which
//     evictions and `kubectl drain` respect), podgc, daemon (a pod per
//     node, placed through the scheduler by node affinity), statefulset
//     (web-0, web-1 … one at a time) and replication
//     (ReplicationControllers): the rest of the controller manager, started
//     from one table (cluster/controllermanager.go). DaemonSets and
//     StatefulSets remember their templates in ControllerRevisions, which
//     `kubectl rollout history` and `undo` read.
//   - controller/resourcequota keeps ResourceQuotas' status.used (the
//     API server's ResourceQuota and LimitRanger admission plugins enforce
//     quotas and LimitRanges, apiserver/registry/admission_quota.go), and
//     controller/podautoscaler is the HorizontalPodAutoscaler: it scales a
//     workload through its scale subresource from the pods' usage that
//     `kubectl top` shows (metrics.k8s.io). controller/clusterroleaggregation
//     fills the aggregated ClusterRoles (admin, edit, view) from the roles
//     their labels select.
//   - proxy: kube-proxy, one per node: Service virtual IPs and NodePorts to
//     ready endpoints; dns: the cluster DNS (CoreDNS's records); curl: the
//     console's curl over that network.
//   - printers: the columns of `kubectl get`, as kube-apiserver prints them.
//   - etcdctl, ssh and node: console commands that show the store as it
//     is, stop or start a node's kubelet, and add or remove whole nodes.
//   - cluster: wires all of the above into one process: cluster.New, Start.
//   - console: the page's small shell (pipes, redirections, here-documents,
//     ls, cat, grep ...) over an in-memory working directory; session: a
//     cluster and a console with every command, as the page and the lesson
//     verifier both use it.
//   - trace: the hops of every request, in order, from kubectl to the
//     kubelet's CNI and CRI calls; the console's `trace` command prints
//     them, so the path above can be watched as it happens. The API server
//     serves them, the store's keys and step mode as flow.kubetab.dev
//     resources (hops, storekeys, stepmodes, pendingwrites; docs/api.md).
//   - step: step mode. A pausable clock under every component, and the
//     gate at the API server that holds the components' writes until the
//     learner releases them one at a time.
//   - eventloop: in the browser the whole control plane shares one thread;
//     the scheduler's loops and the guests hand it back to the JavaScript
//     event loop every few milliseconds, so the page never freezes.
//
// Every arrow between components goes through the API server: the deployment
// controller never calls the replica set controller; it writes an object that
// the other one watches. That is the lesson of Kubernetes' design, and kubetab
// keeps it.
package core
