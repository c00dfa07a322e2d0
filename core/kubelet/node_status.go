package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/kubelet/cni"
)

// What the node says about itself in labels and status.nodeInfo. A kubetab
// node runs WASI (preview 1) modules on a 32-bit WebAssembly machine, so that
// is its operating system and architecture: a pod with
// nodeSelector kubernetes.io/os: linux does not fit here, as it would not fit
// a Windows node.
const (
	OperatingSystem = "wasip1"
	Architecture    = "wasm32"
	osImage         = "kubetab (WebAssembly)"
	kernelVersion   = "wasi_snapshot_preview1"
	kubeletPort     = 10250
	// maxImagesInNodeStatus and maxNamesPerImageInNodeStatus bound
	// status.images, as upstream (nodeStatusMaxImages, MaxNamesPerImageInNodeStatus).
	maxImagesInNodeStatus        = 50
	maxNamesPerImageInNodeStatus = 5
)

// Node condition reasons and messages, upstream's (pkg/kubelet/nodestatus/setters.go).
const (
	reasonKubeletReady              = "KubeletReady"
	messageKubeletReady             = "kubelet is posting ready status"
	reasonKubeletHasSufficientMem   = "KubeletHasSufficientMemory"
	messageKubeletHasSufficientMem  = "kubelet has sufficient memory available"
	reasonKubeletHasNoDiskPressure  = "KubeletHasNoDiskPressure"
	messageKubeletHasNoDiskPressure = "kubelet has no disk pressure"
	reasonKubeletHasSufficientPID   = "KubeletHasSufficientPID"
	messageKubeletHasSufficientPID  = "kubelet has sufficient PID available"
)

// nodeRef is the object node events are about. Upstream the kubelet's node
// reference uses the node's name as its UID.
func (kl *Kubelet) nodeRef() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: kl.nodeName, UID: types.UID(kl.nodeName)}}
}

// registerWithRetry registers the node until it works or ctx is done
// (upstream: registerWithAPIServer, retried with a back-off up to 7 s).
func (kl *Kubelet) registerWithRetry(ctx context.Context) bool {
	delay := 100 * time.Millisecond
	for {
		if err := kl.registerWithAPIServer(ctx); err == nil {
			return true
		}
		t := kl.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
		delay = min(2*delay, 7*time.Second)
	}
}

// registerWithAPIServer creates this node's Node object, or, when it exists
// (the kubelet restarted), brings its labels and podCIDR up to date and posts
// a fresh status.
func (kl *Kubelet) registerWithAPIServer(ctx context.Context) error {
	nodes := kl.client.Nodes()
	existing, err := nodes.Get(ctx, "", kl.nodeName)
	if apierrors.IsNotFound(err) {
		node := kl.initialNode()
		events := kl.setNodeStatus(node, kl.clock.Now())
		created, err := nodes.Create(ctx, node)
		if err == nil {
			kl.adoptPodCIDR(created)
			kl.heartbeats.Add(1)
			kl.recordNodeEvents(events)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("register node %q: %w", kl.nodeName, err)
		}
		if existing, err = nodes.Get(ctx, "", kl.nodeName); err != nil {
			return fmt.Errorf("register node %q: %w", kl.nodeName, err)
		}
	} else if err != nil {
		return fmt.Errorf("register node %q: %w", kl.nodeName, err)
	}

	// Reconcile what the kubelet owns in the existing node's spec and labels
	// (upstream: reconcileCMADAnnotationWithExistingNode, updateDefaultLabels).
	updated := existing.DeepCopy()
	changed := false
	for k, v := range kl.nodeLabels() {
		if updated.Labels[k] != v {
			if updated.Labels == nil {
				updated.Labels = map[string]string{}
			}
			updated.Labels[k] = v
			changed = true
		}
	}
	kl.mu.Lock()
	cidr := kl.podCIDR
	kl.mu.Unlock()
	if updated.Spec.PodCIDR == "" && cidr != "" {
		updated.Spec.PodCIDR, updated.Spec.PodCIDRs = cidr, []string{cidr}
		changed = true
	}
	if changed {
		if existing, err = nodes.Update(ctx, updated); err != nil {
			return fmt.Errorf("register node %q: %w", kl.nodeName, err)
		}
	}
	kl.adoptPodCIDR(existing)
	return kl.updateNodeStatus(ctx)
}

