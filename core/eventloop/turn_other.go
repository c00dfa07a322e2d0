//go:build !js

package eventloop

// defaultTurn is nil natively: there is no event loop to serve.
func defaultTurn() func() { return nil }
