//go:build !js

package cri

// defaultYield is nil natively: goroutines are preempted and there is no
// event loop to serve.
func defaultYield() func() { return nil }