// nodeLabels are the labels the kubelet sets on its node.
func (kl *Kubelet) nodeLabels() map[string]string {
	l := map[string]string{
		corev1.LabelHostname:   kl.nodeName,
		corev1.LabelOSStable:   OperatingSystem,
		corev1.LabelArchStable: Architecture,
	}
	for k, v := range kl.labels {
		l[k] = v
	}
	return l
}

// initialNode is the Node the kubelet creates (upstream: initialNode).
func (kl *Kubelet) initialNode() *corev1.Node {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: kl.nodeName, Labels: kl.nodeLabels()}}
	for _, t := range kl.taints {
		node.Spec.Taints = append(node.Spec.Taints, *t.DeepCopy())
	}
	kl.mu.Lock()
	if kl.podCIDR != "" {
		node.Spec.PodCIDR, node.Spec.PodCIDRs = kl.podCIDR, []string{kl.podCIDR}
	}
	kl.mu.Unlock()
	return node
}

// adoptPodCIDR sets up the pod network from the node's spec.podCIDR when the
// kubelet has none yet (Config.PodCIDR was empty, or another range was
// assigned before any pod got an address).
func (kl *Kubelet) adoptPodCIDR(node *corev1.Node) {
	cidr := node.Spec.PodCIDR
	if cidr == "" {
		return
	}
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if kl.network != nil && (kl.podCIDR == cidr || kl.network.Len() > 0) {
		return
	}
	n, err := cni.New(cidr)
	if err != nil {
		return // not a range this node can use; pods will report the missing network
	}
	kl.network, kl.podCIDR = n, n.Subnet().String()
}

// heartbeatLoop posts the node status every statusFrequency (upstream:
// syncNodeStatus every nodeStatusUpdateFrequency).
func (kl *Kubelet) heartbeatLoop(ctx context.Context, t clock.Ticker) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			_ = kl.updateNodeStatus(ctx) // retried at the next period
		}
	}
}

// updateNodeStatus recomputes the node's status and writes it, retrying on
// conflicts (upstream: updateNodeStatus / tryUpdateNodeStatus). A deleted
// Node is not created again: as upstream, only a restarted kubelet registers.
func (kl *Kubelet) updateNodeStatus(ctx context.Context) error {
	var err error
	for i := 0; i < nodeStatusUpdateRetry; i++ {
		var node *corev1.Node
		node, err = kl.client.Nodes().Get(ctx, "", kl.nodeName)
		if err != nil {
			return fmt.Errorf("update node status: %w", err)
		}
		kl.adoptPodCIDR(node)
		updated := node.DeepCopy()
		events := kl.setNodeStatus(updated, kl.clock.Now())
		if _, err = kl.client.Nodes().UpdateStatus(ctx, updated); err == nil {
			kl.heartbeats.Add(1)
			kl.recordNodeEvents(events)
			return nil
		}
		if !apierrors.IsConflict(err) {
			break
		}
	}
	return fmt.Errorf("update node status: %w", err)
}

// nodeEvent is a node event to record once the status it describes is written.
type nodeEvent struct{ reason, message string }

func (kl *Kubelet) recordNodeEvents(events []nodeEvent) {
	for _, e := range events {
		kl.recorder.Event(kl.nodeRef(), corev1.EventTypeNormal, e.reason, e.message)
	}
}

