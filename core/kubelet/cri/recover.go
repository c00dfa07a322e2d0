package cri

import (
	"errors"
	"fmt"
	"maps"
	"time"
)

// A machine that reboots loses its processes, not its container runtime's
// records: containerd keeps its containers' metadata on disk, and at start
// (upstream containerd internal/cri/server/restart.go, recover) it loads
// every container again; one whose task (process) is gone is marked exited
// with exit code 255 and reason "Unknown", finished at the time it was
// found. The kubelet then sees a pod whose sandbox is not ready and whose
// containers exited, re-creates the sandbox ("Pod sandbox changed, it will
// be killed and re-created.") and restarts the containers as its
// restartPolicy says: restartCount + 1, lastState.terminated Unknown 255.
//
// A kubetab node keeps no disk of its own, so whoever restarts the node
// hands its runtime those records (core/cluster takes them from what the
// node's kubelet last reported); Recover installs them.

// Exit code and reason of a container whose process was lost with the
// machine (containerd's unknownExitCode, unknownExitReason).
const (
	ExitCodeUnknown = 255
	ReasonUnknown   = "Unknown"
)

// RecoveredContainer is one container record that survived a reboot.
type RecoveredContainer struct {
	// ID is the container's ID as it was ("wasm://" not included).
	ID           string
	PodUID       string
	PodName      string
	PodNamespace string
	Name         string
	Attempt      uint32
	// Image is the reference it was created from; ImageRef its content.
	Image, ImageRef string
	// CreatedAt and StartedAt are when it was created and started.
	CreatedAt, StartedAt time.Time
	// Exited is true for a container that had exited before the reboot,
	// with its ExitCode, Reason, Message and FinishedAt. A container that
	// was running has lost its process: it is recovered exited, with
	// ExitCodeUnknown and ReasonUnknown, finished now.
	Exited     bool
	ExitCode   int32
	Reason     string
	Message    string
	FinishedAt time.Time
	// Labels are the container's labels as it was created with them.
	Labels map[string]string
}

// ErrRecover wraps why Recover refused a record.
var ErrRecover = errors.New("cri: cannot recover container")

// Recover installs containers that survived a reboot, all exited: they
// cannot run again (a new container replaces each), but they are listed,
// their status read, their (empty) logs opened and they can be removed, as
// containerd's recovered containers can. A record without an ID, pod UID
// or name, or with an ID the runtime has, is an error and nothing is
// installed.
func (r *Runtime) Recover(records []RecoveredContainer) error {
	now := r.clock.Now()
	made := make([]*container, 0, len(records))
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, rc := range records {
		switch {
		case rc.ID == "" || rc.PodUID == "" || rc.Name == "":
			return fmt.Errorf("%w: %q of pod %q: ID, pod UID and name are required", ErrRecover, rc.Name, rc.PodUID)
		case r.containers[rc.ID] != nil || seen[rc.ID]:
			return fmt.Errorf("%w: container %s exists", ErrRecover, rc.ID)
		}
		seen[rc.ID] = true
		c := &container{
			id: rc.ID,
			cfg: ContainerConfig{PodUID: rc.PodUID, PodName: rc.PodName, PodNamespace: rc.PodNamespace, Name: rc.Name, Attempt: rc.Attempt, Image: rc.Image,
				Labels: maps.Clone(rc.Labels)},
			image:     rc.Image,
			imageRef:  rc.ImageRef,
			clock:     r.clock,
			cache:     r.cache,
			log:       newContainerLog(r.maxLogBytes),
			procs:     map[int32]*process{},
			root:      newRootFS(nil, nil, nil), // its files were in the lost process's layer
			state:     ContainerExited,
			createdAt: rc.CreatedAt,
			startedAt: rc.StartedAt,
		}
		c.startErr = "the container was recovered after a reboot and cannot start again"
		if rc.Exited {
			c.exitCode, c.reason, c.message, c.finishedAt = rc.ExitCode, rc.Reason, rc.Message, rc.FinishedAt
		} else {
			c.exitCode, c.reason, c.finishedAt = ExitCodeUnknown, ReasonUnknown, now
		}
		if c.createdAt.IsZero() {
			c.createdAt = c.startedAt
		}
		made = append(made, c)
	}
	for _, c := range made {
		r.addLocked(c)
	}
	return nil
}
