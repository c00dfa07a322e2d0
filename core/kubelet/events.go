package kubelet

// Event reasons the kubelet records, with upstream's names
// (pkg/kubelet/events/event.go). `kubectl describe pod` lists them at the
// bottom; their messages follow Kubernetes 1.37, the version this kubelet
// reports (see the message formats where they are recorded).
const (
	// Container events.
	EventCreatedContainer       = "Created"
	EventStartedContainer       = "Started"
	EventFailedToCreate         = "Failed" // also "Failed to pull image ..."
	EventKillingContainer       = "Killing"
	EventBackOffStartContainer  = "BackOff"
	EventPullingImage           = "Pulling"
	EventPulledImage            = "Pulled"
	EventBackOffPullImage       = "BackOff"
	EventErrImageNeverPull      = "ErrImageNeverPull"
	EventFailedToInspectImage   = "InspectFailed"
	EventFailedCreatePodSandBox = "FailedCreatePodSandBox"
	EventSandboxChanged         = "SandboxChanged"
	EventContainerUnhealthy     = "Unhealthy"
	EventContainerProbeWarning  = "ProbeWarning"

	// Volume events.
	EventFailedMountVolume = "FailedMount"

	// Node events.
	EventStartingKubelet      = "Starting"
	EventNodeReady            = "NodeReady"
	EventNodeHasSufficientMem = "NodeHasSufficientMemory"
	EventNodeHasNoDiskPress   = "NodeHasNoDiskPressure"
	EventNodeHasSufficientPID = "NodeHasSufficientPID"
)

// Reasons of a container's state.waiting, as `kubectl get pods` shows them in
// the STATUS column (pkg/kubelet/images/types.go, pkg/kubelet/container/sync_result.go,
// pkg/kubelet/kubelet_pods.go).
const (
	ReasonContainerCreating          = "ContainerCreating"
	ReasonPodInitializing            = "PodInitializing"
	ReasonErrImagePull               = "ErrImagePull"
	ReasonImagePullBackOff           = "ImagePullBackOff"
	ReasonErrImageNeverPull          = "ErrImageNeverPull"
	ReasonInvalidImageName           = "InvalidImageName"
	ReasonCrashLoopBackOff           = "CrashLoopBackOff"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonCreateContainerError       = "CreateContainerError"
	ReasonRunContainerError          = "RunContainerError"
)

// Reasons of pod conditions (pkg/kubelet/status/generate.go).
const (
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonPodCompleted             = "PodCompleted"
)