// setNodeStatus fills node.status, as upstream's chain of setters does
// (pkg/kubelet/nodestatus/setters.go: NodeAddress, MachineInfo, VersionInfo,
// Images, DaemonEndpoints, MemoryPressureCondition, DiskPressureCondition,
// PIDPressureCondition, ReadyCondition). It returns the events of the
// conditions that changed.
func (kl *Kubelet) setNodeStatus(node *corev1.Node, now time.Time) []nodeEvent {
	s := &node.Status
	s.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: kl.nodeIP},
		{Type: corev1.NodeHostName, Address: kl.nodeName},
	}
	s.Capacity = kl.capacity.DeepCopy()
	s.Allocatable = kl.capacity.DeepCopy()
	s.NodeInfo = corev1.NodeSystemInfo{
		MachineID:               machineID(kl.nodeName),
		SystemUUID:              systemUUID(kl.nodeName),
		BootID:                  kl.bootID,
		KernelVersion:           kernelVersion,
		OSImage:                 osImage,
		ContainerRuntimeVersion: containerRuntimeVersion(),
		KubeletVersion:          Version,
		OperatingSystem:         OperatingSystem,
		Architecture:            Architecture,
	}
	s.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}}
	s.Images = kl.nodeImages()

	var events []nodeEvent
	hb := metav1.NewTime(now.Truncate(time.Second))
	set := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message, event string) {
		for i := range s.Conditions {
			c := &s.Conditions[i]
			if c.Type != t {
				continue
			}
			if c.Status != status {
				c.LastTransitionTime = hb
				events = append(events, nodeEvent{event, fmt.Sprintf("Node %s status is now: %s", kl.nodeName, event)})
			}
			c.Status, c.Reason, c.Message, c.LastHeartbeatTime = status, reason, message, hb
			return
		}
		s.Conditions = append(s.Conditions, corev1.NodeCondition{
			Type: t, Status: status, Reason: reason, Message: message, LastHeartbeatTime: hb, LastTransitionTime: hb,
		})
		events = append(events, nodeEvent{event, fmt.Sprintf("Node %s status is now: %s", kl.nodeName, event)})
	}
	if kl.eviction.underMemoryPressure() {
		set(corev1.NodeMemoryPressure, corev1.ConditionTrue, reasonKubeletHasInsufficientMem, messageKubeletHasInsufficientMem, EventNodeHasInsufficientMemory)
	} else {
		set(corev1.NodeMemoryPressure, corev1.ConditionFalse, reasonKubeletHasSufficientMem, messageKubeletHasSufficientMem, EventNodeHasSufficientMem)
	}
	set(corev1.NodeDiskPressure, corev1.ConditionFalse, reasonKubeletHasNoDiskPressure, messageKubeletHasNoDiskPressure, EventNodeHasNoDiskPress)
	set(corev1.NodePIDPressure, corev1.ConditionFalse, reasonKubeletHasSufficientPID, messageKubeletHasSufficientPID, EventNodeHasSufficientPID)
	set(corev1.NodeReady, corev1.ConditionTrue, reasonKubeletReady, messageKubeletReady, EventNodeReady)
	return events
}

// nodeImages is status.images: the node's images, biggest first, each named
// by its digests then its tags (upstream: the Images setter).
func (kl *Kubelet) nodeImages() []corev1.ContainerImage {
	imgs := kl.runtime.ListImages()
	sort.SliceStable(imgs, func(i, j int) bool { return imgs[i].Size > imgs[j].Size })
	if len(imgs) > maxImagesInNodeStatus {
		imgs = imgs[:maxImagesInNodeStatus]
	}
	var out []corev1.ContainerImage
	for _, img := range imgs {
		names := append(append([]string(nil), img.RepoDigests...), img.RepoTags...)
		if len(names) > maxNamesPerImageInNodeStatus {
			names = names[:maxNamesPerImageInNodeStatus]
		}
		out = append(out, corev1.ContainerImage{Names: names, SizeBytes: int64(img.Size)})
	}
	return out
}

// machineID is a stable /etc/machine-id for a node name: 32 hex digits.
func machineID(name string) string {
	sum := sha256.Sum256([]byte("kubetab-machine-id:" + name))
	return hex.EncodeToString(sum[:16])
}

// systemUUID is the machine ID in UUID form, as dmidecode prints it.
func systemUUID(name string) string {
	m := strings.ToUpper(machineID(name))
	return m[0:8] + "-" + m[8:12] + "-" + m[12:16] + "-" + m[16:20] + "-" + m[20:32]
}

// containerRuntimeVersion is "<runtime name>://<version>", as containerd
// reports "containerd://2.1.0": here wazero and the version compiled in.
func containerRuntimeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				return "wazero://" + strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "wazero://" + wazeroVersion
}

// wazeroVersion is go.mod's wazero version, for binaries without module
// build information (test binaries).
const wazeroVersion = "1.12.0"
