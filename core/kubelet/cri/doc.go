// Package cri is kubetab's container runtime: the part of a node that pulls
// images and runs containers, here WebAssembly (WASI preview1) modules run by
// wazero.
//
// Upstream counterpart: the Container Runtime Interface, the gRPC API between
// the kubelet and a runtime (k8s.io/cri-api/pkg/apis/runtime/v1/api.proto,
// services RuntimeService and ImageService), and a runtime that serves it, such
// as containerd's CRI plugin (internal/cri/server). The names here are the
// proto's names in small form: PullImage, ImageStatus, ListImages,
// CreateContainer, StartContainer, StopContainer, ContainerStatus,
// ListContainers, RemoveContainer, ExecSync, ContainerStats, and container
// events as in GetContainerEvents.
//
// # What the CRI is
//
// The kubelet does not run processes itself. It asks a container runtime, over
// the CRI, to do a few verbs, and it reads back states. For one pod with one
// container, the kubelet's pod worker (pkg/kubelet/kuberuntime) calls:
//
//	kubelet                                   runtime (this package)
//	───────                                   ──────────────────────
//	ImageStatus("hello") ────────────────────▶ not on this node
//	PullImage("hello") ──────────────────────▶ fetch from the catalog,
//	                                           compile once per process,
//	                                           record it in the node's image list
//	CreateContainer(pod, "web", image, ...) ─▶ id (state Created)
//	StartContainer(id) ──────────────────────▶ guest runs in its own goroutine
//	                                           (state Running)
//	    ... kubectl logs ── ReadLogs(id) ────▶ timestamped stdout/stderr lines
//	                    ◀── event: ContainerStopped (the guest exited)
//	ContainerStatus(id) ─────────────────────▶ Exited, exit code, reason
//	StopContainer(id, grace) ────────────────▶ the guest is killed (exit 137)
//	RemoveContainer(id) ─────────────────────▶ gone, logs too
//
// A container is never restarted by the runtime: when a pod's restartPolicy
// says "again", the kubelet creates a new container with Attempt+1 and keeps the
// old, exited one around so `kubectl logs --previous` can read it.
//
// There is no pod sandbox here. Upstream, RunPodSandbox makes the shared network
// namespace (the "pause" container) that the CNI plugin wires up; in kubetab the
// kubelet's cni package hands out pod IPs and a container names its pod directly
// (ContainerConfig.PodUID).
//
// # Images and "pulling"
//
// An image is one .wasm module, named like a container image ("hello:1.0") and
// identified by the sha256 digest of its bytes, as an OCI image is identified by
// the digest of its manifest. An ImageSource (package wasm/images, the "registry")
// resolves a reference to bytes. Pulling has two halves, as it does on a real
// node:
//
//   - Each node (each Runtime) keeps its own list of pulled images. This is what
//     imagePullPolicy: IfNotPresent, the "Pulling"/"Pulled" events and the
//     scheduler's ImageLocality score look at.
//   - The expensive part, turning the module into wazero's runnable form
//     (compilation), is done once per digest per process and shared by every
//     node through the CompileCache, like a registry mirror next to the
//     cluster: the first pull anywhere compiles, later pulls on other nodes are
//     cheap.
//
// A module must be a WASI command: it exports "_start" and "memory" and imports
// only wasi_snapshot_preview1 functions (and the kubetab_host functions of
// host.go). Anything else fails the pull with ErrInvalidImage, before any
// container is created.
//
// # Containers
//
// Each container's own process (PID 1) is one instance of the program its
// argv names, with its own memory, argv (the image's Entrypoint and Cmd, or
// the pod's command and args), environment (HOSTNAME is the pod name, as containerd sets it from the
// sandbox's hostname) and stdout/stderr, captured line by line into the
// container's log with the time each line was written, as the kubelet's CRI log
// files are (2016-10-06T00:17:09.669794202Z stdout F hello).
//
// Each container has its own root file system, in memory natively as in a
// tab (rootfs.go): the image's files (a program at /usr/local/bin/<name>,
// the userland in /bin), the files the kubelet places (/etc/hostname,
// /etc/hosts, /etc/resolv.conf, the termination log), a generated /proc,
// and the volumes (Mounts: a MemDir for an emptyDir, any fs.FS read-only
// for configMap, secret, downward API; an fs.FS that reads the current
// content makes updates visible to a guest that re-reads). No guest path
// leads to a host file. An image's config (Entrypoint, Cmd, Env,
// WorkingDir, ExposedPorts) says what runs; the pod's command and args
// override it as upstream, and argv[0] is looked up on PATH in the root, as
// runc does (127 "executable file not found in $PATH", 126 not runnable).
//
// # Instrumentation: the guest hands the thread back
//
// When an image is pulled, the CompileCache rewrites the module (package
// instrument): every loop header, and the entry of every function that calls
// another, counts down a budget, and at zero calls kubetab.yield, a host
// function of this package (guest.go). memory.grow becomes a call to
// kubetab.memory_grow. That is what makes a guest behave like a process on a
// preemptive kernel, even on js/wasm where nothing preempts a goroutine:
//
//	guest loop ─▶ budget 0 ─▶ kubetab.yield ─┬─ stopped? exit 137
//	                                         ├─ CPU limit used up? sleep
//	                                         ├─ runtime.Gosched
//	                                         ├─ every 8 ms: eventloop.MaybeTurn
//	                                         │  (the JS event loop's turn)
//	                                         └─ next budget: ~1 ms of guest time
//
// Measured with go test -bench 'GuestSpeed|Compile|KillLatency' (2-core
// machine, loaded): on the tightest loop of the catalog (cpu --work, ~22
// instructions an iteration) the checks cost 14% per CPU second natively and
// nothing measurable under Node (0.57 M iterations/s both ways); the first
// pull of an image takes ~1 ms longer natively (rewriting a 34 KB module:
// 0.35 ms; compiling the bigger result: the rest) and ~15-20 ms longer under
// Node; a stop ends a spinning guest in ~0.4 ms natively and ~2.5 ms under
// Node.
//
// Limits:
//
//   - resources.limits.memory becomes the guest's memory limit. A module
//     whose initial memory is already above it can never run: it exits at
//     once with 137 and reason OOMKilled. A guest that grows its memory past
//     the limit is killed there, 137 OOMKilled, as the kernel's OOM killer
//     ends a process whose cgroup is full. The limit counts the container's
//     processes together (its own, execs, spawned programs), as a cgroup
//     does. Without a limit a guest is still bounded: every page is also
//     charged to its node's memory and the host's (Config.Memory,
//     Config.HostMemory; memory.go), and a grow that does not fit there
//     is OOMKilled too, so no guest holds more than its node has.
//   - resources.limits.cpu (CPULimitMillicores) throttles the guest: a token
//     bucket of CPU time refilled at the limit's rate and one CFS period
//     (100 ms) deep, charged at every yield; a guest in debt sleeps it off.
//     A container limited to 200m gets a fifth of a core (of the one thread,
//     in a tab), and ContainerStats reports its usage and throttled time.
//   - Deadline (the pod's activeDeadlineSeconds) kills the container when
//     the clock passes it.
//
// A cache made WithoutInstrumentation runs modules as they are: memory.grow
// past the limit then fails (malloc returns NULL), CPU limits are not
// enforced, and on js/wasm a guest looping without host calls cannot be
// stopped and freezes the tab. Tests run every image both ways and compare.
//
// # Time and stopping
//
// Guests read time from the injected clock (k8s.io/utils/clock): wall clock,
// monotonic clock and sleeps all go through it, so a fake clock in tests (or a
// paused cluster in the UI) also pauses the guests' sleeps. CPU accounting
// and CPU limits use real time. A stop cancels the guest's context: a
// sleeping guest wakes up at once, a busy one ends at its next yield (or, if
// plain, at wazero's next loop check, natively only). WASI preview1 has no
// signals, so there is no SIGTERM a guest could catch: a stop is always a
// kill, reported as upstream reports SIGKILL, exit code 137 (128+9) with
// reason "Error".
//
// # Exec and HTTP
//
// ExecSync (kubectl exec, exec probes) runs the program argv[0] names in the
// container's root (any WebAssembly module there: the image's program, a
// userland applet, one copied in) as another process of the container, with
// its env, root, mounts and limits, and captures its output; ExecTTY runs it
// on a terminal (tty.go) and Attach joins the container's own process
// (attach.go). The userland's extra system calls (spawn, kill, the network)
// are host functions (host.go). HTTPHandler serves HTTP the same way, one
// instance per request, CGI-style (WASI preview1 has no sockets; see
// HTTPHandler for why this model).
//
// # Telling the kubelet
//
// Upstream, the kubelet's PLEG relists containers every second, or (evented
// PLEG) reads a stream of ContainerEventResponse from GetContainerEvents. Here
// the kubelet passes Config.OnEvent and gets a ContainerEvent for every
// Created, Started, Stopped and Deleted, with the container's status at that
// moment; ListContainers and ContainerStatus remain the level-based truth to
// reconcile against.
//
// Exit codes and reasons, as the kubelet expects them from containerd:
//
//	guest returns or calls exit(0)       0    Completed
//	guest calls exit(n)                  n    Error
//	stopped (killed), or its Deadline    137  Error
//	memory above the limit               137  OOMKilled
//	trap "unreachable" (C abort())       134  Error   (as SIGABRT, 128+6)
//	any other trap (bad memory access)   139  Error   (as SIGSEGV, 128+11)
//	instantiation failed                 128  StartError
package cri
