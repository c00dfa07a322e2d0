//go:build !js

package openapi

import (
	"fmt"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// v2Protobuf encodes the v2 document as gnostic's protobuf message, the form
// client-go's DiscoveryClient.OpenAPISchema asks for.
//
// Only the native build has it: gnostic's parser and the YAML library it
// reads with add about 430 KB (gzip) to the browser's wasm, and nothing in
// the browser asks for v2 in protobuf (the real kubectl v1.32 reads v3 for
// apply, diff, create and explain, and falls back to v2 only when v3 is
// missing). There the v2 document is served as JSON only.
func v2Protobuf(jsonData []byte) ([]byte, error) {
	doc, err := openapi_v2.ParseDocument(jsonData)
	if err != nil {
		return nil, fmt.Errorf("openapi: v2 document does not parse: %w", err)
	}
	return proto.Marshal(doc)
}
