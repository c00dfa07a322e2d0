//go:build js

package cluster_test

import "time"

var processStart = time.Now()

// processCPU is wall time under js/wasm: the process is one thread, so
// its wall time is its CPU time while it works.
func processCPU() time.Duration { return time.Since(processStart) }
