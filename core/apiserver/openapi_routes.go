package apiserver

import (
	"net/http"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/apiserver/openapi"
)

// OpenAPI
//
// /openapi/v2 and /openapi/v3 describe every served resource (package
// openapi builds the documents from the Go types, on the first request).
// The v3 documents are per group version and carry their hash in the URL
// the root lists: asked with the current hash they may be cached forever;
// asked with an old one they redirect to the current one (upstream:
// k8s.io/kube-openapi/pkg/handler3).

// Media types of the OpenAPI documents in protobuf (gnostic's messages).
const (
	openAPIV2ProtoAccept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	openAPIV2ProtoType   = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// openAPIResources describes the registry's resources for package openapi.
func (s *Server) openAPIResources() []openapi.Resource {
	var out []openapi.Resource
	for _, st := range s.reg.Resources() {
		res := st.Resource
		r := openapi.Resource{
			Group: res.Group, Version: res.Version, Kind: res.Kind, Resource: res.Resource,
			Namespaced: res.Namespaced, Verbs: resourceVerbs, Object: res.New(), List: res.NewList(),
			Schema: res.OpenAPISchema,
		}
		for _, sub := range res.Subresources {
			info := subresourceInfo(res, sub)
			os := openapi.Subresource{Name: sub, Verbs: info.Verbs}
			switch sub {
			case "scale":
				os.Object, os.Group, os.Version, os.Kind = &autoscalingv1.Scale{}, "autoscaling", "v1", "Scale"
			case "binding":
				os.Object, os.Version, os.Kind = &corev1.Binding{}, "v1", "Binding"
			case "eviction":
				os.Object, os.Group, os.Version, os.Kind = &policyv1.Eviction{}, "policy", "v1", "Eviction"
			case "log":
				os.Object = corev1.PodLogOptions{}
			}
			r.Subresources = append(r.Subresources, os)
		}
		out = append(out, r)
	}
	for _, g := range reviewAPIs { // review.go: create only, no list
		for _, res := range g.resources {
			out = append(out, openapi.Resource{Group: g.gv.Group, Version: g.gv.Version, Kind: res.Kind, Resource: res.Name,
				Namespaced: res.Namespaced, Verbs: res.Verbs, Object: reviewObject(res.Kind)})
		}
	}
	return out
}

// openAPIV2 serves /openapi/v2: JSON, or protobuf when asked (client-go's
// OpenAPISchema asks only for protobuf).
func (s *Server) openAPIV2(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, r, methodNotAllowed())
		return
	}
	jsonData, pbData, hash, err := s.openapi.V2()
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	data, ctype := jsonData, "application/json"
	matched := strings.TrimSpace(r.Header.Get("Accept")) == ""
	// Not mime.ParseMediaType: "@" is no token character, yet clients send it.
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.TrimSpace(mt)
		if (mt == openAPIV2ProtoAccept || mt == openAPIV2ProtoType) && pbData != nil {
			data, ctype, matched = pbData, openAPIV2ProtoType, true
			break
		}
		if mt == "application/json" || mt == "application/*" || mt == "*/*" {
			matched = true
			break
		}
	}
	if !matched {
		accepted := []string{"application/json"}
		if pbData != nil {
			accepted = append(accepted, openAPIV2ProtoAccept)
		}
		writeError(w, r, notAcceptable{accepted})
		return
	}
	writeDocument(w, r, ctype, `"`+hash+`"`, "no-cache, private", data)
}

// openAPIV3 serves /openapi/v3 and /openapi/v3/<group version path>.
func (s *Server) openAPIV3(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, r, methodNotAllowed())
		return
	}
	if _, err := negotiate(r); err != nil {
		writeError(w, r, err)
		return
	}
	path := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
	if path == "" {
		urls, err := s.openapi.V3Paths()
		if err != nil {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		root := struct {
			Paths map[string]entry `json:"paths"`
		}{Paths: map[string]entry{}}
		for p, u := range urls {
			root.Paths[p] = entry{u}
		}
		data, _ := jsonMarshal(root)
		writeDocument(w, r, "application/json", "", "no-cache, private", data)
		return
	}
	data, hash, ok, err := s.openapi.V3(path)
	switch {
	case err != nil:
		writeError(w, r, apierrors.NewInternalError(err))
		return
	case !ok:
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	cache := "no-cache, private"
	if h := r.URL.Query().Get("hash"); h != "" {
		if h != hash {
			// An old hash: send the client to the current document.
			http.Redirect(w, r, "/openapi/v3/"+path+"?hash="+hash, http.StatusMovedPermanently)
			return
		}
		cache = "public, immutable"
	}
	writeDocument(w, r, "application/json", `"`+hash+`"`, cache, data)
}

// writeDocument answers with a document and its validators.
func writeDocument(w http.ResponseWriter, r *http.Request, ctype, etag, cache string, data []byte) {
	h := w.Header()
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", cache)
	if etag != "" {
		h.Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}
