//go:build !js

package yield

// Now does nothing natively: the Go runtime preempts a goroutine that runs
// too long, so the informers, the binding goroutines and the API server run
// beside the scheduling loop anyway. Handing the processor away on purpose
// (runtime.Gosched) would only put the loop behind every runnable binding
// goroutine, once per few dozen nodes.
func Now() {}
