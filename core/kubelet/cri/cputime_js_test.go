//go:build js

package cri_test

import "time"

var processStart = time.Now()

// processCPU is wall time under js/wasm: the process is one thread that is
// never idle while a guest runs.
func processCPU() time.Duration { return time.Since(processStart) }
