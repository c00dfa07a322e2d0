//go:build !js

package cluster_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system): what
// a benchmark on a shared machine reports besides wall time, since in the
// tab, one thread, every CPU-second is a second of the page's wait.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
