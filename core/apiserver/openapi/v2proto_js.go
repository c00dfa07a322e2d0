//go:build js

package openapi

// v2Protobuf: the browser build serves the v2 document as JSON only (see
// v2proto.go).
func v2Protobuf([]byte) ([]byte, error) { return nil, nil }
