// Package kubelet is the node agent: one Kubelet per node registers the
// node with the API server, keeps reporting that the node is alive, and runs
// the pods the scheduler bound to it.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/kubelet, mainly
//
//   - kubelet.go: the Kubelet, its main loop and SyncPod / SyncTerminatingPod;
//   - kubelet_node_status.go and nodestatus/setters.go: registerWithAPIServer
//     and the node's status (capacity, conditions, addresses, nodeInfo, images);
//   - pod_workers.go: one worker per pod, so a slow pod never holds up another;
//   - kuberuntime/kuberuntime_manager.go and kuberuntime_container.go: what to
//     do with a pod's containers (computePodActions) and how (startContainer,
//     killContainer), through the CRI;
//   - images/image_manager.go: imagePullPolicy, pulls and their back-off;
//   - status/status_manager.go and kubelet_pods.go: the pod's status
//     (generateAPIPodStatus, getPhase) and writing it to the API server;
//   - kubelet_pods.go (GetContainerLogs): what `kubectl logs` reads;
//     makeEnvironmentVariables: a container's environment;
//   - prober/: startup, liveness and readiness probes;
//   - volumemanager/ and the plugins of pkg/volume (emptydir, configmap,
//     secret, downwardapi, projected): a pod's volumes;
//   - server/stats: the usage `kubectl top` shows.
//
// The container runtime is package cri (wazero instead of containerd) and the
// pod network is package cni (host-local IPAM behind a bridge).
//
// # A pod's path on a node
//
// The kubelet never receives orders. It watches the API server for pods whose
// spec.nodeName is its node, and for each one it compares what the pod asks
// for with what the runtime has, then closes the gap. Here is `kubectl run
// web --image=hello:1.0` after the scheduler bound it to node-1:
//
//	API server                         kubelet on node-1                     runtime (cri) / network (cni)
//	──────────                         ─────────────────                     ─────────────────────────────
//	pod web: nodeName=node-1 ─watch──▶ queue web, a worker syncs it
//	                          ◀─status─ Pending; hello: Waiting ContainerCreating
//	                                   set up the sandbox ─────────────────▶ CNI ADD: 10.244.1.2
//	                                   imagePullPolicy IfNotPresent, image missing:
//	          event Pulling  ◀──────── "Pulling image "hello:1.0""  ───────▶ PullImage (compile once)
//	          event Pulled   ◀──────── "Successfully pulled image ..."
//	                                   CreateContainer ────────────────────▶ container a1b2... (Created)
//	          event Created  ◀──────── "Container created"
//	                                   StartContainer ─────────────────────▶ the guest runs
//	          event Started  ◀──────── "Container started"
//	                          ◀─status─ Running, podIP 10.244.1.2, Ready True,
//	                                   hello: Running, containerID wasm://a1b2...
//	  ...
//	                                   the guest exits ◀──────── ContainerStopped event
//	                                   restartPolicy Always: start it again (restartCount 1);
//	                                   exits again: wait 10 s, 20 s, 40 s ... (CrashLoopBackOff)
//	  ...
//	kubectl delete pod web:
//	deletionTimestamp set ───watch───▶ event Killing "Stopping container hello"
//	                                   StopContainer ──────────────────────▶ exit 137
//	                                   CNI DEL ────────────────────────────▶ 10.244.1.2 is free
//	                          ◀─status─ the final status
//	pod gone                 ◀─delete─ DELETE with gracePeriodSeconds=0 (UID precondition)
//	                                   RemoveContainer ────────────────────▶ container and log gone
//
// Every sync starts again from what is true: the pod from the informer's
// cache, the containers from the runtime (ListContainers). What the kubelet
// remembers between syncs is small: why a container is waiting (the reason
// cache), restart back-offs, and the last status it generated. So it does
// not matter which event (a watch event, a container exit, a back-off timer,
// the once-a-minute resync) woke a pod's worker up.
//
// # Restarts
//
// A container is never restarted in place: a new container is created with
// attempt (restartCount) + 1 and the exited one is kept, so the status can
// show lastState.terminated and `kubectl logs --previous` can read it. Older
// ones are removed. Under restartPolicy Always (and OnFailure for a non-zero
// exit) the first restart is immediate; after that the container waits 10 s,
// then 20 s, 40 s ... up to 5 min after each exit, showing
// Waiting/CrashLoopBackOff. A container that ran for 10 minutes starts over
// at 10 s. Under restartPolicy Never (or OnFailure after exit 0) the
// container stays terminated, and the pod ends Succeeded when every
// container exited 0, else Failed; its IP is then released.
//
// # The node
//
// On start the kubelet creates its Node (labels kubernetes.io/hostname, os
// "wasip1", arch "wasm32"; spec.podCIDR) or updates the one it finds, and
// posts its status: capacity and allocatable, the MemoryPressure,
// DiskPressure, PIDPressure and Ready conditions, addresses, nodeInfo and the
// images it has pulled. Every 10 s (nodeStatusUpdateFrequency) it posts the
// status again, which moves each condition's lastHeartbeatTime: that is how
// the control plane knows the node is alive. A stopped kubelet (Run's context
// cancelled) stops the heartbeats but not the containers, as on a real node;
// Run can be called again.
//
// # What a container gets
//
// Before a container is created its volumes are set up (volumes.go: emptyDir,
// configMap, secret, downwardAPI, projected; a missing ConfigMap is a
// FailedMount event and the pod waits in ContainerCreating) and its
// environment is resolved (env.go: env, envFrom, the downward API, Service
// variables; a missing ConfigMap is CreateContainerConfigError). Its limits
// go to the runtime: limits.memory caps the guest's memory (past it, the
// container ends OOMKilled with 137), limits.cpu its share of a core; a
// guest without a limit still never grows past its node's memory. When
// it exits, its termination message comes from its terminationMessagePath,
// or its log (termination.go).
//
// # Eviction
//
// The eviction manager (eviction.go) compares the pods' memory with the
// node's allocatable every 10 s; below memory.available<100Mi it evicts
// one pod (over its requests first, then lowest priority, then the
// biggest above requests), which ends Failed with reason Evicted, and the
// node reports MemoryPressure (tainted memory-pressure by the node
// lifecycle controller) until 5 minutes pass without pressure.
//
// # Probes, exec, metrics
//
// The prober (prober.go) runs startup, liveness and readiness probes: exec
// (a second instance of the image), httpGet (through the container's CGI
// handler) and tcpSocket (approximated: see there). A failed liveness probe
// restarts the container; readiness decides the Ready condition, and so
// whether the pod's IP is in its Services' endpoints. Exec (exec.go) serves
// `kubectl exec`; ResourceMetrics (metrics.go) what `kubectl top` shows.
//
// # Not yet
//
// Streaming exec (and stdin), attach and port-forward; restartable init
// containers (sidecars); lifecycle hooks (postStart, preStop);
// activeDeadlineSeconds; static pods; pod resizing; admission refusing
// BestEffort pods under MemoryPressure; disk and PID eviction; emptyDir in a
// browser, which has no file system for its directory. The node Lease
// (renewed every 10 s) is in lease.go.
package kubelet
