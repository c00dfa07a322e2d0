//go:build !js

package cri_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system), so that
// a benchmark on a busy machine measures work, not waiting for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
