//go:build !js

package yield

import "runtime"

// Now lets other goroutines run. Natively that is all it needs to do.
func Now() { runtime.Gosched() }
